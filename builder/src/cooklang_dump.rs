//! The Cooklang dump: each part of the recipe dump again as a zip of `.cook` files, one per recipe
//! and language (`en/<slug>.cook`, `he/…`, `pt/…`), for CookCLI and the other Cooklang tools.
//!
//! A zip follows its part of `recipes.jsonl` (`recipes.jsonl` → `recipes-cooklang.zip`,
//! `recipes-0001.jsonl` → `recipes-cooklang-0001.zip`) and is written whenever that part is, from
//! the part's own lines, so a rebuild that rewrites one part rewrites one zip and the production layout
//! packs them like the other dumps. Entries carry a fixed date, so a zip is a function of its part and
//! a full build and an incremental one write the same bytes. The files' `source` is the recipe's path
//! on the site (`/r/<slug>`): the build does not know the address it will be served at.

use std::io::Write as _;

use anyhow::{Context, Result};
use domain::recipes::recipe::Published;
use zip::write::SimpleFileOptions;

use crate::output::Out;

/// The zip that goes with a part of the recipe dump.
pub fn zip_name(part: &str) -> String {
    match part.strip_prefix("recipes-").and_then(|rest| rest.strip_suffix(".jsonl")) {
        Some(number) => format!("recipes-cooklang-{number}.zip"),
        None => "recipes-cooklang.zip".to_string(),
    }
}

/// Whether `path` is one of the Cooklang zips.
pub fn is_zip(path: &str) -> bool {
    path.starts_with("recipes-cooklang") && path.ends_with(".zip") && !path.contains('/')
}

/// Writes the zip of the dump part `part` from its bytes (one published recipe a line).
pub fn write(out: &Out, part: &str, jsonl: &[u8]) -> Result<()> {
    let mut buffer = std::io::Cursor::new(Vec::with_capacity(jsonl.len() / 3));
    let mut zip = zip::ZipWriter::new(&mut buffer);
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    for line in jsonl.split(|b| *b == b'\n').filter(|line| !line.is_empty()) {
        let published: Published =
            serde_json::from_slice(line).with_context(|| format!("a line of {part}"))?;
        for lang in published.recipe.languages() {
            let cook = domain::recipes::cooking::cooklang::export(&published, lang, "");
            zip.start_file(format!("{}/{}.cook", lang.code(), published.slug), options)?;
            zip.write_all(cook.as_bytes())?;
        }
    }
    zip.finish()?;
    out.write(&zip_name(part), buffer.get_ref())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dump_part_has_its_zip() {
        assert_eq!(zip_name("recipes.jsonl"), "recipes-cooklang.zip");
        assert_eq!(zip_name("recipes-0007.jsonl"), "recipes-cooklang-0007.zip");
        assert!(is_zip("recipes-cooklang-0007.zip") && !is_zip("r/recipes-cooklang.zip"));
    }
}
