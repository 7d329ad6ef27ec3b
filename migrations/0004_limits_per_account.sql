-- Limits per person and pages by bytes (issue 12).
--
-- Migrations run before the new Worker is deployed, so for a moment the old Worker runs on this schema:
-- this migration only adds. `rate_limits` and `ai_usage` (counts per key) are no longer written; a later
-- migration may drop them.

-- Fixed-window counts of every limit (`domain::site::limits`): `policy` is `writes`, `ai`, `sign-ins` or
-- `new-keys`; `subject` is `account:<id>` or `ip:<address bucket>`; `window_s` is the window's start.
-- Each count deletes the counters whose window ended more than an hour ago, so the table holds the last
-- hour's counters and those spent since the last count.
CREATE TABLE limit_counts (
  policy   TEXT    NOT NULL,
  subject  TEXT    NOT NULL,
  window_s INTEGER NOT NULL,
  count    INTEGER NOT NULL,
  PRIMARY KEY (policy, subject, window_s)
) WITHOUT ROWID;
CREATE INDEX limit_counts_by_window ON limit_counts (window_s);

-- An account holds at most 20 live keys: the insert of a key counts them in the same statement.
CREATE INDEX api_keys_live_by_account ON api_keys (account_id) WHERE revoked_at IS NULL;

-- The bytes of each feed item's large fields (document and note), a lower bound of its serialized size,
-- so a page of the feed is cut at 1 MiB (`domain::paging`) without reading the documents it will not
-- hold. A table of its own rather than a column of `changes`: a column there sits after the document in
-- each row, and SQLite would read the document's pages to reach it. The trigger fills it in the
-- transaction of the feed item's own insert, so it is never missing or stale.
CREATE TABLE change_bytes (
  seq   INTEGER PRIMARY KEY REFERENCES changes (seq),
  bytes INTEGER NOT NULL
);
INSERT INTO change_bytes (seq, bytes)
SELECT seq, length(CAST(doc AS BLOB)) + length(CAST(note AS BLOB)) FROM changes;
CREATE TRIGGER changes_count_bytes AFTER INSERT ON changes
BEGIN
  INSERT INTO change_bytes (seq, bytes)
  VALUES (NEW.seq, length(CAST(NEW.doc AS BLOB)) + length(CAST(NEW.note AS BLOB)));
END;
