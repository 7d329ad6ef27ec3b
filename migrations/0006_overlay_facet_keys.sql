-- The overlay search's filters said once (issue 13): each recipe's facet keys as one text, each key
-- between spaces (` gf course:main lang:en `, `domain::recipes::search::overlay::Entry::facets`), so a listing
-- tests one generic condition per key its filters name and no statement knows one filter from
-- another; and the version of the rules that made them (`domain::recipes::search::FACETS_VERSION`). A live row
-- of another version (0: written before this migration) is indexed again by the next sweep.
-- `flags` and `course` are no longer read; they stay, because migrations run before the new Worker
-- is deployed and the Worker before it still writes them.
ALTER TABLE overlay_search ADD COLUMN facets TEXT NOT NULL DEFAULT '';
ALTER TABLE overlay_search ADD COLUMN facets_version INTEGER NOT NULL DEFAULT 0;
