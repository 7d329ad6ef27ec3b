//! The recipes of the view ([`super`]): brings this isolate's map of waiting recipes and its copy of
//! the overlay dictionary (`crate::waiting`) up to date from what the view reads.

use std::collections::BTreeSet;

use crate::store::{DictTerm, FeedVersion};
use crate::waiting::WAITING;

/// The most overlay dictionary terms an isolate keeps a copy of (about 10 MiB at most).
const MAX_DICTIONARY_TERMS: usize = 300_000;

/// The most dictionary terms one refresh reads.
const TERMS_PER_REFRESH: u32 = 50_000;

/// Where the view's recipes stand: the last feed item seen, the last dictionary term, and how many
/// more terms to read (none once the dictionary is too large to copy).
pub fn cursor() -> (u64, u64, u32) {
    WAITING.with(|waiting| {
        let waiting = waiting.borrow();
        (waiting.seq, waiting.term_id, if waiting.terms_in_d1 { 0 } else { TERMS_PER_REFRESH })
    })
}

/// Whether a read that brought `terms` dictionary terms may have left more.
pub fn more_terms(terms: usize) -> bool {
    terms == TERMS_PER_REFRESH as usize
}

/// Takes in what the feed and the dictionary hold past [`cursor`].
pub fn apply(items: Vec<FeedVersion>, terms: Vec<DictTerm>) {
    WAITING.with(|waiting| {
        let mut waiting = waiting.borrow_mut();
        for item in items {
            let known = waiting.versions.entry(item.slug).or_default();
            *known = (*known).max(item.version);
            waiting.seq = waiting.seq.max(item.seq);
        }
        for term in terms {
            waiting.term_id = waiting.term_id.max(term.id);
            waiting.terms.insert(term.term);
        }
        if waiting.terms.len() > MAX_DICTIONARY_TERMS {
            waiting.terms = BTreeSet::new();
            waiting.terms_in_d1 = true;
        }
    });
}
