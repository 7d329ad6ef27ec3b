//! The production layout through the real Worker with a local R2: static assets plus packs read by
//! byte range, and builds beside a running Worker.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use domain::site::layout::{Entry, Root, Shard};
use serde_json::Value;
use tests::Worker;

/// The build's root and every entry of its directory, its shards read from the directory packs.
pub fn directory(out: &Path) -> Result<(Root, Vec<Entry>)> {
    let assets = Path::new(&format!("{}.assets", out.display())).to_path_buf();
    let root: Root = serde_json::from_slice(&std::fs::read(assets.join(domain::site::layout::ROOT))?)?;
    let mut entries = Vec::new();
    for place in &root.shards {
        let pack =
            std::fs::read(format!("{}.r2/{}", out.display(), domain::site::layout::pack_key(place.pack)))?;
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
            headers["content-type"] == domain::site::layout::content_type(&entry.path),
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
pub async fn a_rebuild_after_one_change_adds_one_pack_and_serves_the_new_version() -> Result<()> {
    let (work, repo, out) = tests::corpus::built_git_repo("layout-rebuild", 300, 5)?;
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
    tests::build_git_head(&repo, &out)?;
    let after = objects(&out)?;
    let added: BTreeSet<&String> = after.difference(&before).collect();
    let (root, entries) = directory(&out)?;
    let directory_packs: BTreeSet<String> =
        root.shards.iter().map(|place| domain::site::layout::pack_key(place.pack)).collect();
    let changed =
        entries.iter().find(|e| e.path == format!("r/{slug}.json")).context("the changed recipe")?;
    let files_pack = domain::site::layout::pack_key(changed.pack);
    let expected: BTreeSet<&String> = [&files_pack].into_iter().chain(&directory_packs).collect();
    ensure!(added == expected, "a one-recipe rebuild added {added:?}, not its pack and a directory pack");
    // The last directory pack is no longer named once all its shards were rewritten (R2 keeps it for
    // readers of the last build); every pack of files stays.
    let files_before: BTreeSet<String> = root_before.shards.iter().fold(before.clone(), |mut keys, place| {
        keys.remove(&domain::site::layout::pack_key(place.pack));
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

/// What the reader beside a build saw.
#[derive(Debug, Default)]
struct Reads {
    n: usize,
    failures: Vec<String>,
    /// The number of lines of each whole `/recipes.jsonl` read: one build's dump or the next one's.
    dump_lines: BTreeSet<usize>,
}

/// The built files a reader asks for over and over while builds run beside the Worker.
const READ_THROUGHOUT: [&str; 6] =
    ["/api/shows", "/r/hummus.json", "/", "/api/recipes?q=hummus", "/recipes.jsonl", "/episodes.jsonl"];

/// Reads [`READ_THROUGHOUT`] until `stop`, noting every answer that is not a whole 200.
async fn read_throughout(base: String, stop: Arc<AtomicBool>, reads: Arc<Mutex<Reads>>) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("a client");
    while !stop.load(Ordering::Relaxed) {
        for path in READ_THROUGHOUT {
            let answer = match client.get(format!("{base}{path}")).send().await {
                Ok(response) => {
                    let status = response.status();
                    response.text().await.map(|body| (status, body)).map_err(|err| format!("{err:#}"))
                }
                Err(err) => Err(format!("{err:#}")),
            };
            let mut reads = reads.lock().expect("no reader panics");
            reads.n += 1;
            let at = timestamp();
            match answer {
                Err(err) => reads.failures.push(format!("{at} {path}: {err}")),
                Ok((status, body)) if status != 200 => reads
                    .failures
                    .push(format!("{at} {path}: {status} {}", body.chars().take(200).collect::<String>())),
                Ok((_, body)) if path.ends_with(".jsonl") => {
                    let lines: Vec<&str> = body.lines().collect();
                    if let Some(bad) = lines.iter().find(|line| serde_json::from_str::<Value>(line).is_err())
                    {
                        reads
                            .failures
                            .push(format!("{at} {path}: a line is not JSON: {}", &bad[..bad.len().min(80)]));
                    }
                    if path == "/recipes.jsonl" {
                        reads.dump_lines.insert(lines.len());
                    }
                }
                Ok((_, body)) if path != "/" && serde_json::from_str::<Value>(&body).is_err() => reads
                    .failures
                    .push(format!("{at} {path}: not JSON: {}", body.chars().take(200).collect::<String>())),
                Ok(_) => {}
            }
        }
    }
}

/// Seconds since the Unix epoch, to place a failure against the builds.
fn timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{:.3}", now.as_secs_f64())
}

/// Runs `builder build --content <content> --out <out>` as a contributor does in another terminal,
/// with nothing after it.
async fn build_by_hand(content: &Path, out: &Path) -> Result<String> {
    let built = tokio::process::Command::new(tests::builder_bin())
        .args(["build", "--content", content.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .await?;
    let said = String::from_utf8_lossy(&built.stderr).to_string();
    ensure!(built.status.success(), "{said}");
    Ok(said)
}

/// Waits until `path` answers 200 with a body that `ok` accepts.
async fn served(w: &Worker, path: &str, ok: impl Fn(&str) -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let response = reqwest::get(w.url(path)).await?;
        let status = response.status();
        let body = response.text().await?;
        if status == 200 && ok(&body) {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "{path} still answers {status}: {}", &body[..body.len().min(200)]);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A fresh copy of the sample content under `tests/.work/<name>/content`, built by hand into
/// `dist` beside it: (the work folder, the content, the build).
async fn sample_built_by_hand(name: &str) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let work = tests::root().join("tests/.work").join(name);
    let _ = std::fs::remove_dir_all(&work);
    let (content, out) = (work.join("content"), work.join("dist"));
    copy_tree(&tests::root().join("content"), &content)?;
    build_by_hand(&content, &out).await?;
    Ok((work, content, out))
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for item in walkdir::WalkDir::new(from) {
        let item = item?;
        let target: PathBuf = to.join(item.path().strip_prefix(from)?);
        if item.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            std::fs::copy(item.path(), &target)?;
        }
    }
    Ok(())
}

/// a full `builder build` by hand beside a running Worker broke every built file until a
/// restart. Built files read over and over throughout two such builds all answer a whole 200 — the
/// last build's until the new one is in place, the new one's after — and the new content is served:
/// first one added recipe, then 2,100 more, which double the directory's shards and cut the dump
/// into parts.
pub async fn a_full_build_beside_a_running_worker_keeps_every_read_200() -> Result<()> {
    let (work, content, out) = sample_built_by_hand("build-beside").await?;
    let n_sample = std::fs::read_dir(content.join("recipes"))?.count();
    let static_paths = || -> Result<BTreeSet<PathBuf>> {
        let assets = PathBuf::from(format!("{}.assets", out.display()));
        let mut paths = BTreeSet::new();
        for item in walkdir::WalkDir::new(&assets) {
            paths.insert(item?.path().strip_prefix(&assets)?.to_path_buf());
        }
        Ok(paths)
    };
    let sample_paths = static_paths()?;
    let w = Worker::start_with(tests::Config { out: Some(out.clone()), ..tests::Config::default() }).await?;

    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(Mutex::new(Reads::default()));
    let reader = tokio::spawn(read_throughout(w.base.clone(), stop.clone(), reads.clone()));
    tokio::time::sleep(Duration::from_secs(1)).await;

    // One recipe added, as a contributor checks theirs.
    let templates = tests::corpus::templates(&tests::root())?;
    let (slug, doc) = tests::corpus::generate(&templates, 0, 18);
    let title = doc["texts"].as_object().and_then(|texts| texts.values().next()).context("a text")?["title"]
        .as_str()
        .context("a title")?
        .to_string();
    std::fs::write(content.join(format!("recipes/{slug}.json")), serde_json::to_string_pretty(&doc)?)?;
    let n_before = reads.lock().unwrap().n;
    build_by_hand(&content, &out).await?;
    let during_first = reads.lock().unwrap().n - n_before;
    let on_disk = std::fs::read_to_string(out.join(format!("r/{slug}.json")))?;
    served(&w, &format!("/r/{slug}.json"), |body| body == on_disk).await?;
    let search = format!("/api/recipes?q={}&limit=100", url_encoded(&title));
    served(&w, &search, |body| body.contains(&format!("\"slug\":\"{slug}\""))).await?;
    served(&w, "/recipes.jsonl", |body| body.lines().count() == n_sample + 1).await?;

    // Then 2,100 more: the directory grows from one shard to several and the dump into parts.
    let mut last = String::new();
    for idx in 1..=2100 {
        let (slug, doc) = tests::corpus::generate(&templates, idx, 18);
        std::fs::write(content.join(format!("recipes/{slug}.json")), serde_json::to_string(&doc)?)?;
        last = slug;
    }
    let n_before = reads.lock().unwrap().n;
    build_by_hand(&content, &out).await?;
    let during_second = reads.lock().unwrap().n - n_before;
    let (root, _) = directory(&out)?;
    ensure!(root.shards.len() > 1, "the directory still has {} shard", root.shards.len());
    ensure!(out.join(domain::site::layout::dump_part(2)).is_file(), "the dump is not in parts");
    // What the running asset server knows from its start is still every static path there is.
    ensure!(static_paths()? == sample_paths, "the static paths changed: {:?}", static_paths()?);
    let on_disk = std::fs::read_to_string(out.join(format!("r/{last}.json")))?;
    served(&w, &format!("/r/{last}.json"), |body| body == on_disk).await?;
    let n_all = n_sample + 2101;
    served(&w, "/recipes.jsonl", |body| body.lines().count() == n_all).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;

    stop.store(true, Ordering::Relaxed);
    reader.await?;
    let reads = reads.lock().unwrap();
    ensure!(
        reads.failures.is_empty(),
        "{} of {} reads failed:\n{}",
        reads.failures.len(),
        reads.n,
        reads.failures.join("\n")
    );
    ensure!(
        during_first > 0 && during_second > 0,
        "no read ran during a build: {during_first}, {during_second}"
    );
    let builds: BTreeSet<usize> = [n_sample, n_sample + 1, n_all].into();
    ensure!(reads.dump_lines.is_subset(&builds), "a dump read mixed builds: {:?} lines", reads.dump_lines);
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// A root that names a pack the local R2 does not hold (a build whose packs nobody put there) leaves
/// the Worker on the last build, whole, instead of answering 500; once the packs are in, the new
/// build is served.
pub async fn a_root_naming_a_pack_r2_lacks_keeps_the_last_build_served() -> Result<()> {
    let (work, content, out) = sample_built_by_hand("root-ahead-of-r2").await?;
    let w = Worker::start_with(tests::Config { out: Some(out.clone()), ..tests::Config::default() }).await?;
    let old_dump = reqwest::get(w.url("/recipes.jsonl")).await?.text().await?;

    // Nothing notes this worker's local R2 beside the build any more.
    std::fs::remove_file(format!("{}.r2/local-r2.txt", out.display()))?;
    let templates = tests::corpus::templates(&tests::root())?;
    let (slug, doc) = tests::corpus::generate(&templates, 0, 19);
    std::fs::write(content.join(format!("recipes/{slug}.json")), serde_json::to_string_pretty(&doc)?)?;
    build_by_hand(&content, &out).await?;
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        for path in ["/r/hummus.json", "/api/recipes?q=hummus", "/search/manifest.json"] {
            let status = reqwest::get(w.url(path)).await?.status();
            ensure!(status == 200, "{path}: {status}");
        }
        let missing = reqwest::get(w.url(&format!("/r/{slug}.json"))).await?.status();
        ensure!(missing == 404, "/r/{slug}.json: {missing} before its pack is in R2");
        let dump = reqwest::get(w.url("/recipes.jsonl")).await?.text().await?;
        ensure!(dump == old_dump, "the dump changed before its pack was in R2");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    w.put_packs(&out)?;
    let on_disk = std::fs::read_to_string(out.join(format!("r/{slug}.json")))?;
    served(&w, &format!("/r/{slug}.json"), |body| body == on_disk).await?;
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
