//! The production layout through the real Worker with a local R2: static assets plus packs read by
//! byte range (issue 11).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use domain::layout::{Entry, Root, Shard};
use serde_json::Value;
use tests::Worker;

/// The build's root and every entry of its directory, its shards read from the directory packs.
pub fn directory(out: &Path) -> Result<(Root, Vec<Entry>)> {
    let assets = Path::new(&format!("{}.assets", out.display())).to_path_buf();
    let root: Root = serde_json::from_slice(&std::fs::read(assets.join(domain::layout::ROOT))?)?;
    let mut entries = Vec::new();
    for place in &root.shards {
        let pack = std::fs::read(format!("{}.r2/{}", out.display(), domain::layout::pack_key(place.pack)))?;
        let bytes = &pack[place.offset as usize..(place.offset + place.len) as usize];
        ensure!(Shard::hash(bytes) == place.hash, "a shard does not match root.json");
        entries.extend(Shard::decode(bytes)?.entries);
    }
    Ok((root, entries))
}

fn objects(out: &Path) -> Result<BTreeSet<String>> {
    let list = std::fs::read_to_string(format!("{}.r2/objects.txt", out.display()))?;
    Ok(list.lines().map(str::to_string).collect())
}

/// The first, a middle and the last file of a pack come back byte for byte, with their type and
/// validator; a recipe page, which is not stored, is rendered from the packed JSON.
pub async fn packed_files_read_whole_from_the_start_middle_and_end_of_a_pack(w: Arc<Worker>) -> Result<()> {
    let out = tests::root().join("dist");
    let (root, mut entries) = directory(&out)?;
    ensure!(!root.packs.is_empty(), "no packs");
    let files = walkdir::WalkDir::new(format!("{}.assets", out.display())).into_iter().count();
    ensure!(files < 20_000, "{files} static files");
    let pack = entries[0].pack;
    entries.retain(|e| e.pack == pack);
    entries.sort_by_key(|e| e.offset);
    let picks = [&entries[0], &entries[entries.len() / 2], &entries[entries.len() - 1]];
    let client = reqwest::Client::new();
    for entry in picks {
        let response = client.get(w.url(&format!("/{}", entry.path))).send().await?;
        ensure!(response.status() == 200, "{}: {}", entry.path, response.status());
        let headers = response.headers().clone();
        ensure!(headers["etag"] == entry.etag().as_str(), "{}: {headers:?}", entry.path);
        ensure!(
            headers["content-type"] == domain::layout::content_type(&entry.path),
            "{}: {headers:?}",
            entry.path
        );
        let body = response.bytes().await?;
        let on_disk = std::fs::read(out.join(&entry.path))?;
        ensure!(body.as_ref() == on_disk.as_slice(), "{}: the bytes differ", entry.path);
        let again = client
            .get(w.url(&format!("/{}", entry.path)))
            .header("If-None-Match", format!("\"x\", {}", entry.etag()))
            .send()
            .await?;
        ensure!(again.status() == 304, "{}: If-None-Match gave {}", entry.path, again.status());
    }
    let page = client.get(w.url("/r/shakshuka")).send().await?;
    ensure!(page.status() == 200, "page {}", page.status());
    ensure!(page.text().await?.contains("application/ld+json"), "the page has no JSON-LD");
    let missing = client.get(w.url("/r/no-such-recipe")).send().await?;
    ensure!(missing.status() == 404, "missing page {}", missing.status());
    Ok(())
}

/// A rebuild after one recipe changed adds one pack of files and one directory pack, and keeps every
/// other pack of files; the build puts them into the running Worker's local R2 itself (the worker's start
/// noted that R2 beside the build), so the Worker serves the new version at once.
pub async fn a_rebuild_after_one_change_adds_one_pack_and_serves_the_new_version(
    _: Arc<Worker>,
) -> Result<()> {
    let work = tests::root().join("tests/.work/layout-rebuild");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let (repo, out) = (work.join("repo"), work.join("dist"));
    tests::corpus::write_git_repo(&tests::root(), &repo, 300, 5)?;
    let build = || -> Result<()> {
        let built = std::process::Command::new(tests::root().join("target/release/builder"))
            .args(["build", "--git", repo.to_str().unwrap(), "--rev", "HEAD", "--out", out.to_str().unwrap()])
            .output()?;
        ensure!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        Ok(())
    };
    build()?;
    let before = objects(&out)?;
    let (root_before, _) = directory(&out)?;
    let w = Worker::start_with(tests::Config { out: Some(out.clone()), ..tests::Config::default() }).await?;

    let (_, entries) = directory(&out)?;
    let slug = entries
        .iter()
        .find_map(|e| {
            e.path.strip_prefix("r/").and_then(|p| p.strip_suffix(".json")).filter(|s| !s.contains('.'))
        })
        .context("a recipe")?
        .to_string();
    let served: Value = reqwest::get(w.url(&format!("/r/{slug}.json"))).await?.json().await?;
    tests::corpus::commit_one_change(&repo, &slug, "Now with more lemon.")?;
    build()?;
    let after = objects(&out)?;
    let added: BTreeSet<&String> = after.difference(&before).collect();
    let (root, entries) = directory(&out)?;
    let directory_packs: BTreeSet<String> =
        root.shards.iter().map(|place| domain::layout::pack_key(place.pack)).collect();
    let changed =
        entries.iter().find(|e| e.path == format!("r/{slug}.json")).context("the changed recipe")?;
    let files_pack = domain::layout::pack_key(changed.pack);
    let expected: BTreeSet<&String> = [&files_pack].into_iter().chain(&directory_packs).collect();
    ensure!(added == expected, "a one-recipe rebuild added {added:?}, not its pack and a directory pack");
    // The last directory pack is no longer named once all its shards were rewritten (R2 keeps it for
    // readers of the last build); every pack of files stays.
    let files_before: BTreeSet<String> = root_before.shards.iter().fold(before.clone(), |mut keys, place| {
        keys.remove(&domain::layout::pack_key(place.pack));
        keys
    });
    ensure!(files_before.is_subset(&after), "a one-recipe rebuild dropped packs: {before:?} → {after:?}");
    let on_disk: Value = serde_json::from_slice(&std::fs::read(out.join(format!("r/{slug}.json")))?)?;
    ensure!(on_disk != served, "the rebuild did not change {slug}");

    // The Worker looks at root.json again within a second.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now: Value = reqwest::get(w.url(&format!("/r/{slug}.json"))).await?.json().await?;
        if now == on_disk {
            break;
        }
        ensure!(Instant::now() < deadline, "the Worker still serves the old {slug}: {now}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
