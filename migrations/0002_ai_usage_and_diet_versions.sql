-- The site's AI (issue 4): the hourly AI quota per key, the claims that make each diet version once,
-- and the site's own account, which owns the diet versions.

-- Fixed one-hour windows of AI requests per key. Only requests that reach the model count: a failure
-- on our side or upstream is given back (`count - 1`).
CREATE TABLE ai_usage (
  key_id   INTEGER NOT NULL,
  window_s INTEGER NOT NULL,
  count    INTEGER NOT NULL,
  PRIMARY KEY (key_id, window_s)
);

-- One row per (source recipe, kind): whoever inserts it first is the one caller that asks the model;
-- everyone else reads the row and waits for `made`. A `failed` row, or a `making` row older than the
-- upstream timeout (its maker died), is taken over with a compare-and-set on `attempt`.
CREATE TABLE diet_versions (
  source_slug  TEXT    NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('gf', 'vegan', 'both')),
  state        TEXT    NOT NULL CHECK (state IN ('making', 'made', 'failed')),
  -- The version's slug once made (`<slug>-gf`, or `-2`… when a person's recipe has that slug).
  variant_slug TEXT,
  attempt      INTEGER NOT NULL DEFAULT 1,
  claimed_s    INTEGER NOT NULL,
  -- Why the last attempt failed, for the callers that waited on it.
  error        TEXT,
  PRIMARY KEY (source_slug, kind)
);

-- The site itself: owner of diet versions. No person can take this handle (`is_valid_handle`).
INSERT INTO accounts (handle, display_name, role, created_at)
VALUES ('commonplace', 'Commonplace', 'admin', '2025-01-01T00:00:00Z')
ON CONFLICT DO NOTHING;
