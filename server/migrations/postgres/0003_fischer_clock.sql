-- Fischer clocks. A game's time control, as JSON `{"initial_ms": N,
-- "increment_ms": M}`, and the mover's time left in ms after each move: in
-- a record as JSON `[ms, ...]` like `moves`; in a chunk of live moves as
-- one little-endian u64 per move of `cells`. NULL for a game on the
-- per-move timer (every game before time controls).
ALTER TABLE games ADD COLUMN clock TEXT;
ALTER TABLE games ADD COLUMN times TEXT;
ALTER TABLE live_games ADD COLUMN clock TEXT;
ALTER TABLE live_moves ADD COLUMN times BYTEA;
