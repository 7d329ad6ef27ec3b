//! Episodes by their address: `POST /api/episodes` asks for one (with a key) and `GET
//! /api/intake/{id}` says where its job stands. The work itself is the queue consumer's
//! (`crate::intake::take_in`); a request never waits for a fetch.

use domain::api::{self, EpisodeRequest, FeedAsked, IntakeJob, JobState};
use domain::quotes::intake::{Content, TakenIn, TakenInPage};
use worker::{Env, Request, Response};

use crate::auth::{self, now_iso};
use crate::error::ApiError;
use crate::http;
use crate::intake::{self, Message};
use crate::store::{self, JobRow, KeyOwner};

/// Seconds a client is asked to wait before looking at a job again.
const RETRY_AFTER_S: u32 = 2;

/// A job that has not moved for this long lost its message, and asking again queues it again.
const STALLED_S: u64 = 15 * 60;

/// The job as the API shows it.
pub fn job_view(job: &JobRow) -> Result<IntakeJob, ApiError> {
    let state = JobState::from_code(&job.state)
        .ok_or_else(|| ApiError::Internal(format!("job {} has the state `{}`", job.id, job.state)))?;
    Ok(IntakeJob {
        id: job.id.clone(),
        source_url: job.source_url.clone(),
        state,
        reason: job.reason.clone(),
        episode_id: job.episode_id.clone(),
        episode_url: job.episode_id.as_ref().map(|id| format!("/api/episodes/{id}")),
        url: format!("/api/intake/{}", job.id),
        created_at: job.created_at.clone(),
        updated_at: job.updated_at.clone(),
    })
}

/// The job's answer: 202 with `Retry-After` while it runs, 200 once it has finished.
fn job_answer(job: &IntakeJob) -> Result<Response, ApiError> {
    let body = serde_json::to_vec(job).map_err(|err| ApiError::Internal(err.to_string()))?;
    let mut response = Response::from_bytes(body)?;
    let running = !job.state.finished();
    let headers = response.headers_mut();
    headers.set("Content-Type", "application/json; charset=utf-8")?;
    headers.set("Cache-Control", "no-store")?;
    headers.set("Location", &job.url)?;
    if running {
        headers.set("Retry-After", &RETRY_AFTER_S.to_string())?;
    }
    http::cors(headers);
    Ok(response.with_status(if running { 202 } else { 200 }))
}

/// `POST /api/episodes` with `{source_url}`: the episode at that address is taken in. 202 and the
/// job's `Location`; the same address asked again (by anyone) is the same job, and a job that
/// failed, or has not moved for a quarter of an hour, is tried again.
///
/// Order of checks: key (401), rate limit (429), body (415, 413, 400, 422).
pub async fn request(mut req: Request, env: &Env) -> Result<Response, ApiError> {
    let caller = auth::caller(&req, env).await?;
    let rate = auth::count_write(env, &caller).await?;
    let answer = async {
        let body = http::json_body(&mut req).await?;
        let address = api::from_json::<EpisodeRequest>(&body).map_err(ApiError::Invalid)?;
        job_answer(&request_episode(env, &caller, &address).await?)
    };
    let answer = answer.await;
    // A refusal for the transcription budget carries that budget's headers, not the write limit's.
    let rate = match &answer {
        Err(ApiError::RateLimited(budget)) => budget.clone(),
        _ => rate,
    };
    http::rated(answer, &rate, &req.path())
}

/// The job of the episode at `address`, asked for by `caller`: made and queued when the address has
/// none, queued again when its job failed or stalled; also the `request_episode` tool.
pub async fn request_episode(env: &Env, caller: &KeyOwner, address: &str) -> Result<IntakeJob, ApiError> {
    let asked = domain::quotes::intake::asked(address, &intake::allowance(env)).map_err(ApiError::Invalid)?;
    // Past the day's transcription budget, nothing more is taken in today: whether an episode needs
    // transcribing is known only once its feed is read.
    crate::intake::transcription::admit(env, caller.account_id).await?;
    let db = store::db(env)?;
    let id = domain::quotes::intake::job_id(&asked.normalised_url);
    let now = now_iso();
    let made =
        store::add_job(&db, &id, &asked.source_url, &asked.normalised_url, caller.account_id, &now).await?;
    let again = !made && store::retry_job(&db, &id, &now, &auth::iso_ago(STALLED_S)).await?;
    if again {
        store::forget_failed_transcription(&db, &id, &now[..10]).await?;
    }
    if made || again {
        env.queue(intake::QUEUE)?.send(Message::Job(id.clone())).await?;
    }
    let job = store::job(&db, &id).await?.ok_or_else(|| ApiError::Internal(format!("job {id} vanished")))?;
    job_view(&job)
}

/// `GET /api/intake/{id}`: where a job stands.
pub async fn status(env: &Env, id: &str) -> Result<Response, ApiError> {
    let job = store::job(&store::db(env)?, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no intake job `{id}`")))?;
    job_answer(&job_view(&job)?)
}

/// What `/api/attribute` says about an address no published episode has: where its `job` stands,
/// or how to ask for it.
pub fn unknown_address(normalised_url: &str, job: Option<&JobRow>) -> String {
    match job {
        Some(job) if job.state == "failed" => format!(
            "no episode is published at {normalised_url}: taking it in failed ({}); POST /api/episodes \
             with a key tries again",
            job.reason.as_deref().unwrap_or("no reason was kept")
        ),
        Some(job) => format!(
            "no episode is published at {normalised_url} yet: it is being taken in ({}; GET /api/intake/{})",
            job.state, job.id
        ),
        None => format!(
            "no episode is published at {normalised_url}: ask for it with POST /api/episodes \
             {{\"source_url\": \"…\"}} and an API key (make one on /kitchen)"
        ),
    }
}

/// `GET /api/intake/episodes?since=<seq>&limit=<n>`: every episode the intake published after
/// `since`, oldest first, each with the content files `builder sync` commits; at most `limit` and
/// 1 MiB of them a page (`domain::paging`; a page holds at least one).
pub async fn taken_in(env: &Env, FeedAsked { since, limit }: FeedAsked) -> Result<Response, ApiError> {
    let rows = store::taken_in_since(&store::db(env)?, since, limit).await?;
    let listed = rows.len();
    let mut items = Vec::new();
    let mut bytes = 0;
    for row in rows {
        if bytes >= domain::paging::PAGE_BYTES {
            break;
        }
        let stored = crate::live::episodes::content(env, &row.id)
            .await?
            .ok_or_else(|| ApiError::Internal(format!("episode {} has no content.json", row.id)))?;
        bytes += stored.len();
        let content: Content = serde_json::from_slice(&stored)
            .map_err(|err| ApiError::Internal(format!("episodes/{}/content.json: {err}", row.id)))?;
        items.push(TakenIn { seq: row.seq, episode: row.id, by: row.handle, at: row.created_at, content });
    }
    let body = serde_json::to_value(TakenInPage::of(items, listed, limit as usize))
        .map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&body, 0)
}
