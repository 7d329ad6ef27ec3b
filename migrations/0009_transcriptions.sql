-- The transcriptions the intake bought (`edge/src/intake.rs`, `domain::quotes::intake::transcribe`):
-- one per job at most, so an episode is never charged twice however often its job runs. The row is
-- the charge: `seconds` of audio on `day` (UTC) against the site's and the asking account's daily
-- budgets, inserted only while both have room; a submission the service refused gives its seconds
-- back. `token_hash` is the SHA-256 of the token the service's callback must carry.
CREATE TABLE intake_transcriptions (
  job_id       TEXT    PRIMARY KEY REFERENCES intake_jobs (id),
  service      TEXT    NOT NULL,
  remote_id    TEXT,
  token_hash   TEXT    NOT NULL,
  state        TEXT    NOT NULL CHECK (state IN ('charged', 'submitted', 'completed', 'failed')),
  reason       TEXT,
  -- When the service's callback came (a second one changes nothing).
  notified_at  TEXT,
  account_id   INTEGER NOT NULL REFERENCES accounts (id),
  day          TEXT    NOT NULL,
  seconds      INTEGER NOT NULL,
  created_at   TEXT    NOT NULL,
  updated_at   TEXT    NOT NULL
);

CREATE INDEX intake_transcriptions_by_day ON intake_transcriptions (day, account_id);

-- A followed feed's item is known by its `guid`, then by its audio, before its address: a publisher
-- that moves its pages or its audio keeps its guids, and a moved item is not taken in twice.
ALTER TABLE intake_jobs ADD COLUMN guid TEXT;
ALTER TABLE intake_jobs ADD COLUMN audio_url TEXT;
CREATE INDEX intake_jobs_by_feed ON intake_jobs (feed_url);
