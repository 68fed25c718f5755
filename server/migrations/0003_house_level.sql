-- The house bot's level in a saved game it plays ("random", "heuristic" or
-- "perfect"); null when both seats are players.

ALTER TABLE live_games ADD COLUMN house_level TEXT;
