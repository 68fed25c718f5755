-- Fischer clocks. A game's time control, as JSON `{"initial_ms": N,
-- "increment_ms": M}`, and the mover's time left in ms after each move, as
-- JSON `[ms, ...]` like `moves`; both NULL for a game on the per-move
-- timer (every game before time controls). Games in progress keep theirs
-- in the journal (`live_log`).
ALTER TABLE games ADD COLUMN clock TEXT;
ALTER TABLE games ADD COLUMN times TEXT;
