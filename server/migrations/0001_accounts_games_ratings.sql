-- Accounts, finished games and per-pool ratings. Times are milliseconds
-- since the Unix epoch (UTC).

CREATE TABLE accounts (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    -- The name folded to lower case: names are unique ignoring case.
    name_key    TEXT    NOT NULL UNIQUE,
    bot         INTEGER NOT NULL,
    -- SHA-256 of the token; the token itself is never stored.
    token_hash  BLOB    NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

CREATE TABLE games (
    -- Insertion order: newest first is by seq, and `before` cursors use it.
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    room        TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    win         INTEGER NOT NULL,
    x_name      TEXT    NOT NULL,
    x_account   INTEGER REFERENCES accounts(id),
    x_bot       INTEGER NOT NULL,
    o_name      TEXT    NOT NULL,
    o_account   INTEGER REFERENCES accounts(id),
    o_bot       INTEGER NOT NULL,
    -- JSON: [[row, col], ...] and the line object or null.
    moves       TEXT    NOT NULL,
    winner      INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    line        TEXT,
    rated       INTEGER NOT NULL,
    x_before    REAL,
    x_after     REAL,
    o_before    REAL,
    o_after     REAL,
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER NOT NULL
);
CREATE INDEX games_by_x ON games (x_account, seq) WHERE x_account IS NOT NULL;
CREATE INDEX games_by_o ON games (o_account, seq) WHERE o_account IS NOT NULL;

CREATE TABLE ratings (
    account     INTEGER NOT NULL REFERENCES accounts(id),
    size        INTEGER NOT NULL,
    win         INTEGER NOT NULL,
    rating      REAL    NOT NULL,
    rd          REAL    NOT NULL,
    volatility  REAL    NOT NULL,
    games       INTEGER NOT NULL,
    PRIMARY KEY (account, size, win)
);
CREATE INDEX ratings_by_pool ON ratings (size, win, rating DESC);
