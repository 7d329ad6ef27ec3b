//! The index's bytes: a term's postings (inline in its dictionary entry, or a file of three
//! disjoint bitmaps) and the dictionary shards.

use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

use crate::index::{IndexFile, bitmap_bytes, hashed_name};

/// Postings larger than this get a file of their own instead of sitting in the dictionary shard.
pub const INLINE_MAX_BYTES: usize = 64;

/// The postings of one term: the documents that have it, and those that have it in a title or in an
/// ingredient name.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct TermPostings {
    pub(super) any: RoaringBitmap,
    pub(super) title: RoaringBitmap,
    pub(super) ingredients: RoaringBitmap,
}

impl TermPostings {
    /// Postings small enough for the dictionary shard: document ids as gaps, and per document whether
    /// the term is in its title (1) or else in an ingredient (2). A few bytes a document, where three
    /// roaring bitmaps need some forty bytes even for one. Ranking asks about ingredients only where
    /// the title did not match, so both encodings keep ingredient matches outside titles only.
    pub(super) fn compact(&self) -> Vec<u8> {
        let mut gaps = Vec::with_capacity(self.any.len() as usize);
        let mut fields = Vec::with_capacity(self.any.len() as usize);
        let mut last = 0;
        for doc in &self.any {
            gaps.push(doc - last);
            last = doc;
            let (in_title, in_ingredient) = (self.title.contains(doc), self.ingredients.contains(doc));
            fields.push(if in_title { 1 } else { u8::from(in_ingredient) << 1 });
        }
        postcard::to_allocvec(&(gaps, fields)).expect("postings serialise")
    }

    pub(super) fn from_compact(bytes: &[u8]) -> Option<TermPostings> {
        let (gaps, fields): (Vec<u32>, Vec<u8>) = postcard::from_bytes(bytes).ok()?;
        if gaps.len() != fields.len() {
            return None;
        }
        let mut postings = TermPostings::default();
        let mut doc = 0u32;
        for (gap, field) in gaps.into_iter().zip(fields) {
            doc = doc.checked_add(gap)?;
            postings.any.insert(doc);
            if field & 1 == 1 {
                postings.title.insert(doc);
            }
            if field & 2 == 2 {
                postings.ingredients.insert(doc);
            }
        }
        Some(postings)
    }

    /// A postings file of its own: three disjoint bitmaps (in a title; else in an ingredient; else
    /// elsewhere), about half the bytes of storing "anywhere" beside the other two.
    pub(super) fn file_bytes(&self) -> Vec<u8> {
        let ingredients = &self.ingredients - &self.title;
        let elsewhere = &(&self.any - &self.title) - &ingredients;
        let (title, ingredients, elsewhere) =
            (bitmap_bytes(&self.title), bitmap_bytes(&ingredients), bitmap_bytes(&elsewhere));
        let bytes = PostingsBytes { title: &title, ingredients: &ingredients, elsewhere: &elsewhere };
        postcard::to_allocvec(&bytes).expect("postings serialise")
    }

    pub(super) fn from_file(bytes: &[u8]) -> Option<TermPostings> {
        let p: PostingsBytes = postcard::from_bytes(bytes).ok()?;
        let decode = |bytes: &[u8]| RoaringBitmap::deserialize_from(bytes).ok();
        let (title, ingredients, elsewhere) =
            (decode(p.title)?, decode(p.ingredients)?, decode(p.elsewhere)?);
        Some(TermPostings { any: &(&title | &ingredients) | &elsewhere, title, ingredients })
    }

    pub(super) fn remove(&mut self, doc: u32) {
        self.any.remove(doc);
        self.title.remove(doc);
        self.ingredients.remove(doc);
    }
}

/// A postings file: three disjoint portable roaring bitmaps.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct PostingsBytes<'a> {
    #[serde(borrow)]
    pub(super) title: &'a [u8],
    pub(super) ingredients: &'a [u8],
    pub(super) elsewhere: &'a [u8],
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) enum Entry<'a> {
    /// [`TermPostings::compact`] bytes.
    #[serde(borrow)]
    Inline(&'a [u8]),
    File(&'a str),
}

/// A dictionary shard: sorted terms and, for each, its document frequency and postings.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Shard<'a> {
    #[serde(borrow)]
    pub(super) terms: Vec<&'a str>,
    pub(super) entries: Vec<(u32, Entry<'a>)>,
}

/// A term's postings as its dictionary entry holds them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stored {
    Inline(Vec<u8>),
    File(String),
}

/// One dictionary entry on its way into a shard.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DictEntry {
    pub(super) term: String,
    pub(super) df: u32,
    pub(super) stored: Stored,
}

impl DictEntry {
    /// The entry of `term`, and the postings file it needs when its postings are too big to inline.
    /// A postings file is named by the term and its contents, so no two terms share one and a rebuild
    /// can drop a term's old file without asking who else uses it.
    pub(super) fn new(term: String, postings: &TermPostings) -> (DictEntry, Option<IndexFile>) {
        let df = postings.any.len() as u32;
        let compact = postings.compact();
        if compact.len() <= INLINE_MAX_BYTES {
            return (DictEntry { term, df, stored: Stored::Inline(compact) }, None);
        }
        let bytes = postings.file_bytes();
        let mut named = Vec::with_capacity(term.len() + 1 + bytes.len());
        named.extend_from_slice(term.as_bytes());
        named.push(0);
        named.extend_from_slice(&bytes);
        let name = hashed_name("post", &named);
        (DictEntry { term, df, stored: Stored::File(name.clone()) }, Some(IndexFile { name, bytes }))
    }

    /// What the entry adds to its shard, for deciding where shards split.
    pub(super) fn size(&self) -> usize {
        self.term.len()
            + match &self.stored {
                Stored::Inline(bytes) => bytes.len(),
                Stored::File(name) => name.len(),
            }
    }
}

pub(super) fn shard_bytes(entries: &[DictEntry], members: &[usize]) -> Vec<u8> {
    let shard = Shard {
        terms: members.iter().map(|&i| entries[i].term.as_str()).collect(),
        entries: members
            .iter()
            .map(|&i| {
                let entry = match &entries[i].stored {
                    Stored::Inline(bytes) => Entry::Inline(bytes),
                    Stored::File(name) => Entry::File(name),
                };
                (entries[i].df, entry)
            })
            .collect(),
    };
    postcard::to_allocvec(&shard).expect("shard serialises")
}

/// The entries of a shard file, owned.
pub(super) fn shard_entries(bytes: &[u8]) -> Option<Vec<DictEntry>> {
    let shard: Shard = postcard::from_bytes(bytes).ok()?;
    if shard.terms.len() != shard.entries.len() {
        return None;
    }
    Some(
        shard
            .terms
            .into_iter()
            .zip(shard.entries)
            .map(|(term, (df, entry))| DictEntry {
                term: term.to_string(),
                df,
                stored: match entry {
                    Entry::Inline(bytes) => Stored::Inline(bytes.to_vec()),
                    Entry::File(name) => Stored::File(name.to_string()),
                },
            })
            .collect(),
    )
}
