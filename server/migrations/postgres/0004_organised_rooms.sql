-- Organised rooms: how many of a game's moves are its room's opening (0 for
-- none), and, in a record, the organiser's name (NULL when the room had no
-- host). Such games are unrated.
ALTER TABLE games ADD COLUMN opening INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN host TEXT;
ALTER TABLE live_games ADD COLUMN opening INTEGER NOT NULL DEFAULT 0;
