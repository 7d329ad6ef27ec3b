//! What readers see that is newer than the build: recipes written through the API (`recipes`, over
//! the map `crate::waiting` keeps, into which the store notes each write at once),
//! editors' speaker decisions (`decisions`) and episodes the intake took in (`episodes`), as one view
//! per isolate over the build the isolate reads ([`crate::packs::generation`]).
//!
//! **The freshness rule.** A read without a key sees everything D1 held [`REFRESH_MS`] before it, and
//! at once every write its own isolate took; a read with a key ([`Live::of`]) brings the view up to
//! date first, so a writer, an editor or an asker always sees their own write. One clock keeps the
//! view: at most every [`REFRESH_MS`], one batched D1 read ([`crate::store::news`]) brings what is new in
//! every table since the last one — the recipe feed and the overlay dictionary, the decisions, the
//! episodes taken in — and never a whole table again. The build's root is rechecked on the same
//! interval ([`crate::packs`]); a new build starts the view over against what it holds.
//!
//! The tests that hold the rule: `search_shows_overlay_recipes_and_hides_replaced_versions` (a writer's
//! recipe at once), `an_editors_speaker_name_shows_at_once_and_syncs_to_git` and
//! `a_decision_stored_elsewhere_reaches_readers_within_a_second` (decisions), and
//! `an_episode_asked_for_by_its_page_comes_in_and_every_quote_route_answers` (episodes).

pub mod decisions;
pub mod episodes;
pub mod recipes;

use std::cell::RefCell;

use worker::{Env, Request};

use crate::error::ApiError;
use crate::store::{self, Cursors};

/// The most a read without a key lags D1: how long an isolate trusts its view before asking what is
/// new (and before rechecking the build's root).
pub const REFRESH_MS: u64 = crate::packs::ROOT_RECHECK_MS;

/// A request's handle on the view, proof that the view was brought up to date as the freshness rule
/// says before the request asks it anything: every question about what waits beyond the build takes
/// one.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    _taken: (),
}

/// When the view was last brought up to date, and against which build.
#[derive(Debug, Default)]
struct Clock {
    checked_ms: Option<u64>,
    generation: Option<u64>,
}

thread_local! {
    static CLOCK: RefCell<Clock> = RefCell::new(Clock::default());
}

impl Live {
    /// The view for `req`: brought up to date first when the request carries a key (its writer must
    /// see their own write), else as this isolate holds it, refreshed when older than [`REFRESH_MS`].
    pub async fn of(req: &Request, env: &Env) -> Result<Live, ApiError> {
        Live::get(env, crate::auth::keyed(req)?).await
    }

    /// The view, brought up to date first when `fresh`.
    pub async fn get(env: &Env, fresh: bool) -> Result<Live, ApiError> {
        let generation = crate::packs::generation(env).await?;
        let now_ms = worker::Date::now().as_millis();
        let (due, new_build) = CLOCK.with(|clock| {
            let clock = clock.borrow();
            let new_build = clock.generation != Some(generation);
            (
                fresh
                    || new_build
                    || clock.checked_ms.is_none_or(|at| now_ms.saturating_sub(at) >= REFRESH_MS),
                new_build,
            )
        });
        if new_build {
            decisions::start_over(env, generation).await?;
            episodes::start_over();
        }
        if due {
            refresh(env).await?;
            CLOCK.with(|clock| {
                *clock.borrow_mut() = Clock { checked_ms: Some(now_ms), generation: Some(generation) }
            });
        }
        Ok(Live { _taken: () })
    }
}

/// Makes the view out of date, so the next read in this isolate brings it up to date first: for a
/// write whose row the view cannot note by itself (an episode the intake published).
pub fn expire() {
    CLOCK.with(|clock| clock.borrow_mut().checked_ms = None);
}

/// Reads what D1 holds past the view's cursors, in one batch per round, until nothing more waits.
async fn refresh(env: &Env) -> Result<(), ApiError> {
    let db = store::db(env)?;
    loop {
        let (recipe_seq, term_id, max_terms) = recipes::cursor();
        let cursors = Cursors {
            recipe_seq,
            term_id,
            max_terms,
            decided_seq: decisions::cursor(),
            episode_seq: episodes::cursor(),
        };
        let news = store::news(&db, &cursors).await?;
        let more = recipes::more_terms(news.terms.len())
            || news.decided.len() == store::NEWS_PER_READ as usize
            || news.episodes.len() == store::NEWS_PER_READ as usize;
        recipes::apply(news.recipes, news.terms);
        decisions::apply(news.decided);
        episodes::apply(news.episodes);
        if !more {
            return Ok(());
        }
    }
}
