//! What this isolate knows waits in D1: the recipes written through the API (each slug's newest
//! version, from the change feed) and a copy of the overlay search's dictionary. The view of what is
//! newer than the build (`crate::live::recipes`) brings it up to date; the store notes each write here
//! at once, so the isolate that took a write finds it without waiting for a refresh.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use domain::recipes::search::overlay::Entry;

/// The recipes written through the API, as far as this isolate knows: each slug's newest version,
/// and the last feed item seen. A slug is live in the overlay while its version is newer than the
/// build's. Also a copy of the overlay search's dictionary, so a search whose words no overlay
/// recipe holds asks D1 nothing.
#[derive(Debug, Default)]
pub struct Waiting {
    pub versions: HashMap<String, u64>,
    pub seq: u64,
    /// Every term of `overlay_dict` up to `term_id`, while there are at most
    /// `crate::live::recipes::MAX_DICTIONARY_TERMS`.
    pub terms: BTreeSet<String>,
    pub term_id: u64,
    /// The dictionary grew past `crate::live::recipes::MAX_DICTIONARY_TERMS`: searches look terms up
    /// in D1 instead.
    pub terms_in_d1: bool,
}

thread_local! {
    pub static WAITING: RefCell<Waiting> = RefCell::new(Waiting::default());
}

/// Notes a write this isolate just made, so its next read or search of `slug` finds it without
/// waiting for a refresh.
pub fn note_waiting(slug: &str, version: u64) {
    WAITING.with(|waiting| {
        let mut waiting = waiting.borrow_mut();
        let known = waiting.versions.entry(slug.to_string()).or_default();
        *known = (*known).max(version);
    });
}

/// Adds the terms of a document this isolate is about to write to its dictionary copy, so its next
/// search finds them without waiting for a refresh.
pub fn note_terms(entry: &Entry) {
    WAITING.with(|waiting| {
        let mut waiting = waiting.borrow_mut();
        if !waiting.terms_in_d1 {
            waiting.terms.extend(entry.terms.iter().map(|(term, _)| term.clone()));
        }
    });
}
