//! The recipe dump: every published recipe, one JSON document a line, in search document order.
//!
//! A large dump is published in parts, so a download can be taken a part at a time and a rebuild
//! that changes or appends a recipe rewrites only the part it is in: a part ends after
//! [`PART_DOCS`] recipes, or earlier where the next line would take it past [`PART_MAX_BYTES`]. One
//! part is `recipes.jsonl`; more are `recipes-0001.jsonl`, `recipes-0002.jsonl`, … (names from
//! `domain::site::layout`, which packs them into R2 and which the Worker reads to serve the whole dump), and
//! `datapackage.json` lists them in order (a Frictionless resource with several paths). Each part has
//! a Cooklang twin (`cooklang_dump.rs`), written with it.

use std::collections::BTreeMap;
use std::ops::Range;

use anyhow::{Context, Result};
use domain::site::layout;

use crate::cooklang_dump;
use crate::output::Out;

/// Recipes in one part of the dump.
pub const PART_DOCS: usize = 2048;
/// A part never grows past this (the size of one download, and under a static asset's 25 MiB, which
/// the dumps were before they were packed).
pub const PART_MAX_BYTES: u64 = 20 << 20;

/// Each part's file name and documents, from every document's line length (newline included).
pub fn parts(lens: impl IntoIterator<Item = u64>) -> Vec<(String, Range<usize>)> {
    let mut ranges = Vec::new();
    let (mut start, mut bytes, mut n) = (0usize, 0u64, 0usize);
    for (doc, len) in lens.into_iter().enumerate() {
        if doc > start && (doc - start == PART_DOCS || bytes + len > PART_MAX_BYTES) {
            ranges.push(start..doc);
            (start, bytes) = (doc, 0);
        }
        bytes += len;
        n = doc + 1;
    }
    ranges.push(start..n);
    let single = ranges.len() == 1;
    ranges.into_iter().enumerate().map(|(idx, range)| (name(idx, single), range)).collect()
}

fn name(idx: usize, single: bool) -> String {
    if single { layout::DUMP.to_string() } else { layout::dump_part(idx + 1) }
}

/// Whether `path` is a part of the recipe dump, as JSON lines or as its Cooklang zip.
pub fn is_part(path: &str) -> bool {
    path == "recipes.jsonl"
        || (path.starts_with("recipes-") && path.ends_with(".jsonl") && !path.contains('/'))
        || cooklang_dump::is_zip(path)
}

/// Writes one part of the dump and its Cooklang zip.
fn write_part(out: &Out, name: &str, bytes: &[u8]) -> Result<()> {
    out.write(name, bytes)?;
    cooklang_dump::write(out, name, bytes)
}

/// Writes the dump of a full build as lines arrive, one part in memory at a time.
#[derive(Default)]
pub struct Writer {
    part: Vec<u8>,
    docs_in_part: usize,
    parts_written: usize,
}

impl Writer {
    pub fn line(&mut self, out: &Out, json: &str) -> Result<()> {
        let len = json.len() as u64 + 1;
        if self.docs_in_part > 0
            && (self.docs_in_part == PART_DOCS || self.part.len() as u64 + len > PART_MAX_BYTES)
        {
            // A second part is starting, so this one is the first of several.
            write_part(out, &name(self.parts_written, false), &self.part)?;
            self.parts_written += 1;
            self.part.clear();
            self.docs_in_part = 0;
        }
        self.part.extend_from_slice(json.as_bytes());
        self.part.push(b'\n');
        self.docs_in_part += 1;
        Ok(())
    }

    pub fn finish(self, out: &Out) -> Result<()> {
        write_part(out, &name(self.parts_written, self.parts_written == 0), &self.part)?;
        Ok(())
    }
}

/// Rewrites the parts a rebuild changed: those holding a document in `new_lines` (changed or added,
/// by document id) and those whose name or documents moved. The other documents' lines are copied
/// from the last build's parts. Returns the names of parts that are gone.
pub fn patch(
    out: &Out,
    old_lens: &[u64],
    new_lens: &[u64],
    new_lines: &BTreeMap<u32, &str>,
) -> Result<Vec<String>> {
    let old_parts = parts(old_lens.iter().copied());
    let new_parts = parts(new_lens.iter().copied());
    let mut offsets = Vec::with_capacity(old_lens.len() + 1);
    offsets.push(0u64);
    for len in old_lens {
        offsets.push(offsets.last().expect("starts with 0") + len);
    }
    let mut old_files: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut rewritten = Vec::new();
    for (name, range) in &new_parts {
        let same_place = old_parts.iter().any(|(old_name, old_range)| old_name == name && old_range == range);
        let touched = new_lines.range(range.start as u32..range.end as u32).next().is_some();
        if same_place && !touched {
            continue;
        }
        let mut bytes = Vec::new();
        for doc in range.clone() {
            if let Some(line) = new_lines.get(&(doc as u32)) {
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
                continue;
            }
            let part = old_parts.partition_point(|(_, r)| r.end <= doc);
            let (old_name, old_range) = old_parts.get(part).context("a kept recipe is in the last dump")?;
            let old_bytes = match old_files.entry(part) {
                std::collections::btree_map::Entry::Occupied(bytes) => bytes.into_mut(),
                std::collections::btree_map::Entry::Vacant(slot) => {
                    let path = out.root.join(old_name);
                    slot.insert(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?)
                }
            };
            let base = offsets[old_range.start];
            let (from, to) = ((offsets[doc] - base) as usize, (offsets[doc + 1] - base) as usize);
            bytes.extend_from_slice(
                old_bytes.get(from..to).context("the last dump is shorter than its state")?,
            );
        }
        rewritten.push((name.clone(), bytes));
    }
    drop(old_files);
    for (name, bytes) in rewritten {
        write_part(out, &name, &bytes)?;
    }
    let gone = old_parts
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !new_parts.iter().any(|(new, _)| new == name))
        .flat_map(|name| [cooklang_dump::zip_name(&name), name])
        .collect();
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_dumps_are_one_file_and_large_ones_are_cut_by_count_and_size() {
        assert_eq!(parts([10, 20]), vec![("recipes.jsonl".to_string(), 0..2)]);
        assert_eq!(parts([]), vec![("recipes.jsonl".to_string(), 0..0)]);
        let many = parts(std::iter::repeat_n(100, PART_DOCS + 1));
        assert_eq!(
            many,
            vec![
                ("recipes-0001.jsonl".to_string(), 0..PART_DOCS),
                ("recipes-0002.jsonl".to_string(), PART_DOCS..PART_DOCS + 1)
            ]
        );
        let big = parts([PART_MAX_BYTES - 10, 20, 5]);
        assert_eq!(big.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(), vec![0..1, 1..3]);
        assert!(is_part("recipes-0002.jsonl") && is_part("recipes.jsonl") && !is_part("r/recipes-x.jsonl"));
    }
}
