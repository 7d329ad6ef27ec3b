-- Speaker names set by people (issue 7): `PUT /api/episodes/:id/speakers/:label` with a key whose account
-- has the `editor` (or `admin`) role. Rows are never changed or deleted: the newest row of an (episode,
-- label) is the decision in force, and every row is one item of the public feed
-- (`GET /api/episodes/changes`) that `builder sync` commits into the episode's names.json.
CREATE TABLE speaker_decisions (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  episode_id TEXT    NOT NULL,
  label      TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  note       TEXT,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  editor     TEXT    NOT NULL,
  at         TEXT    NOT NULL
);
CREATE INDEX speaker_decisions_by_label ON speaker_decisions (episode_id, label, seq);
