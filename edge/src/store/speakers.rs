//! Speaker names set by editors: the rows of `speaker_decisions`
//! (`migrations/0003_speaker_decisions.sql`), each one decision; the newest of a label is in force.
//! Also the id of this database's feed (`feed_identity`: `migrations/0011_feed_identity.sql`).

use domain::quotes::transcript::names::SpeakerChange;
use serde::Deserialize;
use worker::D1Database;

use super::{Arg, all, first};
use crate::error::ApiError;

#[derive(Debug, Deserialize)]
struct DecisionRow {
    seq: u64,
    episode_id: String,
    label: String,
    name: String,
    note: Option<String>,
    editor: String,
    at: String,
}

impl DecisionRow {
    fn change(self) -> SpeakerChange {
        SpeakerChange {
            seq: self.seq,
            episode: self.episode_id,
            label: self.label,
            name: self.name,
            note: self.note,
            editor: self.editor,
            at: self.at,
        }
    }
}

/// An episode that has a decision, as the feed names it.
#[derive(Debug, Deserialize)]
pub struct DecidedRow {
    pub seq: u64,
    pub episode_id: String,
}

/// The decisions in force for the episodes `ids`: the newest row of each of their labels, when it is
/// after `after` (the build holds the ones up to it).
pub async fn decisions_in_force(
    db: &D1Database,
    ids: &[&str],
    after: u64,
) -> Result<Vec<SpeakerChange>, ApiError> {
    let ids_json = serde_json::to_string(&ids).map_err(|err| ApiError::Internal(err.to_string()))?;
    let rows: Vec<DecisionRow> = all(
        db,
        "SELECT seq, episode_id, label, name, note, editor, at FROM speaker_decisions d \
         WHERE episode_id IN (SELECT value FROM json_each(?1)) AND seq > ?2 \
         AND seq = (SELECT MAX(seq) FROM speaker_decisions \
                    WHERE episode_id = d.episode_id AND label = d.label)",
        &[Arg::Text(&ids_json), Arg::Int(after as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(DecisionRow::change).collect())
}

/// The id of this database's feed (`migrations/0011_feed_identity.sql`).
pub async fn feed_id(db: &D1Database) -> Result<String, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
    }
    let row: Option<Row> = first(db, "SELECT id FROM feed_identity", &[]).await?;
    row.map(|row| row.id).ok_or_else(|| ApiError::Internal("feed_identity has no row".into()))
}

/// Every decision after `since`, oldest first, at most `limit`: the public feed.
pub async fn decisions_since(
    db: &D1Database,
    since: u64,
    limit: u32,
) -> Result<Vec<SpeakerChange>, ApiError> {
    let rows: Vec<DecisionRow> = all(
        db,
        "SELECT seq, episode_id, label, name, note, editor, at FROM speaker_decisions \
         WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        &[Arg::Int(since as i64), Arg::Int(i64::from(limit))],
    )
    .await?;
    Ok(rows.into_iter().map(DecisionRow::change).collect())
}

/// An editor's decision of the name behind a speaker label.
pub struct NewDecision<'a> {
    pub episode_id: &'a str,
    pub label: &'a str,
    pub name: &'a str,
    pub note: Option<&'a str>,
    pub account_id: i64,
    pub editor: &'a str,
    pub at: &'a str,
}

/// Stores a decision; returns its place in the feed.
pub async fn add_decision(db: &D1Database, decision: NewDecision<'_>) -> Result<u64, ApiError> {
    #[derive(Deserialize)]
    struct Seq {
        seq: u64,
    }
    let row: Option<Seq> = first(
        db,
        "INSERT INTO speaker_decisions (episode_id, label, name, note, account_id, editor, at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING seq",
        &[
            Arg::Text(decision.episode_id),
            Arg::Text(decision.label),
            Arg::Text(decision.name),
            decision.note.map_or(Arg::Null, Arg::Text),
            Arg::Int(decision.account_id),
            Arg::Text(decision.editor),
            Arg::Text(decision.at),
        ],
    )
    .await?;
    row.map(|row| row.seq).ok_or_else(|| ApiError::Internal("the decision was not stored".into()))
}
