-- Arena tournaments: their terms (the clock as its two numbers, times in
-- Unix ms) and who joined each (`paused` after a `tournament_leave`: the
-- score stays, no pairing). The standings are never stored: they are the
-- scoring rule's fold of the records that name the tournament.
CREATE TABLE tournaments (
    id                 TEXT    PRIMARY KEY,
    name               TEXT    NOT NULL,
    -- The creating account's name, and its id when it is known.
    created_by         TEXT    NOT NULL,
    created_by_account INTEGER REFERENCES accounts(id),
    size               INTEGER NOT NULL,
    win                INTEGER NOT NULL,
    initial_ms         INTEGER NOT NULL,
    increment_ms       INTEGER NOT NULL,
    duration_ms        INTEGER NOT NULL,
    starts_at          INTEGER NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX tournaments_by_start ON tournaments (starts_at);

CREATE TABLE tournament_players (
    tournament TEXT    NOT NULL REFERENCES tournaments(id),
    account    INTEGER NOT NULL REFERENCES accounts(id),
    name       TEXT    NOT NULL,
    paused     INTEGER NOT NULL DEFAULT 0,
    -- When it first joined: the entrants' order.
    joined_at  INTEGER NOT NULL,
    PRIMARY KEY (tournament, account)
);

-- A record's tournament (NULL for none) and which sides went berserk, as a
-- bit mask: 1 for player 1, 2 for player 2. Games in progress keep both in
-- the journal (`live_log`).
ALTER TABLE games ADD COLUMN tournament TEXT;
ALTER TABLE games ADD COLUMN berserk INTEGER NOT NULL DEFAULT 0;
CREATE INDEX games_by_tournament ON games (tournament) WHERE tournament IS NOT NULL;
