//! Static index files: the plumbing the recipe index (`search`) and the phrase index
//! (`quote::phrase`) share. An index is immutable files under one folder, read by a pure function that
//! answers or names the files it still needs ([`Need`]); the caller (the Worker from the build's
//! files, the builder from disk) loads those into its [`Files`] and calls again.

use std::collections::HashMap;

use roaring::RoaringBitmap;
use sha2::{Digest, Sha256};

/// One file of a built index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What a search needs before it can answer: files to load, by name relative to the index folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need(pub Vec<String>);

/// Where a search finds index files: the ones loaded so far.
pub trait Files {
    fn get(&self, name: &str) -> Option<&[u8]>;
}

impl Files for HashMap<String, Vec<u8>> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        HashMap::get(self, name).map(Vec::as_slice)
    }
}

/// A corrupt index file is a build defect, not a user error; the caller reports it as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt(pub String);

/// Why a search did not answer: it needs more files, or one of them is corrupt.
#[derive(Debug)]
pub enum SearchError {
    Need(Need),
    Corrupt(Corrupt),
}

impl From<Need> for SearchError {
    fn from(need: Need) -> Self {
        SearchError::Need(need)
    }
}

impl From<Corrupt> for SearchError {
    fn from(corrupt: Corrupt) -> Self {
        SearchError::Corrupt(corrupt)
    }
}

/// `Ok` when every named file is loaded, else the missing ones, sorted.
pub fn require(files: &impl Files, names: impl IntoIterator<Item = String>) -> Result<(), Need> {
    let mut missing: Vec<String> = names.into_iter().filter(|name| files.get(name).is_none()).collect();
    crate::sorted::sort(&mut missing);
    missing.dedup();
    if missing.is_empty() { Ok(()) } else { Err(Need(missing)) }
}

/// A bitmap in the portable roaring format, as index files hold it.
pub fn bitmap_bytes(bitmap: &RoaringBitmap) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(bitmap.serialized_size());
    bitmap.serialize_into(&mut bytes).expect("writing to a Vec cannot fail");
    bytes
}

/// A content-named file: `{kind}-{the first 8 bytes of its SHA-256, in hex}.bin`. Such a file never
/// changes, so a reader may keep it as long as it likes.
pub fn hashed_name(kind: &str, bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{kind}-{hex}.bin")
}

/// The bitmap file `file`, which must be loaded.
pub fn read_bitmap(files: &impl Files, file: &str) -> Result<RoaringBitmap, Corrupt> {
    let bytes = files.get(file).ok_or_else(|| corrupt(file))?;
    RoaringBitmap::deserialize_from(bytes).map_err(|_| corrupt(file))
}

/// The error a file that does not decode gives.
pub fn corrupt(file: &str) -> Corrupt {
    Corrupt(format!("index file {file} does not decode"))
}
