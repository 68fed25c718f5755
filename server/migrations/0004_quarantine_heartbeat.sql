-- Saved rows the server could not read back (a bad value, a broken row):
-- set aside here, never deleted, so that one bad row never stops a start.
-- `what` names the table it came from, `key` its key there, `data` the row
-- as JSON, `reason` what was wrong with it.
CREATE TABLE quarantine (
    id      INTEGER PRIMARY KEY,
    what    TEXT    NOT NULL,
    key     TEXT,
    reason  TEXT    NOT NULL,
    data    TEXT    NOT NULL,
    at      INTEGER NOT NULL
);

-- One row the writer rewrites when it has nothing else to do: a store that
-- cannot write is noticed on an idle server too.
CREATE TABLE heartbeat (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    at  INTEGER NOT NULL
);
