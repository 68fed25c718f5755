-- Who wrote each record: the instance that held the game as it ended. A
-- writer that tries a commit again (its answer was lost) finds its own
-- records kept and leaves them be; a record of the same game by anyone else
-- means another instance adopted the game while this one was cut off or
-- stalled, and this one's record (and its ratings) is refused. Records kept
-- before this column have none: nobody's.
ALTER TABLE games ADD COLUMN holder TEXT;
