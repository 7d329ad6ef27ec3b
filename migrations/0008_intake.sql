-- Episodes taken in by their address (`POST /api/episodes`, `edge/src/intake.rs`): one job per
-- normalised address, however often and by whomever it is asked; the queue consumer moves it along
-- `queued → fetching → (transcribing →) identifying → ready | failed`. A job that is ready names the
-- episode it made, which may be addressed otherwise (asked by its page, known by its audio), so the
-- job is also how an address the journalist gave finds its episode.
CREATE TABLE intake_jobs (
  id             TEXT    PRIMARY KEY,
  source_url     TEXT    NOT NULL,
  normalised_url TEXT    NOT NULL UNIQUE,
  state          TEXT    NOT NULL CHECK (state IN ('queued', 'fetching', 'transcribing', 'identifying', 'ready', 'failed')),
  reason         TEXT,
  account_id     INTEGER NOT NULL REFERENCES accounts (id),
  episode_id     TEXT,
  -- A job the cron made from a followed feed: the show's folder and its feed, looked in first.
  show           TEXT,
  feed_url       TEXT,
  created_at     TEXT    NOT NULL,
  updated_at     TEXT    NOT NULL
);

-- Feeds the site follows (`show.json`'s `feed_url`): the validators of the last answer, so the next
-- read is a conditional GET (`If-None-Match`, `If-Modified-Since`) that a feed without news answers
-- with 304.
CREATE TABLE followed_feeds (
  url           TEXT PRIMARY KEY,
  etag          TEXT,
  last_modified TEXT,
  checked_at    TEXT NOT NULL
);

-- Episodes the intake published, until a build publishes them from git (`builder sync` commits
-- them): their files are in the INTAKE bucket under `episodes/<id>…`, as the build lays them out,
-- beside `episodes/<id>/content.json`, the content files `builder sync` writes (show.json,
-- episode.json, names.json, runs). `summary` is the episode's line in `GET /api/episodes`; `seq`
-- orders the public feed of these episodes (`GET /api/intake/episodes`) that `builder sync` commits.
CREATE TABLE intake_episodes (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT    NOT NULL UNIQUE,
  show           TEXT    NOT NULL,
  normalised_url TEXT    NOT NULL UNIQUE,
  summary        TEXT    NOT NULL,
  job_id         TEXT    NOT NULL REFERENCES intake_jobs (id),
  created_at     TEXT    NOT NULL
);
