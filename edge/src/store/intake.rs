//! Episodes taken in by their address: the jobs of `intake_jobs`, the episodes of `intake_episodes`
//! and the feeds the cron follows (`followed_feeds`: `migrations/0008_intake.sql`), and the
//! transcriptions bought for them (`intake_transcriptions`: `0009_…`, `0010_…`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use worker::D1Database;

use super::{Arg, all, batch, first, run, stmt};
use crate::error::ApiError;

/// One job, as `GET /api/intake/{id}` shows it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct JobRow {
    pub id: String,
    pub source_url: String,
    pub normalised_url: String,
    pub state: String,
    pub reason: Option<String>,
    pub episode_id: Option<String>,
    /// The show's folder and feed, for a job the cron made from a followed feed.
    pub show: Option<String>,
    pub feed_url: Option<String>,
    /// Who asked for it (the site's own account for a followed feed's item).
    pub account_id: i64,
    pub created_at: String,
    pub updated_at: String,
}

const JOB_COLUMNS: &str = "id, source_url, normalised_url, state, reason, episode_id, show, feed_url, \
                           account_id, created_at, updated_at";

/// A new job asked by `account_id`: `true` when this call made it, `false` when the address has
/// one already (asked before, or at the same moment by someone else).
pub async fn add_job(
    db: &D1Database,
    id: &str,
    source_url: &str,
    normalised_url: &str,
    account_id: i64,
    now: &str,
) -> Result<bool, ApiError> {
    let made = run(
        db,
        "INSERT INTO intake_jobs (id, source_url, normalised_url, state, account_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 'queued', ?4, ?5, ?5) ON CONFLICT DO NOTHING",
        &[
            Arg::Text(id),
            Arg::Text(source_url),
            Arg::Text(normalised_url),
            Arg::Int(account_id),
            Arg::Text(now),
        ],
    )
    .await?;
    Ok(made == 1)
}

pub async fn job(db: &D1Database, id: &str) -> Result<Option<JobRow>, ApiError> {
    row_where(db, JOB_COLUMNS, "intake_jobs", "id", id).await
}

pub async fn job_by_address(db: &D1Database, normalised_url: &str) -> Result<Option<JobRow>, ApiError> {
    row_where(db, JOB_COLUMNS, "intake_jobs", "normalised_url", normalised_url).await
}

/// The `columns` of the one row of `table` whose `column` holds `value`: a job or a transcription
/// looked up by its id or by its address, each of which a unique index keeps to one row.
async fn row_where<T: DeserializeOwned>(
    db: &D1Database,
    columns: &str,
    table: &str,
    column: &str,
    value: &str,
) -> Result<Option<T>, ApiError> {
    first(db, &format!("SELECT {columns} FROM {table} WHERE {column} = ?1"), &[Arg::Text(value)]).await
}

/// Moves a job that is not finished to `state`; `false` when it had finished (ready or failed),
/// so a second delivery of its message changes nothing.
pub async fn move_job(
    db: &D1Database,
    id: &str,
    state: &str,
    reason: Option<&str>,
    now: &str,
) -> Result<bool, ApiError> {
    let reason = reason.map_or(Arg::Null, Arg::Text);
    let moved = run(
        db,
        "UPDATE intake_jobs SET state = ?2, reason = ?3, updated_at = ?4 \
         WHERE id = ?1 AND state NOT IN ('ready', 'failed')",
        &[Arg::Text(id), Arg::Text(state), reason, Arg::Text(now)],
    )
    .await?;
    Ok(moved == 1)
}

/// Queues a job again when it failed, or when it has not moved since `stalled_before` (its message
/// was lost): `true` when this call did.
pub async fn retry_job(db: &D1Database, id: &str, now: &str, stalled_before: &str) -> Result<bool, ApiError> {
    let moved = run(
        db,
        "UPDATE intake_jobs SET state = 'queued', reason = NULL, updated_at = ?2 WHERE id = ?1 \
         AND (state = 'failed' OR (state <> 'ready' AND updated_at < ?3))",
        &[Arg::Text(id), Arg::Text(now), Arg::Text(stalled_before)],
    )
    .await?;
    Ok(moved == 1)
}

/// An episode the intake published, as `intake_episodes` keeps it.
pub struct NewEpisode<'a> {
    pub id: &'a str,
    pub show: &'a str,
    pub normalised_url: &'a str,
    pub summary: &'a str,
    pub job_id: &'a str,
    pub now: &'a str,
}

/// Records the episode and makes its job `ready`, in one transaction; an episode another job made
/// first (the same episode asked by its page and by its audio) is kept as it was.
pub async fn finish_with_episode(db: &D1Database, episode: NewEpisode<'_>) -> Result<(), ApiError> {
    let NewEpisode { id, show, normalised_url, summary, job_id, now } = episode;
    let statements = vec![
        stmt(
            db,
            "INSERT INTO intake_episodes (id, show, normalised_url, summary, job_id, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            &[
                Arg::Text(id),
                Arg::Text(show),
                Arg::Text(normalised_url),
                Arg::Text(summary),
                Arg::Text(job_id),
                Arg::Text(now),
            ],
        )?,
        stmt(db, READY, &[Arg::Text(job_id), Arg::Text(id), Arg::Text(now)])?,
    ];
    batch(db, statements).await?;
    Ok(())
}

/// Ends the job `job_id` `ready` with an episode another job published (the same audio, asked for by
/// another address).
pub async fn ready_with(db: &D1Database, job_id: &str, episode_id: &str, now: &str) -> Result<(), ApiError> {
    run(db, READY, &[Arg::Text(job_id), Arg::Text(episode_id), Arg::Text(now)]).await?;
    Ok(())
}

const READY: &str =
    "UPDATE intake_jobs SET state = 'ready', reason = NULL, episode_id = ?2, updated_at = ?3 WHERE id = ?1";

/// Whether the intake published the episode `id`.
pub async fn has_episode(db: &D1Database, id: &str) -> Result<bool, ApiError> {
    #[derive(Deserialize)]
    struct Found {
        #[allow(dead_code)]
        id: String,
    }
    Ok(first::<Found>(db, "SELECT id FROM intake_episodes WHERE id = ?1", &[Arg::Text(id)]).await?.is_some())
}

/// An episode of the public feed of episodes the intake published.
#[derive(Debug, Deserialize)]
pub struct TakenInRow {
    pub seq: u64,
    pub id: String,
    pub created_at: String,
    /// The handle of the account that asked for it.
    pub handle: String,
}

/// The episodes the intake published after `since`, oldest first, at most `limit`.
pub async fn taken_in_since(db: &D1Database, since: u64, limit: u32) -> Result<Vec<TakenInRow>, ApiError> {
    all(
        db,
        "SELECT e.seq, e.id, e.created_at, a.handle FROM intake_episodes e \
         JOIN intake_jobs j ON j.id = e.job_id JOIN accounts a ON a.id = j.account_id \
         WHERE e.seq > ?1 ORDER BY e.seq LIMIT ?2",
        &[Arg::Int(since as i64), Arg::Int(i64::from(limit))],
    )
    .await
}

/// A job the cron makes for a new item of a followed feed.
pub struct FeedJob<'a> {
    pub id: String,
    pub source_url: String,
    pub normalised_url: String,
    pub show: &'a str,
    pub feed_url: &'a str,
    pub guid: Option<String>,
    pub audio: Option<String>,
}

/// The `guid`s and normalised audio addresses of the items of the followed feed `feed_url` that have
/// jobs.
pub async fn feed_item_keys(
    db: &D1Database,
    feed_url: &str,
) -> Result<(std::collections::HashSet<String>, std::collections::HashSet<String>), ApiError> {
    #[derive(Deserialize)]
    struct Keys {
        guid: Option<String>,
        audio_url: Option<String>,
    }
    let sql = "SELECT guid, audio_url FROM intake_jobs WHERE feed_url = ?1";
    let rows: Vec<Keys> = all(db, sql, &[Arg::Text(feed_url)]).await?;
    let guids = rows.iter().filter_map(|row| row.guid.clone()).collect();
    let audio = rows.into_iter().filter_map(|row| row.audio_url).collect();
    Ok((guids, audio))
}

/// Makes the jobs of a followed feed's items in one transaction, each unless its address has one
/// already; answers the ids of those made.
pub async fn add_feed_jobs(
    db: &D1Database,
    jobs: &[FeedJob<'_>],
    account_id: i64,
    now: &str,
) -> Result<Vec<String>, ApiError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut statements = Vec::with_capacity(jobs.len());
    for job in jobs {
        statements.push(stmt(
            db,
            "INSERT INTO intake_jobs (id, source_url, normalised_url, state, account_id, show, feed_url, \
             guid, audio_url, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'queued', ?4, ?5, ?6, ?8, ?9, ?7, ?7) ON CONFLICT DO NOTHING",
            &[
                Arg::Text(&job.id),
                Arg::Text(&job.source_url),
                Arg::Text(&job.normalised_url),
                Arg::Int(account_id),
                Arg::Text(job.show),
                Arg::Text(job.feed_url),
                Arg::Text(now),
                optional(job.guid.as_deref()),
                optional(job.audio.as_deref()),
            ],
        )?);
    }
    let changed = batch(db, statements).await?;
    Ok(jobs.iter().zip(changed).filter(|(_, n)| *n == 1).map(|(job, _)| job.id.clone()).collect())
}

/// The validators of a followed feed's last answer.
#[derive(Debug, Default, Deserialize)]
pub struct FeedValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

pub async fn feed_validators(db: &D1Database, url: &str) -> Result<FeedValidators, ApiError> {
    let sql = "SELECT etag, last_modified FROM followed_feeds WHERE url = ?1";
    Ok(first(db, sql, &[Arg::Text(url)]).await?.unwrap_or_default())
}

/// Records a followed feed's read: its new validators, or (`None`, after a 304) the ones it had.
pub async fn feed_checked(
    db: &D1Database,
    url: &str,
    validators: Option<&FeedValidators>,
    now: &str,
) -> Result<(), ApiError> {
    match validators {
        Some(new) => {
            run(
                db,
                "INSERT INTO followed_feeds (url, etag, last_modified, checked_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (url) DO UPDATE SET etag = ?2, last_modified = ?3, checked_at = ?4",
                &[
                    Arg::Text(url),
                    optional(new.etag.as_deref()),
                    optional(new.last_modified.as_deref()),
                    Arg::Text(now),
                ],
            )
            .await?
        }
        None => {
            let sql = "UPDATE followed_feeds SET checked_at = ?2 WHERE url = ?1";
            run(db, sql, &[Arg::Text(url), Arg::Text(now)]).await?
        }
    };
    Ok(())
}

fn optional(text: Option<&str>) -> Arg<'_> {
    text.map_or(Arg::Null, Arg::Text)
}

/// A transcription, as `intake_transcriptions` keeps it (`migrations/0009_transcriptions.sql`,
/// `0010_transcriptions_by_audio.sql`).
#[derive(Debug, Clone, Deserialize)]
pub struct TranscriptionRow {
    /// The job that bought it.
    pub job_id: String,
    pub service: String,
    pub remote_id: Option<String>,
    pub token_hash: String,
    /// `charged`, `submitted`, `completed` or `failed`.
    pub state: String,
    pub reason: Option<String>,
    /// The seconds charged.
    pub seconds: i64,
    pub created_at: String,
}

const TRANSCRIPTION_COLUMNS: &str =
    "job_id, service, remote_id, token_hash, state, reason, seconds, created_at";

/// The transcription the job `job_id` bought.
pub async fn transcription(db: &D1Database, job_id: &str) -> Result<Option<TranscriptionRow>, ApiError> {
    row_where(db, TRANSCRIPTION_COLUMNS, "intake_transcriptions", "job_id", job_id).await
}

/// The transcription of the audio at `audio` (its normalised address), whichever job bought it.
pub async fn transcription_of_audio(
    db: &D1Database,
    audio: &str,
) -> Result<Option<TranscriptionRow>, ApiError> {
    row_where(db, TRANSCRIPTION_COLUMNS, "intake_transcriptions", "audio", audio).await
}

/// A charge against the day's budgets: the site's and the account's, in seconds of audio.
pub struct Charge<'a> {
    pub job_id: &'a str,
    /// The normalised address of the audio: one transcription an audio, whatever job asks.
    pub audio: &'a str,
    pub service: &'a str,
    pub token_hash: &'a str,
    pub account_id: i64,
    pub day: &'a str,
    pub seconds: i64,
    pub site_budget: i64,
    pub account_budget: i64,
    pub now: &'a str,
}

/// Charges a job's transcription, in one statement, only while the day's budgets have room for it:
/// `false` when they have not, or the job or the audio was charged already.
pub async fn charge(db: &D1Database, charge: Charge<'_>) -> Result<bool, ApiError> {
    let made = run(
        db,
        "INSERT INTO intake_transcriptions (job_id, service, token_hash, state, account_id, day, seconds, \
         created_at, updated_at, audio) \
         SELECT ?1, ?2, ?3, 'charged', ?4, ?5, ?6, ?9, ?9, ?10 \
         WHERE (SELECT COALESCE(SUM(seconds), 0) FROM intake_transcriptions WHERE day = ?5) + ?6 <= ?7 \
         AND (SELECT COALESCE(SUM(seconds), 0) FROM intake_transcriptions WHERE day = ?5 AND account_id = ?4) \
         + ?6 <= ?8 ON CONFLICT DO NOTHING",
        &[
            Arg::Text(charge.job_id),
            Arg::Text(charge.service),
            Arg::Text(charge.token_hash),
            Arg::Int(charge.account_id),
            Arg::Text(charge.day),
            Arg::Int(charge.seconds),
            Arg::Int(charge.site_budget),
            Arg::Int(charge.account_budget),
            Arg::Text(charge.now),
            Arg::Text(charge.audio),
        ],
    )
    .await?;
    Ok(made == 1)
}

/// The seconds of audio charged on `day`: the site's and the account's.
pub async fn charged_on(db: &D1Database, day: &str, account_id: i64) -> Result<(i64, i64), ApiError> {
    #[derive(Deserialize)]
    struct Sums {
        site: Option<f64>,
        account: Option<f64>,
    }
    let sums: Option<Sums> = first(
        db,
        "SELECT SUM(seconds) AS site, SUM(CASE WHEN account_id = ?2 THEN seconds ELSE 0 END) AS account \
         FROM intake_transcriptions WHERE day = ?1",
        &[Arg::Text(day), Arg::Int(account_id)],
    )
    .await?;
    let sums = sums.unwrap_or(Sums { site: None, account: None });
    Ok((sums.site.unwrap_or(0.0) as i64, sums.account.unwrap_or(0.0) as i64))
}

/// Moves a job's transcription that is in one of the states `from` to `state`, keeping the
/// service's id once known: `true` when this call moved it. A callback may come before the
/// submission's answer is recorded, so ending one takes it from `charged` or `submitted`.
pub async fn move_transcription(
    db: &D1Database,
    job_id: &str,
    from: &[&str],
    state: &str,
    remote_id: Option<&str>,
    reason: Option<&str>,
    now: &str,
) -> Result<bool, ApiError> {
    let mut args =
        vec![Arg::Text(job_id), Arg::Text(state), optional(remote_id), optional(reason), Arg::Text(now)];
    let states: Vec<String> = (0..from.len()).map(|i| format!("?{}", args.len() + 1 + i)).collect();
    args.extend(from.iter().map(|state| Arg::Text(state)));
    let sql = format!(
        "UPDATE intake_transcriptions SET state = ?2, remote_id = COALESCE(remote_id, ?3), reason = ?4, \
         updated_at = ?5 WHERE job_id = ?1 AND state IN ({})",
        states.join(", ")
    );
    Ok(run(db, &sql, &args).await? == 1)
}

/// Settles a transcription's charge to the seconds the service measured (or none, when it
/// transcribed nothing).
pub async fn settle_transcription(db: &D1Database, job_id: &str, seconds: i64) -> Result<(), ApiError> {
    let sql = "UPDATE intake_transcriptions SET seconds = ?2 WHERE job_id = ?1";
    run(db, sql, &[Arg::Text(job_id), Arg::Int(seconds)]).await?;
    Ok(())
}

/// Records the service's callback: `true` for its first delivery, `false` for any later one.
pub async fn transcription_notified(db: &D1Database, job_id: &str, now: &str) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE intake_transcriptions SET notified_at = ?2 WHERE job_id = ?1 AND notified_at IS NULL",
        &[Arg::Text(job_id), Arg::Text(now)],
    )
    .await?;
    Ok(changed == 1)
}

/// Forgets the transcription the job `job_id` bought when it failed, so its audio may be bought anew:
/// one whose charge was given back, or one charged on an earlier day (today's charge stands for
/// today). `true` when it was forgotten.
pub async fn forget_failed_transcription(
    db: &D1Database,
    job_id: &str,
    today: &str,
) -> Result<bool, ApiError> {
    let sql = "DELETE FROM intake_transcriptions WHERE job_id = ?1 AND state = 'failed' \
               AND (seconds = 0 OR day < ?2)";
    Ok(run(db, sql, &[Arg::Text(job_id), Arg::Text(today)]).await? == 1)
}
