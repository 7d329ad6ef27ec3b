-- Accounts, API keys, kitchen sessions, the recipe overlay, the public change feed and write limits.
-- Times are ISO 8601 UTC text; `*_s` columns are seconds since the epoch (for expiry and windows).

-- A person who signs in. `handle` is the public name recipes are owned by and git commits are authored
-- by: unique and never changed. `role` `editor` may set speaker names (the quote service).
CREATE TABLE accounts (
  id           INTEGER PRIMARY KEY,
  handle       TEXT    NOT NULL UNIQUE,
  display_name TEXT    NOT NULL,
  role         TEXT    NOT NULL DEFAULT 'cook' CHECK (role IN ('cook', 'editor', 'admin')),
  github_id    INTEGER UNIQUE,
  created_at   TEXT    NOT NULL
);

-- Only the SHA-256 of a key is kept; the key itself is shown once, when it is made.
CREATE TABLE api_keys (
  id         INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  key_hash   TEXT    NOT NULL UNIQUE,
  -- The first characters of the key, so a person can tell their keys apart in a list.
  key_prefix TEXT    NOT NULL,
  label      TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_by_account ON api_keys (account_id);

-- Kitchen sign-ins. The cookie holds a random token; only its hash is stored. `csrf` is the token every
-- form of this session must carry.
CREATE TABLE sessions (
  token_hash TEXT    PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  csrf       TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  expires_s  INTEGER NOT NULL
);

-- The overlay: the newest API-written state of a recipe, read at once by the public routes. A row
-- retires (is ignored) once a build has published the same or a newer version. The primary key on
-- `slug` is what makes slugs unique across concurrent creates and forks; rows are never deleted, so a
-- slug is never reused.
CREATE TABLE recipes (
  slug        TEXT    PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts (id),
  owner       TEXT    NOT NULL,
  version     INTEGER NOT NULL,
  forked_from TEXT,
  -- The published document (`domain::recipes::recipe::Published` as JSON), server fields included.
  doc         TEXT    NOT NULL,
  created_at  TEXT    NOT NULL,
  updated_at  TEXT    NOT NULL
);
CREATE INDEX recipes_by_account ON recipes (account_id);

-- The public change feed, in order. `builder sync` turns each row into one git commit.
CREATE TABLE changes (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  slug    TEXT    NOT NULL,
  version INTEGER NOT NULL,
  kind    TEXT    NOT NULL CHECK (kind IN ('create', 'change', 'fork')),
  owner   TEXT    NOT NULL,
  note    TEXT    NOT NULL,
  doc     TEXT    NOT NULL,
  at      TEXT    NOT NULL,
  UNIQUE (slug, version)
);

-- Fixed one-minute windows of write counts per key.
CREATE TABLE rate_limits (
  key_id   INTEGER NOT NULL,
  window_s INTEGER NOT NULL,
  count    INTEGER NOT NULL,
  PRIMARY KEY (key_id, window_s)
);
