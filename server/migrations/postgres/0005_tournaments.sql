-- Arena tournaments: their terms (the clock as its two numbers, times in
-- Unix ms) and who joined each (`paused` after a `tournament_leave`: the
-- score stays, no pairing). The standings are never stored: they are the
-- scoring rule's fold of the records that name the tournament.
CREATE TABLE tournaments (
    id                 TEXT    PRIMARY KEY,
    name               TEXT    NOT NULL,
    -- The creating account's name, and its id when it is known.
    created_by         TEXT    NOT NULL,
    created_by_account BIGINT  REFERENCES accounts(id),
    size               INTEGER NOT NULL,
    win                INTEGER NOT NULL,
    initial_ms         BIGINT  NOT NULL,
    increment_ms       BIGINT  NOT NULL,
    duration_ms        BIGINT  NOT NULL,
    starts_at          BIGINT  NOT NULL,
    created_at         BIGINT  NOT NULL
);
CREATE INDEX tournaments_by_start ON tournaments (starts_at);

CREATE TABLE tournament_players (
    tournament TEXT    NOT NULL REFERENCES tournaments(id),
    account    BIGINT  NOT NULL REFERENCES accounts(id),
    name       TEXT    NOT NULL,
    paused     BOOLEAN NOT NULL DEFAULT false,
    -- When it first joined: the entrants' order.
    joined_at  BIGINT  NOT NULL,
    PRIMARY KEY (tournament, account)
);

-- A record's tournament (NULL for none) and which sides went berserk, as a
-- bit mask: 1 for player 1, 2 for player 2. A game in progress keeps both
-- too: the mask grows as a side goes berserk, in order with the moves.
ALTER TABLE games ADD COLUMN tournament TEXT;
ALTER TABLE games ADD COLUMN berserk INTEGER NOT NULL DEFAULT 0;
CREATE INDEX games_by_tournament ON games (tournament) WHERE tournament IS NOT NULL;
ALTER TABLE live_games ADD COLUMN tournament TEXT;
ALTER TABLE live_games ADD COLUMN berserk INTEGER NOT NULL DEFAULT 0;
