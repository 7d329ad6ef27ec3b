//! Facets: what a filter tests of a recipe, the facet bitmaps a build writes, and the filters of a
//! search with the files they read.

use std::collections::BTreeMap;

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use super::cards::Card;
use super::layout::Manifest;
use crate::index::{IndexFile, bitmap_bytes, hashed_name};
use crate::recipe::{Course, FLAGS, Lang};

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
        for (idx, flag) in FLAGS.iter().enumerate() {
            if (facets.flags >> idx) & 1 == 1 {
                bitmaps.entry(flag.to_string()).or_default().insert(doc);
            }
        }
        bitmaps.entry(format!("course:{}", facets.course.code())).or_default().insert(doc);
        for (idx, lang) in Lang::ALL.iter().enumerate() {
            if (facets.langs >> idx) & 1 == 1 {
                bitmaps.entry(format!("lang:{}", lang.code())).or_default().insert(doc);
            }
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

/// The facet file for each filter; `None` where the filter matches nothing (no such file).
pub(super) fn facet_files(manifest: &Manifest, filters: &Filters) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> =
        filters.flags.iter().map(|flag| manifest.facets.get(*flag).cloned()).collect();
    if let Some(course) = filters.course {
        out.push(manifest.facets.get(&format!("course:{}", course.code())).cloned());
    }
    if let Some(max_min) = filters.max_min {
        let idx = manifest.max_total.partition_point(|(total, _)| *total <= max_min);
        out.push(idx.checked_sub(1).map(|idx| manifest.max_total[idx].1.clone()));
    }
    out
}
