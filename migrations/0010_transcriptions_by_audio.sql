-- A transcription is of an episode's audio, not of the address it was asked by: one episode asked
-- for by two addresses (a share link and its page, or a journalist's page and the cron's feed item)
-- makes two jobs, and the second must not buy the audio again. `audio` is the normalised address
-- of what was transcribed; the second job waits for the first's transcription and ends with the
-- episode it made (`edge/src/intake/transcription.rs`). Rows from before have none, and stay apart.
ALTER TABLE intake_transcriptions ADD COLUMN audio TEXT;
CREATE UNIQUE INDEX intake_transcriptions_by_audio ON intake_transcriptions (audio);
