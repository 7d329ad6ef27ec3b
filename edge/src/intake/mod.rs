//! Episodes taken in by their address, the Worker's side: `POST /api/episodes` makes a job
//! (`routes::intake`) and queues its id; the queue consumer ([`take_in`]) drives `domain`'s intake
//! step machine (`domain::quotes::intake::Intake`) with [`fetch`], names the voices, publishes the
//! episode with the build's own function (`domain::quotes::transcript::publish`) and stores what
//! the build would write for it in the `INTAKE` bucket, then marks the job `ready` in D1. The quote
//! routes read an episode's files through [`crate::live::episodes::episode_file`]: the build's when
//! it has them, else the intake's, so a build that publishes the episode takes over without a seam.
//!
//! Every address is untrusted: [`fetch`] has `domain::site::outbound` check it and each redirect
//! (followed by hand), bounds each answer in bytes and time by its kind, and resolves each name by
//! DNS-over-HTTPS before it fetches; Cloudflare's network does not route to private addresses
//! besides. Loopback `host:port` pairs are allowed only in a development run (`ENVIRONMENT=dev`,
//! `FETCH_ALLOW_LOOPBACK`), which is how the tests reach their scripted hosts.

use domain::quotes::intake::{self, Content, Intake, Step};
use domain::quotes::transcript::publish::Built;
use domain::quotes::transcript::{EpisodeHead, Show, Vote, export, llm};
use domain::site::limits::{self, Subject};
use domain::site::outbound::Fetched;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use worker::Env;

use crate::assets::{built_episode_ids, built_shows};
use crate::auth::now_iso;
use crate::error::ApiError;
use crate::store::{self, FeedJob, NewEpisode};
mod fetch;
pub mod transcription;

pub use fetch::{allowance, fetch, fetch_from, outbound};
use fetch::{fetch_if_changed, within};

use transcription::Heard;

/// The queue the jobs go through.
pub const QUEUE: &str = "INTAKE_QUEUE";
pub use crate::live::episodes::BUCKET;

/// A queue message: a job to move along, a followed feed to read, or a slice of the followed feeds
/// to queue one by one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Message {
    Job(String),
    Feed {
        show: String,
        url: String,
    },
    /// Followed feeds `from..to`, in `shows.json`'s order of the shows that name one.
    Feeds {
        from: usize,
        to: usize,
    },
}

/// The most messages one queue batch holds.
const PER_BATCH: usize = 100;

/// How many followed feeds one invocation queues (`FOLLOW_FEEDS_PER_INVOCATION`): by default 48
/// batches, so with its read of `shows.json` it stays within the Free plan's 50 subrequests.
fn feeds_per_invocation(env: &Env) -> usize {
    let configured =
        env.var("FOLLOW_FEEDS_PER_INVOCATION").ok().and_then(|v| v.to_string().trim().parse().ok());
    configured.unwrap_or(48 * PER_BATCH).max(1)
}

/// Sends messages in batches of [`PER_BATCH`].
async fn send_all(env: &Env, messages: Vec<Message>) -> Result<(), ApiError> {
    let queue = env.queue(QUEUE)?;
    for chunk in messages.chunks(PER_BATCH) {
        queue.send_batch(chunk.iter().cloned().map(worker::SendMessage::from).collect::<Vec<_>>()).await?;
    }
    Ok(())
}

/// Moves the job `id` along, from its queue message. `Err` only for a passing failure of ours (D1,
/// R2), after which the message is delivered again; a reason of the episode's ends the job `failed`.
pub async fn take_in(env: &Env, id: &str) -> Result<(), ApiError> {
    let db = store::db(env)?;
    let Some(job) = store::job(&db, id).await? else { return Ok(()) };
    if matches!(job.state.as_str(), "ready" | "failed") {
        return Ok(());
    }
    // A job whose audio is with a transcription service reads its page and feed again each time
    // round (nothing of them is kept between messages), and stays `transcribing` meanwhile.
    let transcribing = store::transcription(&db, id).await?.is_some();
    store::move_job(&db, id, if transcribing { "transcribing" } else { "fetching" }, None, &now_iso())
        .await?;
    let outbound = outbound(env);
    let allowance = &outbound.allowance;
    let created = now_iso()[..10].to_string();
    let followed: Vec<String> = job.feed_url.iter().cloned().collect();
    let (machine, mut step) = Intake::start(&job.source_url, &followed, &created, allowance);
    let shows = intake::Shows { following: following_shows(env).await?, ..intake::Shows::default() };
    let mut machine = machine.with_service(transcription::service(env)).with_shows(shows);
    let mut heard = false;
    let arrival = loop {
        step = match step {
            Step::Fetch(wanted) => match fetch(&wanted.url, wanted.kind, &outbound).await {
                Ok(answer) => machine.give(answer),
                Err(reason) => machine.unreachable(reason),
            },
            Step::Transcribe(audio) => {
                heard = true;
                match transcription::hear(env, &job, &audio, &created).await? {
                    Heard::Run(run) => machine.transcribed(*run),
                    Heard::Published(episode) => {
                        return store::ready_with(&db, id, &episode, &now_iso()).await;
                    }
                    Heard::Waiting => return Ok(()),
                    Heard::Failed(reason) => Step::Failed(reason),
                }
            }
            Step::Arrived(arrival) => break *arrival,
            // The page or the feed could not be read this time round while a transcription is paid
            // for: read again later, as long as the transcription is in time.
            Step::Failed(_) if transcribing && !heard && transcription::read_again_later(env, id).await? => {
                return Ok(());
            }
            Step::Failed(reason) => {
                store::move_job(&db, id, "failed", Some(&reason), &now_iso()).await?;
                return Ok(());
            }
        };
    };
    store::move_job(&db, id, "identifying", None, &now_iso()).await?;
    let language_model = language_model_votes(env, &job, &arrival).await;
    let (content, built) = match intake::publish_arrival(arrival, language_model.as_ref()) {
        Ok(published) => published,
        Err(reason) => {
            store::move_job(&db, id, "failed", Some(&reason), &now_iso()).await?;
            return Ok(());
        }
    };
    store_episode(env, &content, &built).await?;
    let summary = serde_json::to_string(&built.summary).map_err(|err| ApiError::Internal(err.to_string()))?;
    let now = now_iso();
    let episode = NewEpisode {
        id: &built.record.id,
        show: &content.show,
        normalised_url: &built.record.normalised_url,
        summary: &summary,
        job_id: id,
        now: &now,
    };
    store::finish_with_episode(&db, episode).await?;
    // This isolate took the write: its next read sees the episode at once.
    crate::live::expire();
    Ok(())
}

/// Source 2 on arrival: the site's AI asked once about the run's voices, under the prompt and evidence
/// rule `builder identify` uses, counted against the asking account's AI quota. `None` (no vote yet:
/// `builder identify` asks later) when the site has no AI, the quota is spent, or the model could not
/// be reached; a model that answers against the rule abstains.
async fn language_model_votes(
    env: &Env,
    job: &store::JobRow,
    arrival: &intake::Arrival,
) -> Option<BTreeMap<String, Vote>> {
    let provider = crate::provider::provider(env).ok()?;
    let question = llm::question(&arrival.run, &arrival.episode.roster, provider.model());
    if let Some(abstentions) = question.unasked() {
        return Some(abstentions);
    }
    let charge = crate::auth::count(env, &limits::AI, &Subject::Account(job.account_id)).await.ok()?;
    if !charge.decision.allowed {
        crate::auth::uncount(env, &charge).await;
        return None;
    }
    match provider.name_voices(env, &question.messages).await {
        Ok(answer) => {
            let texts: Vec<&str> = arrival.run.segments.iter().map(|s| s.text.as_str()).collect();
            let roster = &arrival.episode.roster;
            Some(llm::votes_from_answer(&answer, &question.labels, roster, &texts, &question.model))
        }
        Err(err) => {
            worker::console_warn!("intake {}: the language model was not asked: {err:?}", job.id);
            crate::auth::uncount(env, &charge).await;
            None
        }
    }
}

/// The published shows that follow a feed, each its folder and record, from `shows.json`: an item
/// of one's feed joins it, whoever asked for it.
async fn following_shows(env: &Env) -> Result<Vec<(String, Show)>, ApiError> {
    let shows = built_shows(env).await?;
    Ok(shows
        .iter()
        .filter(|show| show.feed_url.is_some())
        .map(|show| (show.id.clone(), show.clone().record()))
        .collect())
}

/// The followed feeds: each published show that names a `feed_url`, in `shows.json`'s order.
async fn followed(env: &Env) -> Result<Vec<Message>, ApiError> {
    Ok(built_shows(env)
        .await?
        .iter()
        .filter_map(|show| show.feed_url.clone().map(|url| Message::Feed { show: show.id.clone(), url }))
        .collect())
}

/// The cron: every followed feed (a published show's `feed_url`) goes on the queue as its own message,
/// so no invocation reads more than one feed whatever their number. When there are more feeds than
/// one invocation queues, the cron queues slices of them ([`Message::Feeds`]) and each slice's
/// invocation queues its feeds ([`follow_some`]). Returns how many feeds are followed.
pub async fn follow_all(env: &Env) -> Result<usize, ApiError> {
    let feeds = followed(env).await?;
    let (n, per) = (feeds.len(), feeds_per_invocation(env));
    if n <= per {
        send_all(env, feeds).await?;
    } else {
        let slices = (0..n).step_by(per).map(|from| Message::Feeds { from, to: (from + per).min(n) });
        send_all(env, slices.collect()).await?;
    }
    Ok(n)
}

/// One slice of the followed feeds onto the queue, each feed its own message.
pub async fn follow_some(env: &Env, from: usize, to: usize) -> Result<(), ApiError> {
    let feeds = followed(env).await?;
    let slice = feeds.get(from.min(feeds.len())..to.min(feeds.len())).unwrap_or_default();
    send_all(env, slice.to_vec()).await
}

/// Reads one followed feed, conditionally: when it changed, each of its newest items no published
/// episode or job has becomes a job, made by the site's account and queued.
pub async fn follow(env: &Env, show: &str, url: &str) -> Result<(), ApiError> {
    let db = store::db(env)?;
    let outbound = outbound(env);
    let known = store::feed_validators(&db, url).await?;
    let (answer, validators) = match fetch_if_changed(url, Fetched::Feed, &outbound, &known, 0).await {
        Ok(read) => read,
        Err(reason) => {
            worker::console_warn!("followed feed {url}: {reason}");
            return store::feed_checked(&db, url, None, &now_iso()).await;
        }
    };
    if answer.status == 304 || !(200..300).contains(&answer.status) {
        return store::feed_checked(&db, url, None, &now_iso()).await;
    }
    let base = worker::Url::parse(&answer.url).map_err(|err| ApiError::Internal(err.to_string()))?;
    let feed = match domain::quotes::feed::parse(&answer.body, &base) {
        Ok(feed) => feed,
        Err(err) => {
            worker::console_warn!("followed feed {url}: {err}");
            return store::feed_checked(&db, url, None, &now_iso()).await;
        }
    };
    let published = built_episode_ids(env).await?;
    let (guids, audio) = store::feed_item_keys(&db, url).await?;
    let known = intake::Known { published: &|id| published.contains(id), guids: &guids, audio: &audio };
    let jobs: Vec<FeedJob> = intake::new_items(&feed, &known)
        .into_iter()
        .map(|item| FeedJob {
            id: intake::job_id(&item.normalised_url),
            source_url: item.source_url,
            normalised_url: item.normalised_url,
            show,
            feed_url: url,
            guid: item.guid,
            audio: item.audio,
        })
        .collect();
    let now = now_iso();
    let made = store::add_feed_jobs(&db, &jobs, store::site_account(&db).await?, &now).await?;
    send_all(env, made.into_iter().map(Message::Job).collect()).await?;
    store::feed_checked(&db, url, Some(&validators), &now).await
}

/// Writes the episode's files into the bucket, as the build lays them out.
async fn store_episode(env: &Env, content: &Content, built: &Built) -> Result<(), ApiError> {
    let bucket = env.bucket(BUCKET)?;
    let id = &built.record.id;
    let files: Vec<(String, Vec<u8>)> = vec![
        (format!("episodes/{id}/transcript.json"), json(&built.canonical)?),
        (format!("episodes/{id}/transcript.vtt"), export::to_webvtt(&built.canonical).into_bytes()),
        (
            format!("episodes/{id}/transcript.p20.json"),
            export::to_podcasting20(&built.canonical).to_string().into_bytes(),
        ),
        (format!("episodes/{id}/names.json"), json(&built.name_inputs)?),
        (format!("episodes/{id}/head.json"), json(&EpisodeHead::of(&built.record))?),
        (format!("episodes/{id}/content.json"), json(content)?),
        (format!("episodes/{id}.json"), json(&built.record)?),
    ];
    for (key, bytes) in files {
        bucket.put(key, bytes).execute().await?;
    }
    Ok(())
}

fn json(value: &impl Serialize) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(value).map_err(|err| ApiError::Internal(err.to_string()))
}
