-- Which database a position in the speaker-decision feed belongs to: one random id, made when the
-- database is. `builder sync` records it beside the last decision it committed, the build publishes
-- both (`episodes/decisions.json`), and the Worker takes a build's position as its own only when the
-- id is its database's: a content repo synced from one site, built for another (a local run, a
-- staging site, a fork), lays every decision of that other site's database over it.
CREATE TABLE feed_identity (id TEXT PRIMARY KEY NOT NULL);
INSERT INTO feed_identity (id) VALUES (lower(hex(randomblob(16))));
