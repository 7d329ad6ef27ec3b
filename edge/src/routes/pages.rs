//! The quote service's pages, rendered here by `domain::quotes::page` from the same reads the API
//! answers with (`crate::routes::quotes`): check a quote, an episode, two runs compared, a show,
//! phrase search. A page shows a problem with what was typed on the page itself; an unknown episode
//! or show is 404. Editors' decisions show at once, as in every quote answer (`crate::decisions`).

use std::collections::BTreeMap;

use domain::Diagnostic;
use domain::api::{
    EpisodesAsked, JobState, QuoteAttribution, QuoteChecked, RunsAsked, SEARCH_PAGE_HITS, SearchPageAsked,
    TranscriptSearch, from_query,
};
use domain::quotes::page::{
    QuoteView, UnknownEpisode, built_compare_page, built_episode_page, closest_phrases,
};
use domain::quotes::quote::phrase;
use domain::quotes::quote::views;
use domain::quotes::transcript::compare::compare;
use domain::quotes::transcript::{EpisodeHead, EpisodeRecord, ShowSummary};
use worker::{Env, Response};

use crate::assets::{built_episodes, built_shows};
use crate::error::ApiError;
use crate::live::Live;
use crate::routes::quotes::{self, load};
use crate::web::RENDERER;
use crate::{decisions, http, store};

/// Turns shown on each side of a found quote.
const CONTEXT_TURNS: usize = 2;

/// A problem in the words of the form it came from.
fn in_words(problems: &[Diagnostic]) -> Vec<String> {
    problems
        .iter()
        .map(|problem| {
            let field = match problem.field.as_str() {
                "quote" => "The quote",
                "source_url" => "The episode's address",
                "q" => "The phrase",
                "speaker" => "The speaker",
                other => other,
            };
            format!("{field} {}.", problem.reason)
        })
        .collect()
}

/// `GET /quotes?quote=…&source_url=…`
pub async fn quote_page(env: &Env, asked: QuoteChecked) -> Result<Response, ApiError> {
    // Every episode a reader can ask about: the build's, and those taken in since.
    let live = Live::get(env, false).await?;
    let (built, taken_in) = futures::join!(built_episodes(env), crate::live::episodes::taken_in(env, &live));
    let (built, taken_in) = (built?, taken_in?);
    let n_new = taken_in.summaries.iter().filter(|new| !built.iter().any(|old| old.id == new.id)).count();
    let n_episodes = built.len() + n_new;
    let mut view =
        QuoteView { quote: &asked.quote, source_url: &asked.source_url, n_episodes, ..Default::default() };
    if asked.quote.trim().is_empty() {
        return http::public_page(RENDERER.with(|r| r.quote_page(&view)));
    }
    let question = match from_query::<QuoteAttribution>([
        ("quote", asked.quote.as_str()),
        ("source_url", asked.source_url.as_str()),
    ]) {
        Ok(question) => question,
        Err(problems) => {
            view.problems = in_words(&problems);
            return http::public_page(RENDERER.with(|r| r.quote_page(&view)));
        }
    };
    let answer = match quotes::attribution(env, &question, &Live::get(env, false).await?).await {
        Err(ApiError::NotFound(_)) => {
            let job = match &question.source_url {
                Some(normalised) => store::job_by_address(&store::db(env)?, normalised).await?,
                None => None,
            };
            let unknown = UnknownEpisode {
                job_url: job.as_ref().map(|job| format!("/api/intake/{}", job.id)),
                state: job.as_ref().and_then(|job| JobState::from_code(&job.state)),
                reason: job.and_then(|job| job.reason),
            };
            view.unknown = Some(&unknown);
            // It changes as its job moves: no cache keeps it.
            let mut response = http::public_page(RENDERER.with(|r| r.quote_page(&view)))?;
            response.headers_mut().set("Cache-Control", "no-store")?;
            return Ok(response);
        }
        answer => answer?,
    };
    let (mut context, mut report, mut closest) = (Vec::new(), None, None);
    if let (Some(found), Some(episode)) = (&answer.found_at, &answer.episode) {
        // The episode's names resolved once with its decisions: for the turns around and the report.
        let loaded = load(env, &episode.id).await?;
        let decided = decisions::decided(env, &episode.id, &Live::get(env, false).await?).await?;
        let none = BTreeMap::new();
        let mut reports = loaded
            .name_inputs(env)
            .await?
            .map(|inputs| inputs.resolve_with(decided.as_ref().unwrap_or(&none)));
        let current = match (&decided, &reports) {
            (Some(_), Some(reports)) => Some(decisions::with_reports(&loaded.canonical, reports)),
            _ => None,
        };
        context = views::around(
            current.as_ref().unwrap_or(&loaded.canonical),
            found.start_s,
            found.end_s,
            CONTEXT_TURNS,
        );
        report = reports.as_mut().and_then(|reports| reports.remove(&found.speaker));
    } else {
        closest = closest_passages(env, &asked.quote).await?;
    }
    view.answer = Some(&answer);
    view.report = report.as_ref();
    view.context = &context;
    view.closest = closest.as_ref();
    http::public_page(RENDERER.with(|r| r.quote_page(&view)))
}

/// For a quote not found: the passages that hold three of its words in a row
/// ([`closest_phrases`]: its first, else its last, else some between).
async fn closest_passages(env: &Env, quote: &str) -> Result<Option<phrase::Answer>, ApiError> {
    for q in closest_phrases(quote) {
        let Ok(query) = from_query::<TranscriptSearch>([("q", q.as_str()), ("limit", "5")]) else { continue };
        let answer = quotes::phrase_search(env, &query, &Live::get(env, false).await?).await?;
        if !answer.hits.is_empty() {
            return Ok(Some(answer));
        }
    }
    Ok(None)
}

/// What an episode's pages show besides its transcript (`episodes/<id>/head.json`); an episode
/// without one has its record read as its head. 404 for no such episode.
async fn head(env: &Env, id: &str) -> Result<EpisodeHead, ApiError> {
    let (name, bytes) = match crate::live::episodes::episode_file(env, id, "/head.json").await? {
        Some(bytes) => ("/head.json", Some(bytes)),
        None => (".json", crate::live::episodes::episode_file(env, id, ".json").await?),
    };
    let bytes = bytes.ok_or_else(|| ApiError::NotFound(format!("no episode `{id}`")))?;
    serde_json::from_slice(&bytes).map_err(|err| ApiError::Internal(format!("episodes/{id}{name}: {err}")))
}

/// `GET /episodes/{episode_id}`: the page as the build rendered it while no editor's decision about
/// the episode is on record; else, and for an episode the intake took in, rendered here.
pub async fn episode_page(env: &Env, id: &str) -> Result<Response, ApiError> {
    let decided = decisions::decided(env, id, &Live::get(env, false).await?).await?;
    if let Some(built) =
        decisions::built_unless_decided(env, id, decided.as_ref(), built_episode_page(id)).await?
    {
        return http::page_answer(built);
    }
    let (head, loaded) = futures::join!(head(env, id), load(env, id));
    let (head, loaded) = (head?, loaded?);
    let current = loaded.with_these(env, decided.as_ref()).await?;
    http::public_page(RENDERER.with(|r| r.episode_page(&head, current.as_ref().unwrap_or(&loaded.canonical))))
}

/// `GET /episodes/{episode_id}/compare?a=…&b=…`: `a` defaults to the canonical run, `b` to the first
/// other one. The build compared that pair already (the head's `compared`) and stored its page, which
/// is the answer to a request naming no pair while no editor's decision about the episode is on
/// record; another pair is compared here, from the record's runs.
pub async fn runs_page(env: &Env, asked: RunsAsked) -> Result<Response, ApiError> {
    let id = &asked.episode_id;
    let decided = decisions::decided(env, id, &Live::get(env, false).await?).await?;
    if asked.a.is_none() && asked.b.is_none() {
        let stored_path = built_compare_page(id);
        if let Some(stored) = decisions::built_unless_decided(env, id, decided.as_ref(), stored_path).await? {
            return http::page_answer(stored);
        }
    }
    let mut head = head(env, id).await?;
    let first = asked.a.unwrap_or_else(|| head.canonical_run.clone());
    let second = match asked.b.or_else(|| head.other_than(&first).map(str::to_string)) {
        Some(second) => second,
        None => {
            return Err(ApiError::NotFound(format!(
                "episode `{id}` has one run only: there is nothing to compare"
            )));
        }
    };
    for pipeline in [&first, &second] {
        if !head.runs.iter().any(|run| &run.pipeline == pipeline) {
            return Err(ApiError::NotFound(format!("episode `{id}` has no run `{pipeline}`")));
        }
    }
    let diff = match head.compared.take() {
        Some(built) if built.first == first && built.second == second => built.comparison,
        _ => {
            let bytes = crate::live::episodes::episode_file(env, id, ".json")
                .await?
                .ok_or_else(|| ApiError::NotFound(format!("no episode `{id}`")))?;
            let record: EpisodeRecord = serde_json::from_slice(&bytes)
                .map_err(|err| ApiError::Internal(format!("episodes/{id}.json: {err}")))?;
            let run = |pipeline: &str| record.runs.iter().find(|run| run.pipeline == pipeline);
            match (run(&first), run(&second)) {
                (Some(a), Some(b)) => compare(a, b),
                _ => {
                    return Err(ApiError::Internal(format!("episodes/{id}.json lacks a run its head names")));
                }
            }
        }
    };
    if let Some(reports) = decisions::reports_with(env, id, decided.as_ref()).await? {
        head.names = reports;
    }
    http::public_page(RENDERER.with(|r| r.compare_page(&head, &first, &second, &diff)))
}

/// `GET /shows/{show_id}?cursor=…`
pub async fn show_page(env: &Env, asked: EpisodesAsked) -> Result<Response, ApiError> {
    let id = asked.show.clone().unwrap_or_default();
    let shows = built_shows(env).await?;
    let show = shows
        .iter()
        .find(|show| show.id == id)
        .ok_or_else(|| ApiError::NotFound(format!("no show `{id}`")))?;
    let listed = quotes::episode_page(env, asked).await?;
    // The count is the list's, episodes taken in since the build included.
    let show = ShowSummary { episode_count: listed.total, ..show.clone() };
    http::public_page(RENDERER.with(|r| r.show_page(&show, &listed.items, listed.next_cursor.as_deref())))
}

/// `GET /search?q=…&speaker=…&cursor=…`
pub async fn search_page(env: &Env, asked: SearchPageAsked) -> Result<Response, ApiError> {
    let typed = (asked.q.as_str(), asked.speaker.as_str());
    if asked.q.trim().is_empty() && asked.speaker.trim().is_empty() {
        return http::public_page(RENDERER.with(|r| r.search_page(None, typed, &[], None, None)));
    }
    let limit = SEARCH_PAGE_HITS.to_string();
    let mut params =
        vec![("q", asked.q.as_str()), ("speaker", asked.speaker.as_str()), ("limit", limit.as_str())];
    params.retain(|(_, value)| !value.trim().is_empty());
    if let Some(cursor) = &asked.cursor {
        params.push(("cursor", cursor));
    }
    let query = match from_query::<TranscriptSearch>(params) {
        Ok(query) => query,
        Err(problems) => {
            let problems = in_words(&problems);
            return http::public_page(RENDERER.with(|r| r.search_page(None, typed, &problems, None, None)));
        }
    };
    let answer = quotes::phrase_search(env, &query, &Live::get(env, false).await?).await?;
    let next = answer.next_cursor.as_ref().map(|cursor| {
        let mut next = worker::url::form_urlencoded::Serializer::new(String::new());
        for (key, value) in [("q", typed.0), ("speaker", typed.1)] {
            if !value.is_empty() {
                next.append_pair(key, value);
            }
        }
        format!("/search?{}", next.append_pair("cursor", cursor).finish())
    });
    http::public_page(
        RENDERER.with(|r| r.search_page(Some(&query), typed, &[], Some(&answer), next.as_deref())),
    )
}

/// The page a person's browser gets for an address that names nothing (404).
pub fn not_found(detail: &str) -> Response {
    let err = ApiError::NotFound(detail.to_string());
    match RENDERER.with(|renderer| renderer.not_found_page(Some(detail))) {
        Ok(html) => as_page(html, err, ""),
        Err(_) => err.into_response(""),
    }
}

/// The page a person's browser gets for a request refused (400, 403, 404, 413, 422, 429): the
/// problem's title and detail in words, with its status and headers (`Retry-After`). A failure of
/// ours stays problem+json, whose `reference` names it in the log.
pub fn problem(err: ApiError, instance: &str) -> Response {
    let (status, title, detail) = err.in_words();
    if status >= 500 {
        return err.into_response(instance);
    }
    match RENDERER.with(|renderer| renderer.problem_page(title, &format!("{detail}."))) {
        Ok(html) => as_page(html, err, instance),
        Err(_) => err.into_response(instance),
    }
}

/// `html` answered with `err`'s status and headers.
pub fn as_page(html: String, err: ApiError, instance: &str) -> Response {
    let (status, ..) = err.in_words();
    let problem = err.into_response(instance);
    let Ok(mut page) = Response::from_html(html) else { return problem };
    let headers = page.headers_mut();
    for (name, value) in problem.headers().entries() {
        if name != "content-type" {
            let _ = headers.set(&name, &value);
        }
    }
    let _ = headers.set("Vary", "Accept");
    page.with_status(status)
}
