-- The whole schema on Postgres, as SQLite's migrations 0001-0006 leave it
-- (the same tables, columns and rules), except for games in progress: here
-- each live game is a row with the lease on it (`owner`, `epoch`) and its
-- moves are appended in chunks keyed by (room, seq), so that one game can
-- be adopted by another instance without reading anyone else's.
-- Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE accounts (
    id            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          TEXT    NOT NULL,
    -- The name folded to lower case: names are unique ignoring case.
    name_key      TEXT    NOT NULL UNIQUE,
    -- The look-alike key (`text::look_alike_key`): two accounts whose names
    -- look alike cannot both exist.
    name_skeleton TEXT    UNIQUE,
    bot           BOOLEAN NOT NULL,
    -- SHA-256 of the token; the token itself is never stored.
    token_hash    BYTEA   NOT NULL UNIQUE,
    created_at    BIGINT  NOT NULL
);

CREATE TABLE games (
    -- Insertion order: newest first is by seq, and `before` cursors use it.
    seq         BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    room        TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    win         INTEGER NOT NULL,
    x_name      TEXT    NOT NULL,
    x_account   BIGINT  REFERENCES accounts(id),
    x_bot       BOOLEAN NOT NULL,
    o_name      TEXT    NOT NULL,
    o_account   BIGINT  REFERENCES accounts(id),
    o_bot       BOOLEAN NOT NULL,
    -- JSON: [[row, col], ...] and the line object or null.
    moves       TEXT    NOT NULL,
    winner      INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    line        TEXT,
    rated       BOOLEAN NOT NULL,
    x_before    DOUBLE PRECISION,
    x_after     DOUBLE PRECISION,
    o_before    DOUBLE PRECISION,
    o_after     DOUBLE PRECISION,
    started_at  BIGINT  NOT NULL,
    ended_at    BIGINT  NOT NULL
);
CREATE INDEX games_by_x ON games (x_account, seq) WHERE x_account IS NOT NULL;
CREATE INDEX games_by_o ON games (o_account, seq) WHERE o_account IS NOT NULL;

-- A commit that rates games locks their players' rows first (SELECT … FOR
-- UPDATE, in key order), checks that they still hold what its writer rated
-- from, and rates the games again from them if another writer moved them:
-- two games of one account that end at once, on one instance or two, are
-- applied one after the other. `games` only grows.
CREATE TABLE ratings (
    account     BIGINT  NOT NULL REFERENCES accounts(id),
    size        INTEGER NOT NULL,
    win         INTEGER NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    rd          DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    games       BIGINT  NOT NULL,
    PRIMARY KEY (account, size, win)
);
CREATE INDEX ratings_by_pool ON ratings (size, win, rating DESC);

-- Each hold on games in progress takes the next epoch: a start, and each
-- adoption of a dead or stopped instance's games. A writer's transactions
-- carry its instance's name and the newest epoch it took (the settings
-- `ttt.owner` and `ttt.epoch` on its session: a pooler in transaction mode
-- between them would lose them).
CREATE SEQUENCE live_epoch;

-- Games in progress: seats and rules when each started, and who holds it.
CREATE TABLE live_games (
    room            TEXT    PRIMARY KEY,
    -- The id the game's record will have.
    game_id         TEXT    NOT NULL,
    size            INTEGER NOT NULL,
    win             INTEGER NOT NULL,
    -- Time per move in milliseconds; null when turns are not timed.
    turn_timeout_ms BIGINT,
    x_name          TEXT    NOT NULL,
    x_account       BIGINT,
    x_bot           BOOLEAN NOT NULL,
    -- SHA-256 of the seat's resume token.
    x_token         BYTEA   NOT NULL,
    o_name          TEXT    NOT NULL,
    o_account       BIGINT,
    o_bot           BOOLEAN NOT NULL,
    o_token         BYTEA   NOT NULL,
    -- What the player to move had left, saved at a graceful shutdown;
    -- null after a crash (the turn starts afresh).
    clock_left_ms   BIGINT,
    started_at      BIGINT  NOT NULL,
    -- The house bot's level when it plays a seat ("random", "heuristic" or
    -- "perfect"); null when both seats are players.
    house_level     TEXT,
    -- The instance that holds the game, and the epoch of its hold.
    owner           TEXT    NOT NULL,
    epoch           BIGINT  NOT NULL
);

-- The moves, in chunks as the writer commits them: `cells` holds each move
-- as two little-endian u16 (row, col); `seq` is the 0-based index of its
-- first move. The writer deletes a game's chunks with it (no foreign key:
-- its checks would cost a lookup per chunk written and per game ended).
CREATE TABLE live_moves (
    room   TEXT    NOT NULL,
    seq    INTEGER NOT NULL,
    cells  BYTEA   NOT NULL,
    PRIMARY KEY (room, seq)
);

-- A write to a game in progress by anyone but its holder is refused here,
-- in the database, whatever the writer believes: the holder is the
-- instance named in `owner`, with an epoch no older than the row's. An
-- instance that was cut off while another adopted its games has an older
-- epoch, or another name: its updates, deletes, new moves and records of
-- those games are refused. Taking a game over (a start, an adoption, the
-- import of a spilled record) is an update that names this writer as the
-- owner with its epoch, newer than the game's, in a transaction that says it
-- takes games over (`SET LOCAL ttt.taking = 'on'`): no other write does. A transaction without the settings holds nothing. Each check runs
-- once per statement, over the rows it wrote, looking each up by an index
-- (a hash join would read every game in progress, each time).
CREATE INDEX live_games_by_owner ON live_games (owner);

CREATE FUNCTION ttt_epoch() RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT coalesce(nullif(current_setting('ttt.epoch', true), ''), '0')::BIGINT
$$;

CREATE FUNCTION ttt_owner() RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('ttt.owner', true), '')
$$;

-- Whether this transaction holds a game held by `owner` with `epoch`.
CREATE FUNCTION ttt_holds(owner TEXT, epoch BIGINT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT owner = ttt_owner() AND epoch <= ttt_epoch()
$$;

CREATE FUNCTION ttt_refuse(what TEXT, holder TEXT, held BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is held by % (epoch %), not by this writer (% epoch %)',
        what, holder, held, ttt_owner(), ttt_epoch()
        USING ERRCODE = 'TT001';
END $$;

-- Updating a game held by another, unless taking it over.
CREATE FUNCTION live_games_taken() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r TEXT;
    who TEXT;
    e BIGINT;
BEGIN
    SELECT b.room, b.owner, b.epoch INTO r, who, e FROM old_rows b JOIN new_rows a ON a.room = b.room
        WHERE NOT ttt_holds(b.owner, b.epoch)
          AND NOT (current_setting('ttt.taking', true) = 'on'
                   AND a.owner = ttt_owner() AND a.epoch = ttt_epoch() AND b.epoch < a.epoch)
        LIMIT 1;
    IF r IS NOT NULL THEN
        PERFORM ttt_refuse('the game in room ' || r, who, e);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER live_games_update_held AFTER UPDATE ON live_games
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION live_games_taken();

-- Deleting a game held by another.
CREATE FUNCTION live_games_held() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r TEXT;
    who TEXT;
    e BIGINT;
BEGIN
    SELECT room, owner, epoch INTO r, who, e FROM old_rows WHERE NOT ttt_holds(owner, epoch) LIMIT 1;
    IF r IS NOT NULL THEN
        PERFORM ttt_refuse('the game in room ' || r, who, e);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER live_games_delete_held AFTER DELETE ON live_games
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION live_games_held();

-- Moves written or deleted for a game held by another (the delete's
-- trigger names its old rows `new_rows` too: one function checks both).
CREATE FUNCTION live_moves_held() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r TEXT;
    who TEXT;
    e BIGINT;
BEGIN
    SELECT g.room, g.owner, g.epoch INTO r, who, e FROM new_rows n JOIN live_games g ON g.room = n.room
        WHERE NOT ttt_holds(g.owner, g.epoch) LIMIT 1;
    IF r IS NOT NULL THEN
        PERFORM ttt_refuse('the game in room ' || r, who, e);
    END IF;
    RETURN NULL;
END $$ SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
CREATE TRIGGER live_moves_held AFTER INSERT ON live_moves
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_moves_held();
-- A chunk written again is the same chunk (a commit whose answer was lost,
-- tried again): nothing changes. Different moves at the same place are
-- another writer's, refused unless it holds the game.
CREATE TRIGGER live_moves_update_held AFTER UPDATE ON live_moves
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_moves_held();
CREATE TRIGGER live_moves_delete_held AFTER DELETE ON live_moves
    REFERENCING OLD TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_moves_held();

-- The record of a game held by another.
CREATE INDEX live_games_by_id ON live_games (game_id);
CREATE FUNCTION games_held() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r TEXT;
    who TEXT;
    e BIGINT;
BEGIN
    SELECT n.id, g.owner, g.epoch INTO r, who, e FROM new_rows n JOIN live_games g ON g.game_id = n.id
        WHERE NOT ttt_holds(g.owner, g.epoch) LIMIT 1;
    IF r IS NOT NULL THEN
        PERFORM ttt_refuse('game ' || r, who, e);
    END IF;
    RETURN NULL;
END $$ SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
CREATE TRIGGER games_held AFTER INSERT ON games
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION games_held();

-- The instances of a cluster (`--redis`), each with the last time it said
-- it is alive (the database's clock: the instances' clocks may differ).
-- An instance whose row is gone (it stopped) or old (it died) holds
-- nothing: a live instance adopts its games.
CREATE TABLE instances (
    name      TEXT        PRIMARY KEY,
    epoch     BIGINT      NOT NULL,
    beat_at   TIMESTAMPTZ NOT NULL
);

-- Saved rows the server could not read back: set aside here, never
-- deleted. `what` names the table it came from, `key` its key there,
-- `data` the row as JSON, `reason` what was wrong with it.
CREATE TABLE quarantine (
    id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    what    TEXT   NOT NULL,
    key     TEXT,
    reason  TEXT   NOT NULL,
    data    TEXT   NOT NULL,
    at      BIGINT NOT NULL
);

-- One row the writer rewrites when it has nothing else to do: a store that
-- cannot write is noticed on an idle server too.
CREATE TABLE heartbeat (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    at  BIGINT  NOT NULL
);
