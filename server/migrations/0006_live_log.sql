-- Games in progress as a journal: each commit appends one row holding all
-- of its changes (games started, moves, clocks, games ended), encoded by
-- the server (`store/sqlite/journal.rs`); replaying the rows in order gives
-- the games in progress. A row of kind "snapshot" holds all of them and
-- replaces the rows before it. The server reads the old tables
-- (live_games, live_moves) once, into the journal, and drops them.
CREATE TABLE live_log (
    seq   INTEGER PRIMARY KEY,
    data  BLOB    NOT NULL
);
