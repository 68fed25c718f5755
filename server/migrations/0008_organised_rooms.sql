-- Organised rooms: how many of a record's moves are its room's opening
-- (0 for none), and the organiser's name (NULL when the players' room had
-- no host). Such games are unrated. Games in progress keep their opening's
-- count in the journal (`live_log`).
ALTER TABLE games ADD COLUMN opening INTEGER NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN host TEXT;
