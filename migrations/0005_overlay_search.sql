-- Overlay search (issue 12): what a search needs of each recipe written through the API and not yet
-- published by a build, kept so a search reads only the rows its words can match. Every write of a
-- recipe writes these in its own batch (one transaction), so they are never behind the recipe.

-- One row per recipe: the version these rows describe, the facets a listing filters on (`flags` as
-- bits in the order gf, vegan, vegetarian, dairy_free, nut_free; `total_min` = prep + cook) and the
-- search result card (`domain::recipes::search::Card` as JSON). A row whose version a build has published is
-- retired: ignored at once by every search, and the next sweep (`edge/src/overlay.rs`) sets `live` to
-- 0 and deletes its terms (the row stays, so the sweep knows that version needs nothing more).
CREATE TABLE overlay_search (
  slug      TEXT    PRIMARY KEY,
  version   INTEGER NOT NULL,
  live      INTEGER NOT NULL DEFAULT 1,
  flags     INTEGER NOT NULL,
  course    TEXT    NOT NULL,
  total_min INTEGER NOT NULL,
  card      TEXT    NOT NULL
);
CREATE INDEX overlay_search_live ON overlay_search (live, slug);

-- The postings: each term of each recipe version once, with the best field it occurs in (0 title,
-- 1 ingredient, 2 elsewhere). Terms of a recipe's older versions are deleted by the write after them.
CREATE TABLE overlay_terms (
  term    TEXT    NOT NULL,
  slug    TEXT    NOT NULL,
  version INTEGER NOT NULL,
  field   INTEGER NOT NULL,
  PRIMARY KEY (term, slug, version)
) WITHOUT ROWID;
CREATE INDEX overlay_terms_by_slug ON overlay_terms (slug, version);

-- Every term the overlay has held, numbered in the order they came, so an isolate keeps a copy and
-- reads only the terms added since it last looked; never deleted (a term no recipe holds any more
-- matches nothing).
CREATE TABLE overlay_dict (
  id   INTEGER PRIMARY KEY,
  term TEXT    NOT NULL UNIQUE
);

-- The build generation the last sweep started for: the isolate that moves it runs the sweep.
CREATE TABLE overlay_sweep (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  generation TEXT    NOT NULL
);
INSERT INTO overlay_sweep (id, generation) VALUES (1, '');
