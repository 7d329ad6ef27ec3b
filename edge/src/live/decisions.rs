//! The decisions of the view ([`super`]): which episodes have an editor's decision the build does not
//! hold, as far as this isolate knows. A read asks D1 for the decisions themselves only for those
//! episodes (`crate::decisions`), so a search or an attribution over undecided episodes asks nothing.

use std::cell::RefCell;
use std::collections::BTreeSet;

use worker::Env;

use crate::error::ApiError;
use crate::store::{self, DecidedRow};

/// The episodes with a decision newer than the build's last synced one.
#[derive(Debug, Default)]
struct Decided {
    episodes: BTreeSet<String>,
    /// The newest decision seen.
    seq: u64,
    /// The last decision the build holds (counted from then on).
    synced: u64,
}

thread_local! {
    static DECIDED: RefCell<Decided> = RefCell::new(Decided::default());
    /// This database's feed id, once asked: it never changes.
    static FEED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Starts over for a new build: only decisions after the last one it holds count. None count as held
/// when the build was synced from another site's feed, whose positions mean nothing here.
pub async fn start_over(env: &Env, _generation: u64) -> Result<(), ApiError> {
    let built = crate::assets::built_decisions(env).await?;
    let synced = match built.feed.as_deref().filter(|_| built.synced_seq > 0) {
        None => 0,
        Some(feed) => {
            if FEED.with(|own| own.borrow().is_none()) {
                let id = store::feed_id(&store::db(env)?).await?;
                FEED.with(|own| *own.borrow_mut() = Some(id));
            }
            if FEED.with(|own| own.borrow().as_deref() == Some(feed)) { built.synced_seq } else { 0 }
        }
    };
    DECIDED.with(|decided| *decided.borrow_mut() = Decided { seq: synced, synced, ..Decided::default() });
    Ok(())
}

/// The last decision seen.
pub fn cursor() -> u64 {
    DECIDED.with(|decided| decided.borrow().seq)
}

/// The last decision the build holds.
pub fn synced() -> u64 {
    DECIDED.with(|decided| decided.borrow().synced)
}

/// Takes in the decisions past [`cursor`].
pub fn apply(rows: Vec<DecidedRow>) {
    DECIDED.with(|decided| {
        let mut decided = decided.borrow_mut();
        for row in rows {
            decided.seq = decided.seq.max(row.seq);
            decided.episodes.insert(row.episode_id);
        }
    });
}

/// Notes a decision this isolate just stored, so its next read shows it without waiting for a refresh.
pub fn note_decided(id: &str) {
    DECIDED.with(|decided| decided.borrow_mut().episodes.insert(id.to_string()));
}

/// Those of `ids` with a decision the build does not hold.
pub fn among<'a>(ids: &[&'a str]) -> Vec<&'a str> {
    DECIDED.with(|decided| {
        let decided = decided.borrow();
        ids.iter().copied().filter(|id| decided.episodes.contains(*id)).collect()
    })
}
