//! Quote routes: attribution, shows, episodes, transcripts, speaker statistics, phrase search.
//!
//! Everything is read from static files the builder wrote (`episodes/<id>/transcript.json`,
//! `episodes.json`, `quotes/…`); each handler takes its parsed input (`domain::api`), calls `domain`,
//! and renders. The whole transcript of an episode no editor has decided on is the build's own
//! answer (`episodes/<id>/view.v<N>.json`), passed through.
//! A read of one episode's transcript (an attribution in it, a narrowed transcript, its speakers)
//! reads the one file the build stored for the quote reads (`episodes/<id>/reading.v<N>.bin`: the
//! transcript, its token index and its names' inputs, in postcard), rather than parse the
//! transcript's JSON and make its index; an episode the intake took in has its transcript's JSON
//! read and its index made on first use. An isolate keeps a few prepared transcripts, so
//! repeated questions about one episode skip both; the phrase index's pieces it keeps in the cache
//! all static indexes share (`crate::index`). Editors' speaker names show at once through `crate::decisions`.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use domain::api::{EpisodeAsked, EpisodePage, EpisodesAsked, QuoteAsked};
use domain::quotes::quote::phrase;
use domain::quotes::quote::views::Filters;
use domain::quotes::quote::{
    Attribution, Prepared, Reading, attribute as attribute_quote, corpus, reading_path, views,
};
use domain::quotes::transcript::names::{HumanDecision, NameInputs};
use domain::quotes::transcript::url::is_episode_id;
use domain::quotes::transcript::{Canonical, EpisodeSummary, episode_id};
use serde_json::json;
use worker::{Env, Response};

use crate::assets::{built_episodes, built_shows, fetch_bytes};
use crate::error::ApiError;
use crate::live::{Live, episodes};
use crate::routes::intake as intake_routes;
use crate::{decisions, http, index, store};

/// Prepared transcripts an isolate keeps (a three-hour one is a few MiB once prepared).
const TRANSCRIPTS_KEPT: usize = 8;

/// An episode as the quote reads use it: its canonical transcript, the transcript's token index
/// (read with it from the build's file, or made on first use for an episode the intake took in), and
/// the build's `names.json` (`None` for a taken-in episode: it is read apart then).
pub(crate) struct Loaded {
    pub canonical: Canonical,
    prepared: OnceCell<Prepared>,
    pub names: Option<String>,
}

impl Loaded {
    /// The transcript's token index.
    fn prepared(&self) -> &Prepared {
        self.prepared.get_or_init(|| Prepared::new(&self.canonical.segments))
    }

    /// The transcript with its episode's decisions in force, or `None` when it has none (the loaded
    /// one stands).
    pub async fn with_decisions(&self, env: &Env, live: &Live) -> Result<Option<Canonical>, ApiError> {
        self.with_these(env, decisions::decided(env, &self.canonical.episode.id, live).await?.as_ref()).await
    }

    /// The transcript with `decided` (its episode's decisions, from [`decisions::decided`]) in
    /// force, its names resolved again from the inputs read with it; `None` when there are none.
    pub async fn with_these(
        &self,
        env: &Env,
        decided: Option<&BTreeMap<String, HumanDecision>>,
    ) -> Result<Option<Canonical>, ApiError> {
        let Some(decided) = decided else { return Ok(None) };
        let Some(inputs) = self.name_inputs(env).await? else { return Ok(None) };
        Ok(Some(decisions::with_reports(&self.canonical, &inputs.resolve_with(decided))))
    }

    /// The inputs the episode's names were resolved from: the build's, read with the transcript,
    /// else (an episode the intake took in) its `names.json`.
    pub async fn name_inputs(&self, env: &Env) -> Result<Option<NameInputs>, ApiError> {
        let id = &self.canonical.episode.id;
        match &self.names {
            Some(json) => serde_json::from_str(json)
                .map(Some)
                .map_err(|err| ApiError::Internal(format!("the names of episode `{id}`: {err}"))),
            None => decisions::name_inputs(env, id).await,
        }
    }
}

/// The episodes an isolate keeps loaded, by id, and the build they are of.
type Kept = (u64, Vec<(String, Rc<Loaded>)>);

thread_local! {
    /// Of one build ([`crate::packs::generation`]): a new build empties it.
    static TRANSCRIPTS: RefCell<Kept> = const { RefCell::new((0, Vec::new())) };
}

fn render(body: &impl serde::Serialize) -> Result<Response, ApiError> {
    let value = serde_json::to_value(body).map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&value, 300)
}

/// An episode's transcript with its token index, from this isolate's cache, else from the build's
/// file for the quote reads ([`reading_path`]), else, for an episode the intake took in, from its
/// transcript's JSON.
pub(crate) async fn load(env: &Env, id: &str) -> Result<Rc<Loaded>, ApiError> {
    let generation = crate::packs::generation(env).await?;
    let hit = TRANSCRIPTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.0 != generation {
            *cache = (generation, Vec::new());
        }
        cache.1.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone())
    });
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let built = match is_episode_id(id) {
        true => fetch_bytes(env, reading_path(id)).await?.and_then(|bytes| Reading::decode(&bytes)),
        false => None,
    };
    let loaded = match built {
        Some(Reading { canonical, prepared, names }) => {
            Loaded { canonical, prepared: OnceCell::from(prepared), names: Some(names) }
        }
        None => {
            let not_found = || ApiError::NotFound(format!("no episode `{id}`"));
            let bytes = episodes::episode_file(env, id, "/transcript.json").await?.ok_or_else(not_found)?;
            let canonical: Canonical = serde_json::from_slice(&bytes)
                .map_err(|err| ApiError::Internal(format!("episodes/{id}/transcript.json: {err}")))?;
            Loaded { canonical, prepared: OnceCell::new(), names: None }
        }
    };
    let loaded = Rc::new(loaded);
    TRANSCRIPTS.with(|cache| {
        let (at, cache) = &mut *cache.borrow_mut();
        if *at != generation {
            return;
        }
        if cache.len() >= TRANSCRIPTS_KEPT {
            cache.remove(0);
        }
        cache.push((id.to_string(), loaded.clone()));
    });
    Ok(loaded)
}

/// `GET /api/attribute?source_url=…&quote=…`
pub async fn attribute(env: &Env, input: QuoteAsked, live: &Live) -> Result<Response, ApiError> {
    render(&attribution(env, &input, live).await?)
}

/// The attribution of a quote in the episode at a (normalised) source URL, or, without one, over the
/// whole corpus through the phrase index; also the `attribute_quote` tool. `live`: the request
/// carries a key, so editors' decisions are asked of D1 rather than taken from this isolate's list
/// of decided episodes, which may be a second old (`crate::decisions`); the other quote reads take
/// `live` for the same reason.
pub async fn attribution(
    env: &Env,
    QuoteAsked { source_url: normalised, quote }: &QuoteAsked,
    live: &Live,
) -> Result<Attribution, ApiError> {
    let Some(normalised) = normalised else { return corpus_attribution(env, quote, live).await };
    let loaded = match load(env, &episode_id(normalised)).await {
        Err(ApiError::NotFound(_)) => load_taken_in(env, normalised).await?,
        loaded => loaded?,
    };
    let current = loaded.with_decisions(env, live).await?;
    Ok(attribute_quote(current.as_ref().unwrap_or(&loaded.canonical), loaded.prepared(), quote))
}

/// The episode the intake made of an address it was asked for by another than the episode's own
/// (its page, when the episode is known by its audio), else 404 saying how to ask for it or where
/// its job stands.
async fn load_taken_in(env: &Env, normalised: &str) -> Result<Rc<Loaded>, ApiError> {
    let job = store::job_by_address(&store::db(env)?, normalised).await?;
    match job.as_ref().and_then(|job| job.episode_id.as_deref()) {
        Some(id) => load(env, id).await,
        None => Err(ApiError::NotFound(intake_routes::unknown_address(normalised, job.as_ref()))),
    }
}

/// "Who said this?" over every episode: `domain`'s [`corpus::Question`] names the places to read in
/// the phrase index, turn by turn; their passages get the names editors decided since the build.
async fn corpus_attribution(env: &Env, quote: &str, live: &Live) -> Result<Attribution, ApiError> {
    let mut question = corpus::Question::new(quote);
    let overlay = episodes::overlay(env, live).await?;
    loop {
        let mut places =
            index::answer::<phrase::Index, _, _>(env, |index, parts| question.places(index, parts)).await?;
        if let Some(overlay) = &overlay {
            let more = question.overlay_places(overlay).map_err(|err| ApiError::Internal(err.0))?;
            places = places.join(more);
        }
        decisions::all_with_decisions(env, &mut places.transcripts, live).await?;
        if let corpus::Turn::Answered(answer) = question.attribute(&places) {
            return Ok(*answer);
        }
    }
}

/// `GET /api/shows`
pub async fn shows(env: &Env) -> Result<Response, ApiError> {
    let items = built_shows(env).await?;
    http::public_json(&json!({ "items": *items, "total": items.len() }), 300)
}

/// `GET /api/episodes?show=…&limit=…&cursor=…`
pub async fn episodes(env: &Env, input: EpisodesAsked) -> Result<Response, ApiError> {
    render(&episode_page(env, input).await?)
}

/// One page of episodes, of one show or all; also the `list_episodes` tool.
pub async fn episode_page(
    env: &Env,
    EpisodesAsked { show, page }: EpisodesAsked,
) -> Result<EpisodePage, ApiError> {
    let built = built_episodes(env).await?;
    // Episodes the intake published and no build has yet, in the build's order.
    let taken_in = episodes::taken_in(env, &Live::get(env, false).await?).await?;
    let mut all: Vec<&EpisodeSummary> = built.iter().chain(&taken_in.summaries).collect();
    if !taken_in.summaries.is_empty() {
        domain::sorted::sort_by(&mut all, |a, b| b.published.cmp(&a.published).then_with(|| a.id.cmp(&b.id)));
    }
    if let Some(show) = &show {
        all.retain(|episode| &episode.show == show);
    }
    let (items, next_cursor) = page.slice_within(&all);
    let items = items.iter().map(|item| (*item).clone()).collect();
    Ok(EpisodePage { show, items, total: all.len(), next_cursor })
}

/// `GET /api/episodes/:id`: the record with every run, as built.
pub async fn episode(env: &Env, id: &str, live: &Live) -> Result<Response, ApiError> {
    let not_found = || ApiError::NotFound(format!("no episode `{id}`"));
    let built = episodes::episode_file(env, id, ".json").await?.ok_or_else(not_found)?;
    let record = decisions::record_with_decisions(env, id, built, live).await?;
    http::json_answer(Response::from_bytes(record)?, 300)
}

/// `GET /api/episodes/:id/transcript?speaker=…&from=…&to=…`: the whole transcript as the build
/// stored it while no editor's decision about the episode is on record; else made here.
pub async fn transcript(env: &Env, input: EpisodeAsked, live: &Live) -> Result<Response, ApiError> {
    let id = &input.episode_id;
    let decided = decisions::decided(env, id, live).await?;
    if input.filters == Filters::default()
        && let Some(built) =
            decisions::built_unless_decided(env, id, decided.as_ref(), views::built_view_path(id)).await?
    {
        return http::json_answer(built, 300);
    }
    render(&narrowed(env, &input, decided.as_ref()).await?)
}

/// The narrowed transcript; also the `get_transcript` tool.
pub async fn transcript_view(
    env: &Env,
    input: &EpisodeAsked,
    live: &Live,
) -> Result<views::TranscriptView, ApiError> {
    narrowed(env, input, decisions::decided(env, &input.episode_id, live).await?.as_ref()).await
}

/// The narrowed transcript with the episode's decisions `decided` in force.
async fn narrowed(
    env: &Env,
    EpisodeAsked { episode_id: id, filters }: &EpisodeAsked,
    decided: Option<&BTreeMap<String, HumanDecision>>,
) -> Result<views::TranscriptView, ApiError> {
    let loaded = load(env, id).await?;
    let current = loaded.with_these(env, decided).await?;
    Ok(views::transcript(current.as_ref().unwrap_or(&loaded.canonical), filters))
}

/// `GET /api/episodes/:id/speakers?from=…&to=…`
pub async fn speakers(env: &Env, input: EpisodeAsked, live: &Live) -> Result<Response, ApiError> {
    render(&speakers_view(env, &input, live).await?)
}

/// Speaker statistics; also the `speaker_stats` tool.
pub async fn speakers_view(
    env: &Env,
    EpisodeAsked { episode_id: id, filters }: &EpisodeAsked,
    live: &Live,
) -> Result<views::SpeakersView, ApiError> {
    let loaded = load(env, id).await?;
    let current = loaded.with_decisions(env, live).await?;
    Ok(views::speakers(current.as_ref().unwrap_or(&loaded.canonical), filters))
}

/// `GET /api/search?q=…&speaker=…&limit=…&cursor=…`
pub async fn search(env: &Env, query: phrase::Query, live: &Live) -> Result<Response, ApiError> {
    let answer = phrase_search(env, &query, live).await?;
    let value = serde_json::to_value(&answer).map_err(|err| ApiError::Internal(err.to_string()))?;
    http::public_json(&value, 60)
}

/// Phrase search; also the `search_transcripts` tool.
pub async fn phrase_search(
    env: &Env,
    query: &phrase::Query,
    live: &Live,
) -> Result<phrase::Answer, ApiError> {
    let mut answer =
        index::answer::<phrase::Index, _, _>(env, |index, parts| phrase::search(index, query, parts)).await?;
    if let Some(overlay) = episodes::overlay(env, live).await? {
        answer = overlay.search(answer, query).map_err(|err| ApiError::Internal(err.0))?;
    }
    decisions::hits_with_decisions(env, &mut answer, live).await?;
    Ok(answer)
}
