-- Each account's look-alike key (`text::look_alike_key`: the name's
-- confusable skeleton, Unicode TS 39, folded to lower case): two accounts
-- whose names look alike cannot both exist. Accounts made before this
-- column are given theirs by the server when it opens the file; of older
-- accounts that already look alike, the first keeps the key and the others
-- keep NULL (their names stay theirs, by name_key).
ALTER TABLE accounts ADD COLUMN name_skeleton TEXT;
CREATE UNIQUE INDEX accounts_name_skeleton ON accounts (name_skeleton);
