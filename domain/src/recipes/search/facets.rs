//! Facets: what a filter tests of a recipe, the facet bitmaps a build writes, and the filters of a
//! search with the files they read. A filter is said here once: the built index reads it as facet
//! bitmaps, and the overlay (recipes written since the build, in D1) as the same facet keys stored
//! with each recipe, so neither the overlay search nor its SQL knows one filter from another.
//!
//! A recipe's facets are keys (`gf`, `course:main`, `lang:he`, from [`DocFacets::keys`]) and its total
//! time; a search's [`Filters`] name the keys every result has ([`Filters::keys`]) and a most total
//! time. Adding a filter on a facet the recipes already have: a field of [`Filters`] and its keys
//! here, and its parameter in `api::RecipeSearch`. On a new facet: also the field of [`DocFacets`],
//! its keys, and [`FACETS_VERSION`] (so builds and the overlay's stored keys are made again).

use std::collections::BTreeMap;

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::cards::Card;
use super::files::Manifest;
use crate::index::{IndexFile, bitmap_bytes, hashed_name};
use crate::recipes::recipe::{Course, FLAGS, Lang};

/// Raised whenever [`DocFacets`] or a key changes: a builder's saved facets, and the keys the overlay
/// stored, are of the version that wrote them and are made again when it differs.
pub const FACETS_VERSION: u32 = 1;

/// What one recipe adds to the facet bitmaps; a builder keeps these between builds so a rebuild can
/// redo the facets without the recipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocFacets {
    /// Diet flags as bits in [`FLAGS`] order.
    pub flags: u8,
    pub course: Course,
    /// Languages as bits in [`Lang::ALL`] order.
    pub langs: u8,
    pub total_min: u32,
}

impl Card {
    pub fn facets(&self) -> DocFacets {
        let langs = Lang::ALL.iter().enumerate().fold(0u8, |bits, (idx, lang)| {
            if self.texts.contains_key(lang) { bits | (1 << idx) } else { bits }
        });
        DocFacets { flags: self.flags, course: self.course, langs, total_min: self.prep_min + self.cook_min }
    }
}

impl DocFacets {
    /// The facet keys of the recipe: one per diet flag it has, its course, one per language it is
    /// written in. Each names a facet bitmap of the built index.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = FLAGS
            .iter()
            .enumerate()
            .filter(|(idx, _)| (self.flags >> idx) & 1 == 1)
            .map(|(_, flag)| flag.to_string())
            .collect();
        keys.push(format!("course:{}", self.course.code()));
        keys.extend(
            Lang::ALL
                .iter()
                .enumerate()
                .filter(|(idx, _)| (self.langs >> idx) & 1 == 1)
                .map(|(_, lang)| format!("lang:{}", lang.code())),
        );
        keys
    }
}

/// Facet keys as one text, each between spaces (` gf course:main lang:en `), so a key is found by
/// looking for ` key ` (what the overlay stores in D1).
pub fn keys_text(keys: &[String]) -> String {
    let mut text = String::from(" ");
    for key in keys {
        text.push_str(key);
        text.push(' ');
    }
    text
}

/// The facet part of an index, computed from every document's [`DocFacets`].
pub(super) struct FacetIndex {
    pub(super) facets: BTreeMap<String, String>,
    pub(super) max_total: Vec<(u32, String)>,
    pub(super) files: Vec<IndexFile>,
    pub(super) counts: BTreeMap<String, u64>,
}

pub(super) fn facet_index(docs: &[DocFacets]) -> FacetIndex {
    let mut bitmaps: BTreeMap<String, RoaringBitmap> = BTreeMap::new();
    let mut totals: BTreeMap<u32, RoaringBitmap> = BTreeMap::new();
    for (doc, facets) in docs.iter().enumerate() {
        let doc = doc as u32;
        for key in facets.keys() {
            bitmaps.entry(key).or_default().insert(doc);
        }
        totals.entry(facets.total_min).or_default().insert(doc);
    }
    let mut index = FacetIndex {
        facets: BTreeMap::new(),
        max_total: Vec::new(),
        files: Vec::new(),
        counts: BTreeMap::new(),
    };
    let mut store = |kind: &str, bitmap: &RoaringBitmap| -> String {
        let bytes = bitmap_bytes(bitmap);
        let name = hashed_name(kind, &bytes);
        index.files.push(IndexFile { name: name.clone(), bytes });
        name
    };
    let mut facets = BTreeMap::new();
    for (name, bitmap) in &bitmaps {
        facets.insert(name.clone(), store("facet", bitmap));
    }
    let mut max_total = Vec::new();
    let mut cumulative = RoaringBitmap::new();
    for (total, bitmap) in &totals {
        cumulative |= bitmap;
        max_total.push((*total, store("time", &cumulative)));
    }
    index.facets = facets;
    index.max_total = max_total;
    index.counts = bitmaps.iter().map(|(name, bitmap)| (name.clone(), bitmap.len())).collect();
    index
}

/// Filters of a recipe search; all must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// Diet flags that must be set, from [`FLAGS`].
    pub flags: Vec<&'static str>,
    pub course: Option<Course>,
    pub max_min: Option<u32>,
    /// Document ids left out: the built versions of recipes the API has changed since the build.
    pub exclude: Vec<u32>,
}

impl Filters {
    /// The facet keys every result must have (see [`DocFacets::keys`]).
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.flags.iter().map(|flag| flag.to_string()).collect();
        keys.extend(self.course.map(|course| format!("course:{}", course.code())));
        keys
    }

    /// Whether a recipe with these facet keys (as [`keys_text`] writes them) and this total time
    /// passes every filter but `exclude`.
    pub fn admit(&self, keys_text: &str, total_min: u32) -> bool {
        self.keys().iter().all(|key| keys_text.contains(&format!(" {key} ")))
            && self.max_min.is_none_or(|max| total_min <= max)
    }
}

/// The facet file for each filter; `None` where the filter matches nothing (no such file).
pub(super) fn facet_files(manifest: &Manifest, filters: &Filters) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> =
        filters.keys().iter().map(|key| manifest.facets.get(key).cloned()).collect();
    if let Some(max_min) = filters.max_min {
        let idx = manifest.max_total.partition_point(|(total, _)| *total <= max_min);
        out.push(idx.checked_sub(1).map(|idx| manifest.max_total[idx].1.clone()));
    }
    out
}
