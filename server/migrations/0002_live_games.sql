-- Games in progress, so that a restart or a crash does not end them: each
-- game's seats and rules when it started, and its moves as they are accepted.
-- A game's rows go in the same transaction as its record.

CREATE TABLE live_games (
    room            TEXT    PRIMARY KEY,
    -- The id the game's record will have.
    game_id         TEXT    NOT NULL,
    size            INTEGER NOT NULL,
    win             INTEGER NOT NULL,
    -- Time per move in milliseconds; null when turns are not timed.
    turn_timeout_ms INTEGER,
    x_name          TEXT    NOT NULL,
    x_account       INTEGER,
    x_bot           INTEGER NOT NULL,
    -- SHA-256 of the seat's resume token.
    x_token         BLOB    NOT NULL,
    o_name          TEXT    NOT NULL,
    o_account       INTEGER,
    o_bot           INTEGER NOT NULL,
    o_token         BLOB    NOT NULL,
    -- What the player to move had left, saved at a graceful shutdown;
    -- null after a crash (the turn starts afresh).
    clock_left_ms   INTEGER,
    started_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- The moves, in chunks as the writer commits them: `cells` holds each move
-- as two little-endian u16 (row, col); `first` is the 0-based index of its
-- first move.
CREATE TABLE live_moves (
    room   TEXT    NOT NULL,
    first  INTEGER NOT NULL,
    cells  BLOB    NOT NULL,
    PRIMARY KEY (room, first)
) WITHOUT ROWID;
