//! A transcription the intake buys, the Worker's side: the service the site is configured with
//! (`TRANSCRIBE_PROVIDER` and its address and key), the budgets it is bought under, the submission,
//! the service's callback (`POST /api/intake/{job_id}/transcribed`) and the polls of a delayed
//! re-queue. What is sent and how each answer reads is `domain::quotes::intake::transcribe`.
//!
//! A request never waits for a transcription: the queue consumer submits and returns; the job's
//! message comes back after `INTAKE_POLL_SECONDS` to ask where it stands (AssemblyAI) or to see
//! whether the callback came (Deepgram, which answers only by calling back), and the callback queues
//! it at once. An audio is transcribed once (`intake_transcriptions`, one row a job and an audio),
//! charged only while the day's budgets have room, and the charge is settled to the length the
//! service measured. A job whose audio another job bought (the same episode asked for by another
//! address: its share link, its page, the cron's feed item) waits for that transcription and ends
//! with that job's episode, charged nothing.
//!
//! This module moves a job's transcription along; beside it are the settings it reads
//! ([`settings`]), one call to the service ([`call`]), the service's answers kept in R2
//! ([`answers`]) and the service's callback ([`webhook`]).

use domain::quotes::intake::Audio;
use domain::quotes::intake::audio as measure;
use domain::quotes::intake::transcribe::{self, Order, Progress, Service};
use domain::quotes::transcript::Run;
use domain::quotes::transcript::url::normalise_source_url;
use domain::site::limits::{self, Policy, RateDecision};
use domain::site::outbound::Fetched;
use worker::{D1Database, Env};

use super::{Message, QUEUE};
use crate::auth::{self, now_iso, now_s, sha256_hex};
use crate::error::ApiError;
use crate::store::{self, JobRow, TranscriptionRow};

mod answers;
mod call;
mod settings;
mod webhook;

use answers::{keep_answer, stored_answer};
use call::{Unanswered, send};
use settings::{Transcriber, call_limit, hours, max_audio_s, poll_s, timeout_s, transcriber, var};
pub use webhook::callback_route;

/// A charge younger than this may still be being submitted by another invocation.
const SUBMITTING_S: u64 = 120;

/// The service `TRANSCRIBE_PROVIDER` names; none when it is unset (or names none we know, which the
/// job's failure then says).
pub fn service(env: &Env) -> Option<Service> {
    Service::named(&var(env, "TRANSCRIBE_PROVIDER").unwrap_or_default()).ok().flatten()
}

fn today() -> String {
    now_iso()[..10].to_string()
}

/// Seconds until the next UTC midnight, when the day's budgets start again.
fn until_midnight() -> u64 {
    86_400 - now_s() % 86_400
}

/// The day's budget where it stands for `account_id`: refused (429, with the `RateLimit` headers)
/// once the site's or the account's hours are spent, whichever has less left. Only a site with a
/// transcription service has a budget to spend.
pub async fn admit(env: &Env, account_id: i64) -> Result<Option<RateDecision>, ApiError> {
    if service(env).is_none() {
        return Ok(None);
    }
    let (site_s, account_s) = store::charged_on(&store::db(env)?, &today(), account_id).await?;
    let decision = |policy: &'static Policy, used_s: i64| {
        let quota = hours(env, policy);
        let left_s = (i64::from(quota) * 3600 - used_s).max(0);
        RateDecision {
            allowed: left_s > 0,
            limit: quota,
            remaining: (left_s / 3600) as u32,
            reset_s: until_midnight(),
            policy,
        }
    };
    let site = decision(&limits::SITE_TRANSCRIBED_HOURS, site_s);
    let account = decision(&limits::TRANSCRIBED_HOURS, account_s);
    let tighter =
        if !site.allowed || (account.allowed && site.remaining < account.remaining) { site } else { account };
    if tighter.allowed { Ok(Some(tighter)) } else { Err(ApiError::RateLimited(tighter)) }
}

/// What became of a job's audio this time round.
pub enum Heard {
    /// Transcribed: the run.
    Run(Box<Run>),
    /// Another job, which bought this audio's transcription, published its episode: this one.
    Published(String),
    /// Still with the service: the job's message comes back later.
    Waiting,
    /// A reason a person can act on; nothing is charged for it.
    Failed(String),
}

/// Moves `job`'s transcription along: submits it (charged once, within the budgets), asks where it
/// stands, or collects what the service answered.
pub async fn hear(env: &Env, job: &JobRow, audio: &Audio, created: &str) -> Result<Heard, ApiError> {
    let transcriber = match transcriber(env) {
        Ok(transcriber) => transcriber,
        Err(reason) => return Ok(Heard::Failed(reason)),
    };
    let db = store::db(env)?;
    let row = match store::transcription(&db, &job.id).await? {
        Some(row) => row,
        None => match store::transcription_of_audio(&db, &audio_key(audio)).await? {
            Some(theirs) => return shared(env, job, audio, &transcriber, theirs, created).await,
            None => return charge(env, job, audio, &transcriber).await,
        },
    };
    match row.state.as_str() {
        // Another invocation may be submitting it right now (a callback can queue the job before
        // the submission's answer is recorded): only a charge left alone for a while was broken off.
        "charged" if row.created_at > auth::iso_ago(SUBMITTING_S) => {
            come_back(env, &job.id).await?;
            Ok(Heard::Waiting)
        }
        // Broken off between the charge and the service's answer: it may have been submitted, so it
        // is not submitted again (that could pay twice); the charge stands for today.
        "charged" => {
            let reason = format!(
                "the submission to {} broke off before its answer was kept; ask for the episode again \
                 tomorrow (today's charge for it stands)",
                transcriber.service.name()
            );
            fail(env, &job.id, "charged", reason, false).await
        }
        "submitted" => collect(env, job, &transcriber, &row, created).await,
        "completed" => {
            let Some(body) = stored_answer(env, &job.id, &row.service).await? else {
                return collect(env, job, &transcriber, &row, created).await;
            };
            finish(env, job, transcriber.service, &body, created, row.seconds).await
        }
        _ => Ok(Heard::Failed(row.reason.unwrap_or_else(|| "the transcription failed".into()))),
    }
}

/// The key a transcription is kept under: the audio's normalised address.
fn audio_key(audio: &Audio) -> String {
    normalise_source_url(&audio.audio_url).unwrap_or_else(|| audio.audio_url.clone())
}

/// The audio's transcription, which another job bought (`theirs`): that job's episode once it made
/// it; the service's answer when that job could not make one; bought anew when it failed and its
/// charge is over; else this job waits for it.
async fn shared(
    env: &Env,
    job: &JobRow,
    audio: &Audio,
    transcriber: &Transcriber,
    theirs: TranscriptionRow,
    created: &str,
) -> Result<Heard, ApiError> {
    let db = store::db(env)?;
    match theirs.state.as_str() {
        "completed" => match store::job(&db, &theirs.job_id).await? {
            Some(JobRow { state, episode_id: Some(episode), .. }) if state == "ready" => {
                return Ok(Heard::Published(episode));
            }
            // The job that bought it could not make an episode of it: this one tries, from the
            // service's answer.
            Some(buyer) if buyer.state != "failed" => {}
            _ => {
                let answer = stored_answer(env, &theirs.job_id, &theirs.service).await?;
                let service = Service::named(&theirs.service).ok().flatten();
                let (Some(body), Some(service)) = (answer, service) else {
                    return Ok(Heard::Failed("the transcription of its audio was not kept".into()));
                };
                return Ok(match transcribe::transcribed(service, &body, created) {
                    Ok(done) => Heard::Run(Box::new(done.run)),
                    Err(reason) => Heard::Failed(reason),
                });
            }
        },
        "failed" => {
            if store::forget_failed_transcription(&db, &theirs.job_id, &today()).await? {
                return charge(env, job, audio, transcriber).await;
            }
            return Ok(Heard::Failed(theirs.reason.unwrap_or_else(|| "the transcription failed".into())));
        }
        _ => {}
    }
    transcribing(env, &db, &job.id).await
}

/// Charges the job's audio against the day's budgets, then submits it.
async fn charge(
    env: &Env,
    job: &JobRow,
    audio: &Audio,
    transcriber: &Transcriber,
) -> Result<Heard, ApiError> {
    // The longer of the feed's claim and the audio file's own length (the file's host writes its
    // header, so it may only raise the charge, never lower it); at least five minutes. The service is
    // held to it (plus a margin) where it can be ([`transcribe::cap_seconds`]), and the charge settles
    // to what it measured.
    let measured = match measured_s(env, audio).await {
        Ok(measured) => measured,
        Err(reason) => return Ok(Heard::Failed(reason)),
    };
    let (long, by) = match measured {
        Some(seconds) if seconds / 3600.0 > audio.hours => (seconds / 3600.0, "its audio file"),
        _ => (audio.hours, "its feed"),
    };
    let seconds = ((long * 3600.0).ceil() as i64).max(transcribe::MIN_CHARGE_S);
    let longest = max_audio_s(env);
    if seconds > longest {
        return Ok(Heard::Failed(format!(
            "\"{}\" is {long:.1} hours long by {by}, longer than the {:.1} hours this site transcribes \
             (INTAKE_MAX_AUDIO_HOURS): nothing can be done here",
            audio.title,
            longest as f64 / 3600.0
        )));
    }
    let token = auth::random_hex()?;
    let (site_budget, account_budget) =
        (hours(env, &limits::SITE_TRANSCRIBED_HOURS), hours(env, &limits::TRANSCRIBED_HOURS));
    let day = today();
    let now = now_iso();
    let token_hash = sha256_hex(&token);
    let audio_key = audio_key(audio);
    let db = store::db(env)?;
    let charged = store::charge(
        &db,
        store::Charge {
            job_id: &job.id,
            audio: &audio_key,
            service: transcriber.service.code(),
            token_hash: &token_hash,
            account_id: job.account_id,
            day: &day,
            seconds,
            site_budget: i64::from(site_budget) * 3600,
            account_budget: i64::from(account_budget) * 3600,
            now: &now,
        },
    )
    .await?;
    if !charged && store::transcription_of_audio(&db, &audio_key).await?.is_some() {
        // Another delivery of this job's message, or another job of this audio, charged it a moment
        // ago and is submitting it.
        come_back(env, &job.id).await?;
        return Ok(Heard::Waiting);
    }
    if !charged {
        let (site_s, account_s) = store::charged_on(&db, &day, job.account_id).await?;
        let left = |budget: u32, used: i64| (f64::from(budget) - used as f64 / 3600.0).max(0.0);
        return Ok(Heard::Failed(format!(
            "transcribing \"{}\" ({long:.1} hours by {by}) would pass today's budget: {:.1} of the site's \
             {site_budget} hours (INTAKE_HOURS_PER_DAY) and {:.1} of the account's {account_budget} \
             (INTAKE_HOURS_PER_ACCOUNT_PER_DAY) are left; ask again after midnight UTC",
            audio.title,
            left(site_budget, site_s),
            left(account_budget, account_s),
        )));
    }
    submit(env, job, audio, transcriber, &token, seconds).await
}

/// The audio's length in seconds as its file says, from its first bytes
/// ([`domain::quotes::intake::audio`]); `None` when the file cannot be measured, and then the feed's
/// claim stands. `Err` (nothing is bought) when the audio is not there to transcribe: its address
/// answers an error, or cannot be reached at all.
async fn measured_s(env: &Env, audio: &Audio) -> Result<Option<f64>, String> {
    let outbound = super::outbound(env);
    let head = super::fetch(&audio.audio_url, Fetched::AudioHead, &outbound)
        .await
        .map_err(|reason| format!("the audio of \"{}\" was not transcribed: {reason}", audio.title))?;
    if !(200..300).contains(&head.status) {
        return Err(format!(
            "the audio of \"{}\" at {} answered HTTP {}, so there is nothing to transcribe and nothing was \
             bought; {}",
            audio.title,
            head.url,
            head.status,
            if head.status >= 500 {
                "its host is failing: ask again later"
            } else {
                "nothing can be done here until the publisher's feed lists audio that answers"
            }
        ));
    }
    if let Some(seconds) = measure::measured_seconds(&head.body, head.size) {
        return Ok(Some(seconds));
    }
    // An MP4 whose index follows its media: one more read, where the head says it starts. A host
    // that ignored the range sent the file from its start, which holds no index there.
    let Some(at) = measure::index_at(&head.body).filter(|at| head.size.is_none_or(|size| *at < size)) else {
        return Ok(None);
    };
    let Ok(index) = super::fetch_from(&audio.audio_url, Fetched::AudioHead, &outbound, at).await else {
        return Ok(None);
    };
    Ok((index.status == 206).then(|| measure::index_seconds(&index.body)).flatten())
}

/// The address the service calls back, with the job's token; none when the site does not know its
/// own address (`SITE_URL`).
fn callback(env: &Env, job_id: &str, token: &str) -> Option<String> {
    let site = var(env, "SITE_URL")?;
    Some(format!("{}/api/intake/{job_id}/transcribed?token={token}", site.trim_end_matches('/')))
}

/// Submits a charged job's audio, `charged` seconds of it, with the callback's `token`.
async fn submit(
    env: &Env,
    job: &JobRow,
    audio: &Audio,
    transcriber: &Transcriber,
    token: &str,
    charged: i64,
) -> Result<Heard, ApiError> {
    let db = store::db(env)?;
    let callback = callback(env, &job.id, token);
    if callback.is_none() && !transcriber.service.can_be_polled() {
        return fail(
            env,
            &job.id,
            "charged",
            format!(
                "{} answers only by calling back, and the site does not know its own address: set SITE_URL",
                transcriber.service.name()
            ),
            true,
        )
        .await;
    }
    let order = Order {
        audio_url: &audio.audio_url,
        callback: callback.as_deref(),
        token,
        known_names: &audio.known_names,
        charged_s: charged,
    };
    let call = transcribe::submit(transcriber.service, &transcriber.base, &transcriber.key, &order);
    let (status, body) = match send(&call, call_limit(env)).await {
        Ok(answer) => answer,
        // A submission the service may have taken keeps its charge, as one broken off does.
        Err(Unanswered { reason, maybe_heard }) => {
            return fail(env, &job.id, "charged", reason, !maybe_heard).await;
        }
    };
    let remote = match transcribe::submitted(transcriber.service, status, &body) {
        Ok(remote) => remote,
        Err(reason) => return fail(env, &job.id, "charged", reason, true).await,
    };
    store::move_transcription(&db, &job.id, &["charged"], "submitted", Some(&remote), None, &now_iso())
        .await?;
    transcribing(env, &db, &job.id).await
}

/// Asks where a submitted transcription stands, or (for a service that only calls back) whether it is
/// past its time.
async fn collect(
    env: &Env,
    job: &JobRow,
    transcriber: &Transcriber,
    row: &TranscriptionRow,
    created: &str,
) -> Result<Heard, ApiError> {
    let overdue = auth::iso_ago(timeout_s(env)) > row.created_at;
    let remote = row.remote_id.clone().unwrap_or_default();
    let Some(call) = transcribe::poll(transcriber.service, &transcriber.base, &transcriber.key, &remote)
    else {
        if overdue {
            let reason = format!(
                "{}'s callback never came within {} s: ask for the episode again to transcribe it anew",
                transcriber.service.name(),
                timeout_s(env)
            );
            return fail(env, &job.id, &row.state, reason, false).await;
        }
        come_back(env, &job.id).await?;
        return Ok(Heard::Waiting);
    };
    let (status, body) = match send(&call, call_limit(env)).await {
        Ok(answer) => answer,
        // A service out of reach is asked again at the next poll.
        Err(_) => (503, Vec::new()),
    };
    match transcribe::progress(transcriber.service, status, &body) {
        Progress::Done => {
            keep_answer(env, &job.id, transcriber.service, &body).await?;
            let db = store::db(env)?;
            store::move_transcription(&db, &job.id, &[&row.state], "completed", None, None, &now_iso())
                .await?;
            finish(env, job, transcriber.service, &body, created, row.seconds).await
        }
        Progress::Failed(reason) => fail(env, &job.id, &row.state, reason, true).await,
        Progress::Waiting if overdue => {
            let reason = format!(
                "{} had not finished after {} s (TRANSCRIBE_TIMEOUT_SECONDS)",
                transcriber.service.name(),
                timeout_s(env)
            );
            fail(env, &job.id, &row.state, reason, false).await
        }
        Progress::Waiting => {
            come_back(env, &job.id).await?;
            Ok(Heard::Waiting)
        }
    }
}

/// The run of the service's whole answer, its charge (`charged` seconds) settled to the length the
/// service measured, or to what it was held to.
async fn finish(
    env: &Env,
    job: &JobRow,
    service: Service,
    body: &[u8],
    created: &str,
    charged: i64,
) -> Result<Heard, ApiError> {
    match transcribe::transcribed(service, body, created) {
        Ok(done) => {
            if let Some(measured) = done.duration_s {
                let seconds = transcribe::settled_seconds(service, charged, measured);
                store::settle_transcription(&store::db(env)?, &job.id, seconds).await?;
            }
            Ok(Heard::Run(Box::new(done.run)))
        }
        Err(reason) => Ok(Heard::Failed(reason)),
    }
}

/// Ends a transcription, the reason kept; its charge given back when the service did no work for it
/// (`refund`), kept when it may have (a callback that never came, a service that never finished).
async fn fail(env: &Env, job_id: &str, from: &str, reason: String, refund: bool) -> Result<Heard, ApiError> {
    let db = store::db(env)?;
    store::move_transcription(&db, job_id, &[from], "failed", None, Some(&reason), &now_iso()).await?;
    if refund {
        store::settle_transcription(&db, job_id, 0).await?;
    }
    Ok(Heard::Failed(reason))
}

/// When the page or feed of a job whose transcription is paid for cannot be read this time round: its
/// message comes back later (`true`) while the transcription is within `TRANSCRIBE_TIMEOUT_SECONDS`.
pub async fn read_again_later(env: &Env, job_id: &str) -> Result<bool, ApiError> {
    let Some(row) = store::transcription(&store::db(env)?, job_id).await? else { return Ok(false) };
    let in_time = matches!(row.state.as_str(), "submitted" | "completed")
        && row.created_at > auth::iso_ago(timeout_s(env));
    if in_time {
        come_back(env, job_id).await?;
    }
    Ok(in_time)
}

/// The job waits for its transcription: `transcribing`, and its message again after the poll.
async fn transcribing(env: &Env, db: &D1Database, job_id: &str) -> Result<Heard, ApiError> {
    store::move_job(db, job_id, "transcribing", None, &now_iso()).await?;
    come_back(env, job_id).await?;
    Ok(Heard::Waiting)
}

/// The job's message again, after `INTAKE_POLL_SECONDS`.
async fn come_back(env: &Env, job_id: &str) -> Result<(), ApiError> {
    let message =
        worker::MessageBuilder::new(Message::Job(job_id.to_string())).delay_seconds(poll_s(env)).build();
    env.queue(QUEUE)?.send(message).await?;
    Ok(())
}
