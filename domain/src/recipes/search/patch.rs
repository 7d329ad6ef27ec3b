//! Changing a built recipe index in place after a few recipes changed, instead of building it again.
//!
//! A rebuild after one recipe changed should cost about that recipe, not the whole index. [`patch`]
//! reads the last build's dictionary and the postings of the terms the changed recipes had or have,
//! moves their documents between postings, and redoes the shard layout with the code a full build
//! uses, so a patched index is byte for byte the index a full build of the same documents writes.
//! Like [`super::search`] it is pure: it names the files it still needs ([`Need`]) and the caller
//! loads them and calls again.
//!
//! Documents keep their ids: a changed document keeps its own and a new one comes right after the
//! last. Removing a document would shift the ids after it, so a caller rebuilds the index instead.

use std::collections::{BTreeMap, BTreeSet};

use super::build::{DocTerms, assemble};
use super::cards::Card;
use super::codec::{DictEntry, Stored, TermPostings, shard_entries};
use super::facets::{DocFacets, facet_index};
use super::files::{CARDS_PER_SHARD, Manifest, dictionary_files};
use crate::index::{Corrupt, Files, IndexFile, SearchError, corrupt, require};

/// A document that is new or whose recipe changed since the last build.
#[derive(Debug, Clone, Copy)]
pub struct Changed<'a> {
    pub doc: u32,
    /// Its terms in the last build; `None` for a new document.
    pub before: Option<&'a DocTerms>,
    pub after: &'a DocTerms,
    pub card: &'a Card,
}

/// What a patch does to the index folder.
#[derive(Debug)]
pub struct Patched {
    pub manifest: Manifest,
    /// New or changed files.
    pub write: Vec<IndexFile>,
    /// Files the new index no longer uses.
    pub remove: Vec<String>,
    pub facet_counts: BTreeMap<String, u64>,
}

/// Applies `changed` to the index `old` describes. `facets` holds every document's facets after the
/// change, in id order; documents from `old.n_docs` on must all be in `changed`, without `before`.
pub fn patch(
    old: &Manifest,
    files: &impl Files,
    changed: &[Changed],
    facets: &[DocFacets],
) -> Result<Patched, SearchError> {
    let n_docs = facets.len() as u32;
    let new_docs: BTreeSet<u32> = changed.iter().filter(|c| c.before.is_none()).map(|c| c.doc).collect();
    let appended = new_docs.iter().copied().eq(old.n_docs..n_docs);
    if !appended || changed.iter().any(|c| c.doc >= n_docs || (c.before.is_some() && c.doc >= old.n_docs)) {
        return Err(
            Corrupt("a patch changes documents in place or adds them after the last one".into()).into()
        );
    }

    // Round one: the whole dictionary, and the card shards the changed documents are in.
    let old_card_shards = old.n_docs.div_ceil(CARDS_PER_SHARD);
    let mut need: Vec<String> = (0..old.shards.len()).map(|idx| old.shard_file(idx)).collect();
    need.extend(
        changed.iter().filter(|c| c.doc / CARDS_PER_SHARD < old_card_shards).map(|c| old.card_file(c.doc)),
    );
    require(files, need)?;
    let mut old_shards = Vec::with_capacity(old.shards.len());
    let mut entries = Vec::new();
    for idx in 0..old.shards.len() {
        let name = old.shard_file(idx);
        let bytes = files.get(&name).expect("required above");
        entries.extend(shard_entries(bytes).ok_or_else(|| corrupt(&name))?);
        old_shards.push(bytes);
    }
    crate::sorted::sort_by(&mut entries, |a, b| a.term.cmp(&b.term));

    // Round two: the postings files of every term a changed document had or has.
    let mut affected: BTreeMap<&str, Option<usize>> = BTreeMap::new();
    for c in changed {
        for terms in c.before.into_iter().chain([c.after]) {
            for term in terms.title.iter().chain(&terms.ingredients).chain(&terms.other) {
                affected
                    .entry(term.as_str())
                    .or_insert_with(|| entries.binary_search_by(|e| e.term.as_str().cmp(term)).ok());
            }
        }
    }
    let old_files: BTreeMap<&str, String> = affected
        .iter()
        .filter_map(|(term, pos)| match pos.map(|pos| &entries[pos].stored) {
            Some(Stored::File(name)) => Some((*term, name.clone())),
            _ => None,
        })
        .collect();
    require(files, old_files.values().cloned())?;
    let mut postings: BTreeMap<&str, TermPostings> = BTreeMap::new();
    for (term, pos) in &affected {
        let current = match pos.map(|pos| &entries[pos].stored) {
            None => TermPostings::default(),
            Some(Stored::Inline(bytes)) => {
                TermPostings::from_compact(bytes).ok_or_else(|| corrupt("inline postings"))?
            }
            Some(Stored::File(name)) => TermPostings::from_file(files.get(name).expect("required above"))
                .ok_or_else(|| corrupt(name))?,
        };
        postings.insert(term, current);
    }
    for c in changed {
        if let Some(before) = c.before {
            for term in before.title.iter().chain(&before.ingredients).chain(&before.other) {
                postings.get_mut(term.as_str()).expect("every term is affected").remove(c.doc);
            }
        }
        for (field, list) in [&c.after.title, &c.after.ingredients, &c.after.other].into_iter().enumerate() {
            for term in list {
                let p = postings.get_mut(term.as_str()).expect("every term is affected");
                p.any.insert(c.doc);
                match field {
                    0 => p.title.insert(c.doc),
                    1 => p.ingredients.insert(c.doc),
                    _ => false,
                };
            }
        }
    }

    let mut write = Vec::new();
    let mut remove = Vec::new();
    let mut dropped = vec![false; entries.len()];
    let mut added = Vec::new();
    for (term, p) in postings {
        let pos = affected[term];
        let before = old_files.get(term).cloned();
        if p.any.is_empty() {
            remove.extend(before);
            if let Some(pos) = pos {
                dropped[pos] = true;
            }
            continue;
        }
        let (entry, file) = DictEntry::new(term.to_string(), &p);
        let after = file.as_ref().map(|f| f.name.clone());
        if before != after {
            remove.extend(before);
            write.extend(file);
        }
        match pos {
            Some(pos) => entries[pos] = entry,
            None => added.push(entry),
        }
    }
    let mut kept: Vec<DictEntry> =
        entries.into_iter().zip(dropped).filter(|(_, dropped)| !dropped).map(|(entry, _)| entry).collect();
    kept.extend(added);
    crate::sorted::sort_by(&mut kept, |a, b| a.term.cmp(&b.term));

    let old_facet_files: BTreeSet<&String> =
        old.facets.values().chain(old.max_total.iter().map(|(_, file)| file)).collect();
    let facet_index = facet_index(facets);
    let facet_counts = facet_index.counts.clone();
    let (manifest, files_now) = assemble(dictionary_files(&kept), facet_index, n_docs);
    let new_facet_files: BTreeSet<&String> =
        manifest.facets.values().chain(manifest.max_total.iter().map(|(_, file)| file)).collect();
    remove.extend(old_facet_files.difference(&new_facet_files).map(|name| name.to_string()));
    let dict_names: BTreeMap<String, usize> =
        (0..manifest.shards.len()).map(|idx| (manifest.shard_file(idx), idx)).collect();
    for file in files_now {
        let unchanged = match dict_names.get(&file.name) {
            Some(idx) => old_shards.get(*idx) == Some(&file.bytes.as_slice()),
            None => old_facet_files.contains(&file.name),
        };
        if !unchanged {
            write.push(file);
        }
    }
    remove.extend((manifest.shards.len()..old.shards.len()).map(|idx| old.shard_file(idx)));

    // The changed documents' card shards.
    let mut card_shards: BTreeMap<String, Vec<Card>> = BTreeMap::new();
    let mut by_doc: Vec<&Changed> = changed.iter().collect();
    crate::sorted::sort_by_key(&mut by_doc, |c| c.doc);
    for c in by_doc {
        let name = manifest.card_file(c.doc);
        if !card_shards.contains_key(&name) {
            let cards = match files.get(&name).filter(|_| c.doc / CARDS_PER_SHARD < old_card_shards) {
                Some(bytes) => postcard::from_bytes(bytes).map_err(|_| corrupt(&name))?,
                None => Vec::new(),
            };
            card_shards.insert(name.clone(), cards);
        }
        let cards = card_shards.get_mut(&name).expect("inserted above");
        let at = (c.doc % CARDS_PER_SHARD) as usize;
        match at.cmp(&cards.len()) {
            std::cmp::Ordering::Less => cards[at] = c.card.clone(),
            std::cmp::Ordering::Equal => cards.push(c.card.clone()),
            std::cmp::Ordering::Greater => return Err(corrupt(&name).into()),
        }
    }
    for (name, cards) in card_shards {
        write.push(IndexFile { name, bytes: postcard::to_allocvec(&cards).expect("cards serialise") });
    }
    crate::sorted::sort_by(&mut write, |a, b| a.name.cmp(&b.name));
    write.dedup_by(|a, b| a.name == b.name);
    crate::sorted::sort(&mut remove);
    remove.dedup();
    Ok(Patched { manifest, write, remove, facet_counts })
}
