//! The builder as a contributor and a publisher run it: every diagnostic at once, byte-identical
//! output for one commit, and an incremental rebuild that equals a full one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tests::{corpus, root};

fn builder() -> PathBuf {
    let release = root().join("target/release/builder");
    if !release.exists() {
        let status =
            Command::new("cargo").args(["build", "--quiet", "--release", "-p", "builder"]).status().unwrap();
        assert!(status.success());
    }
    release
}

fn run(args: &[&str]) -> Output {
    Command::new(builder()).args(args).current_dir(root()).output().expect("the builder runs")
}

/// Every file under `dir` with its bytes, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn assert_same_tree(a: &Path, b: &Path) {
    let (a, b) = (tree(a), tree(b));
    let names = |t: &BTreeMap<String, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "the two builds hold different files");
    for (path, bytes) in &a {
        assert!(bytes == &b[path], "{path} differs");
    }
}

#[test]
fn a_bad_content_folder_lists_every_problem_and_writes_nothing() {
    let out = root().join("tests/.work/builds-bad-out");
    let _ = std::fs::remove_dir_all(&out);
    let output = run(&["build", "--content", "tests/data/bad-content", "--out", out.to_str().unwrap()]);
    assert!(!output.status.success());
    let expected = expect_test::expect![[r#"
        tests/data/bad-content/recipes/Bad_Name.json: (file name): `Bad_Name` is not a slug: use 3-80 lower-case letters, digits and single hyphens
        tests/data/bad-content/recipes/Bad_Name.json:2:1: (json): EOF while parsing an object
        tests/data/bad-content/recipes/bad-photo.json:13:58: photo.size: unknown field
        tests/data/bad-content/recipes/bad-photo.json:13:13: photo.file: must name an image under photos/: lower-case letters, digits, `-`, `_` and `.`, ending in .jpg, .jpeg, .png, .webp
        tests/data/bad-content/recipes/bad-photo.json:13:3: photo.licence: is required: open data must say under which licence the photo is
        tests/data/bad-content/recipes/bad-photo.json:13:44: photo.credit: must not be empty
        tests/data/bad-content/recipes/hidden-text.json:2:3: emoji: must be exactly one emoji character, such as 🍲
        tests/data/bad-content/recipes/hidden-text.json:15:7: texts.en.title: character 5 is the control character U+0000; a single line takes none
        tests/data/bad-content/recipes/hidden-text.json:16:7: texts.en.summary: the bidirectional control U+202E at character 6 is not closed by U+202C in the same line
        tests/data/bad-content/recipes/hidden-text.json:17:42: texts.en.ingredients[0].i: character 6 is the control character U+0007; a single line takes none
        tests/data/bad-content/recipes/hidden-text.json:18:18: texts.en.steps[0].t: character 8 is the control character U+001B; only newline and tab may appear
        tests/data/bad-content/recipes/two-mistakes.json:3:3: course: must be one of breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics
        tests/data/bad-content/recipes/two-mistakes.json:6:3: cook_min: must be between 0 and 10080
        tests/data/bad-content/recipes/two-mistakes.json:17:24: texts.en.ingredients[0].q: must be a number from 0.01 to 100000
        tests/data/bad-content/recipes/two-mistakes.json:18:42: texts.en.steps[0].f[0]: must be one of knife, hot, oven, blender, boil
    "#]];
    expected.assert_eq(&String::from_utf8_lossy(&output.stdout));
    assert!(!out.exists(), "a failed build wrote {}", out.display());
}

/// What the content repo's pull-request workflow runs: GitHub shows each line on its file and line.
#[test]
fn check_for_github_reports_each_problem_as_an_annotation_on_its_file_and_line() {
    let output = run(&["check", "--content", "tests/data/bad-content", "--format", "github"]);
    assert!(!output.status.success());
    let expected = expect_test::expect![[r#"
        ::error file=tests/data/bad-content/recipes/Bad_Name.json::(file name): `Bad_Name` is not a slug: use 3-80 lower-case letters, digits and single hyphens
        ::error file=tests/data/bad-content/recipes/Bad_Name.json,line=2,col=1::(json): EOF while parsing an object
        ::error file=tests/data/bad-content/recipes/bad-photo.json,line=13,col=58::photo.size: unknown field
        ::error file=tests/data/bad-content/recipes/bad-photo.json,line=13,col=13::photo.file: must name an image under photos/: lower-case letters, digits, `-`, `_` and `.`, ending in .jpg, .jpeg, .png, .webp
        ::error file=tests/data/bad-content/recipes/bad-photo.json,line=13,col=3::photo.licence: is required: open data must say under which licence the photo is
        ::error file=tests/data/bad-content/recipes/bad-photo.json,line=13,col=44::photo.credit: must not be empty
        ::error file=tests/data/bad-content/recipes/hidden-text.json,line=2,col=3::emoji: must be exactly one emoji character, such as 🍲
        ::error file=tests/data/bad-content/recipes/hidden-text.json,line=15,col=7::texts.en.title: character 5 is the control character U+0000; a single line takes none
        ::error file=tests/data/bad-content/recipes/hidden-text.json,line=16,col=7::texts.en.summary: the bidirectional control U+202E at character 6 is not closed by U+202C in the same line
        ::error file=tests/data/bad-content/recipes/hidden-text.json,line=17,col=42::texts.en.ingredients[0].i: character 6 is the control character U+0007; a single line takes none
        ::error file=tests/data/bad-content/recipes/hidden-text.json,line=18,col=18::texts.en.steps[0].t: character 8 is the control character U+001B; only newline and tab may appear
        ::error file=tests/data/bad-content/recipes/two-mistakes.json,line=3,col=3::course: must be one of breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics
        ::error file=tests/data/bad-content/recipes/two-mistakes.json,line=6,col=3::cook_min: must be between 0 and 10080
        ::error file=tests/data/bad-content/recipes/two-mistakes.json,line=17,col=24::texts.en.ingredients[0].q: must be a number from 0.01 to 100000
        ::error file=tests/data/bad-content/recipes/two-mistakes.json,line=18,col=42::texts.en.steps[0].f[0]: must be one of knife, hot, oven, blender, boil
        ::error file=tests/data/bad-content/shows/bad-show/first-episode/episode.json,line=2,col=3::title: character 18 is the bidirectional control U+202E; leave it out: the page isolates this text already
        ::error file=tests/data/bad-content/shows/bad-show/first-episode/runs/edited.json,line=2,col=3::pipeline: must equal the file name `edited`
        ::error file=tests/data/bad-content/shows/bad-show/first-episode/runs/edited.json,line=7,col=45::segments[1].end_s: must not be before start_s
        ::error file=tests/data/bad-content/shows/bad-show/show.json,line=2,col=3::title: must not be empty
    "#]];
    expected.assert_eq(&String::from_utf8_lossy(&output.stdout));
}

#[test]
fn one_commit_builds_the_same_bytes_fully_or_incrementally() {
    let work = root().join("tests/.work/builds-incremental");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let repo = work.join("repo");
    // Two short of two dump parts, so adding recipes splits the dump.
    let n = 2047;
    let mut commits = vec![corpus::write_git_repo(&root(), &repo, n, 5).unwrap()];
    let first = corpus::first_slug(&repo).unwrap();
    commits.push(corpus::commit_one_change(&repo, &first, "Less salt.").unwrap());

    // Two new recipes, one sorting before every other, and a change to one already built.
    let with_words = |words: &str| {
        let mut doc = corpus::recipe_at_head(&repo, &first).unwrap();
        for text in doc["texts"].as_object_mut().unwrap().values_mut() {
            text["summary"] = format!("{} {words}", text["summary"].as_str().unwrap()).into();
        }
        doc
    };
    let early = with_words("Aardvarkless quince jam.");
    let mut late = with_words("Zucchini bread with quince.");
    late["course"] = "baking".into();
    let mut changed = corpus::recipe_at_head(&repo, &first).unwrap();
    changed["course"] = "side".into();
    let added = [
        ("aaa-quince-jam", Some(early)),
        ("zzz-zucchini-bread", Some(late)),
        (first.as_str(), Some(changed)),
    ];
    commits.push(corpus::commit_recipes(&repo, &added, "Two new recipes").unwrap());
    // A change and its revert, built as one step: no diff, but two more commits in the history.
    let before = corpus::recipe_at_head(&repo, "zzz-zucchini-bread").unwrap();
    let mut tried = before.clone();
    tried["servings"] = 12.into();
    corpus::commit_recipes(&repo, &[("zzz-zucchini-bread", Some(tried))], "Feeds a crowd").unwrap();
    commits.push(
        corpus::commit_recipes(&repo, &[("zzz-zucchini-bread", Some(before))], "No, it does not").unwrap(),
    );
    // Removing one moves the ids after it: a full build.
    commits.push(corpus::commit_recipes(&repo, &[("aaa-quince-jam", None)], "Not a jam after all").unwrap());
    // Removed and added back the same, as two commits: it takes the last id, so a full build too.
    let again = corpus::recipe_at_head(&repo, &first).unwrap();
    corpus::commit_recipes(&repo, &[(first.as_str(), None)], "Gone").unwrap();
    commits.push(corpus::commit_recipes(&repo, &[(first.as_str(), Some(again))], "Back").unwrap());

    let build = |rev: &str, out: &Path| {
        let output =
            run(&["build", "--git", repo.to_str().unwrap(), "--rev", rev, "--out", out.to_str().unwrap()]);
        let said = |bytes: &[u8]| String::from_utf8_lossy(bytes).to_string();
        assert!(output.status.success(), "{}{}", said(&output.stdout), said(&output.stderr));
        said(&output.stderr)
    };
    let incremental = work.join("incremental");
    build(&commits[0], &incremental);
    let expected = [
        format!("rebuilt 1 changed of {n}"),
        format!("rebuilt 3 changed of {}", n + 2),
        format!("rebuilt 0 changed of {}", n + 2),
        format!("built {} recipes", n + 1),
        format!("built {} recipes", n + 1),
    ];
    let mut dump_parts = Vec::new();
    for (commit, said) in commits[1..].iter().zip(expected) {
        let told = build(commit, &incremental);
        assert!(told.contains(&said), "expected `{said}`: {told}");
        let full = work.join("full");
        let _ = std::fs::remove_dir_all(&full);
        build(commit, &full);
        assert_same_tree(&incremental, &full);
        dump_parts
            .push(tree(&incremental).into_keys().filter(|p| p.starts_with("recipes")).collect::<Vec<_>>());
    }
    // Each part of the dump has its Cooklang zip (issue 16), written and removed with it.
    let names = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let one = names(&["recipes-cooklang.zip", "recipes.jsonl"]);
    let two = names(&[
        "recipes-0001.jsonl",
        "recipes-0002.jsonl",
        "recipes-cooklang-0001.zip",
        "recipes-cooklang-0002.zip",
    ]);
    assert_eq!(dump_parts, [one.clone(), two.clone(), two, one.clone(), one], "2,048 recipes a part");
    let again = work.join("again");
    build(commits.last().unwrap(), &again);
    assert_same_tree(&incremental, &again);

    // A last build that was tampered with is not patched: the builder says so and builds everything.
    std::fs::remove_file(incremental.join("search/manifest.json")).unwrap();
    let last = corpus::commit_one_change(&repo, &first, "A pinch more.").unwrap();
    let told = build(&last, &incremental);
    assert!(
        told.contains("cannot be reused") && told.contains(&format!("built {} recipes", n + 1)),
        "{told}"
    );
    build(&last, &again);
    assert_same_tree(&incremental, &again);
    let _ = std::fs::remove_dir_all(&work);
}

/// Issue 18: an incremental rebuild wrote the site-wide files over the last build's in place, and the
/// served static assets are hard links to them, so a running server could read half a file. A file
/// a reader opened before the rebuild keeps its bytes; the rebuilt ones are new files, relinked.
#[test]
fn a_rebuild_never_rewrites_a_served_file_in_place() {
    use std::io::{Read as _, Seek as _};
    let work = root().join("tests/.work/builds-in-place");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let (repo, out) = (work.join("repo"), work.join("dist"));
    corpus::write_git_repo(&root(), &repo, 50, 7).unwrap();
    let build = || {
        let args = ["build", "--git", repo.to_str().unwrap(), "--out", out.to_str().unwrap()];
        let output = run(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    build();
    let assets = work.join("dist.assets");
    let mut open: Vec<(String, std::fs::File, Vec<u8>)> = tree(&assets)
        .into_iter()
        .map(|(path, bytes)| (path.clone(), std::fs::File::open(assets.join(&path)).unwrap(), bytes))
        .collect();
    corpus::commit_one_change(&repo, &corpus::first_slug(&repo).unwrap(), "More garlic.").unwrap();
    assert!(build().contains("rebuilt 1 changed"), "not an incremental rebuild");
    let mut changed = Vec::new();
    for (path, file, before) in &mut open {
        let mut now = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut now).unwrap();
        assert!(now == *before, "{path} was rewritten in place");
        if std::fs::read(assets.join(&*path)).unwrap() != *before {
            changed.push(path.clone());
        }
    }
    assert!(changed.contains(&"SHA256SUMS".to_string()), "the rebuild served no new file: {changed:?}");
    let _ = std::fs::remove_dir_all(&work);
}

/// The deploy tests share the generated `.wrangler-deploy.json` at the repository root.
static DEPLOY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A site to deploy under `work`: built by the builder, plus stand-in R2 packs while the build writes
/// none, and a wrangler.toml that names the packs bucket. Returns the build output folder.
fn site_to_deploy(work: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).unwrap();
    let out = work.join("site");
    let output = run(&["build", "--content", "content", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    if !root().join("edge/build/worker/shim.mjs").exists() {
        let status = Command::new("bash").args(["scripts/build.sh", "worker"]).current_dir(root()).status();
        assert!(status.unwrap().success());
    }
    let r2 = work.join("site.r2");
    if !r2.join("objects.txt").exists() {
        std::fs::create_dir_all(r2.join("packs")).unwrap();
        for key in ["packs/aa.pack", "packs/bb.pack"] {
            std::fs::write(r2.join(key), key).unwrap();
        }
        std::fs::write(r2.join("objects.txt"), "packs/aa.pack\npacks/bb.pack\n").unwrap();
    }
    let mut toml = std::fs::read_to_string(root().join("wrangler.toml")).unwrap();
    if !toml.contains("binding = \"PACKS\"") {
        toml.push_str("\n[[r2_buckets]]\nbinding = \"PACKS\"\nbucket_name = \"commonplace-packs\"\n");
    }
    std::fs::write(work.join("wrangler.toml"), toml).unwrap();
    out
}

fn deploy(work: &Path, out: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let output = Command::new("bash")
        .arg("scripts/deploy.sh")
        .args(["--no-build", "--out", out.to_str().unwrap()])
        .args(args)
        .current_dir(root())
        .env_remove("CLOUDFLARE_API_TOKEN")
        .env("DEPLOY_WRANGLER_TOML", work.join("wrangler.toml"))
        .env("DEPLOY_STATE", work.join("state"))
        .envs(env.iter().copied())
        .output()
        .expect("bash runs");
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

fn deploy_config() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(".wrangler-deploy.json")).unwrap()).unwrap()
}

#[test]
fn deploy_dry_run_does_every_step_locally_and_needs_no_account() {
    let _lock = DEPLOY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let work = root().join("tests/.work/deploy-dry-run");
    let out = site_to_deploy(&work);
    let (ok, said) = deploy(&work, &out, &["--dry-run"], &[("GITHUB_CLIENT_ID", "Iv1.test")]);
    assert!(ok, "{said}");
    let n_objects = std::fs::read_to_string(work.join("site.r2/objects.txt")).unwrap().lines().count();
    for step in [
        "applying D1 migrations".to_string(),
        format!("uploading {n_objects} new R2 object(s) to commonplace-packs"),
        "--dry-run: exiting now.".to_string(),
        "dry run complete".to_string(),
    ] {
        assert!(said.contains(&step), "no `{step}` in:\n{said}");
    }
    let config = deploy_config();
    assert_eq!(config["vars"]["ENVIRONMENT"], "production", "local sign-in must be off in production");
    assert_eq!(config["vars"]["GITHUB_CLIENT_ID"], "Iv1.test");
    assert!(config.get("build").is_none(), "wrangler would rebuild the site from the work tree");
    assert_eq!(config["d1_databases"][0]["database_id"], "7e2b5f0a-0c0d-4c3e-9a51-0000c0ffee00");
    let assets = config["assets"]["directory"].as_str().unwrap();
    assert!(assets.starts_with(out.to_str().unwrap()), "{assets}");

    let (ok, said) = deploy(&work, &out, &[], &[]);
    assert!(!ok && said.contains("CLOUDFLARE_API_TOKEN is not set"), "{said}");
}

/// A real deploy against a stand-in wrangler that keeps the account's state in files: the first run
/// creates the database and the bucket and uploads every object, the second creates and uploads nothing.
#[test]
fn deploy_creates_what_is_missing_once_and_uploads_each_object_once() {
    let _lock = DEPLOY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let work = root().join("tests/.work/deploy-twice");
    let out = site_to_deploy(&work);
    let account = work.join("account");
    std::fs::create_dir_all(&account).unwrap();
    let fake = work.join("wrangler");
    std::fs::write(
        &fake,
        r#"#!/usr/bin/env bash
set -euo pipefail
account="$(dirname "$0")/account"
echo "$*" >>"$account/calls"
case "$1 $2" in
  "d1 list") if [ -e "$account/d1" ]; then echo '[{"uuid": "0d1-real-id", "name": "commonplace"}]'; else echo '[]'; fi ;;
  "d1 create") touch "$account/d1" ;;
  "r2 bucket")
    case "$3" in
      list) echo "Listing buckets..."; [ ! -e "$account/r2" ] || printf 'name:           commonplace-packs\ncreation_date:  2026-01-01\n' ;;
      create) touch "$account/r2" ;;
    esac ;;
  "deploy --config") [ "${4:-}" != --secrets-file ] || cp "$5" "$account/secrets" ;;
esac
"#,
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&fake, executable).unwrap();
    let env = [
        ("WRANGLER", fake.to_str().unwrap()),
        ("CLOUDFLARE_API_TOKEN", "test-token"),
        ("GITHUB_CLIENT_SECRET", "s3cret"),
    ];
    for _ in 0..2 {
        let (ok, said) = deploy(&work, &out, &[], &env);
        assert!(ok, "{said}");
        assert_eq!(deploy_config()["d1_databases"][0]["database_id"], "0d1-real-id");
    }
    let calls = std::fs::read_to_string(account.join("calls")).unwrap();
    let calls = calls.replace(work.to_str().unwrap(), "WORK");
    expect_test::expect![[r#"
        d1 list --json
        d1 create commonplace --no-update-config
        d1 list --json
        r2 bucket list
        r2 bucket create commonplace-packs --no-update-config
        d1 migrations apply DB --remote --config .wrangler-deploy.json
        r2 bulk put commonplace-packs --filename WORK/state/r2-pending.json --force --remote --config .wrangler-deploy.json
        deploy --config .wrangler-deploy.json --secrets-file WORK/state/secrets.json
        d1 list --json
        r2 bucket list
        d1 migrations apply DB --remote --config .wrangler-deploy.json
        deploy --config .wrangler-deploy.json --secrets-file WORK/state/secrets.json
    "#]].assert_eq(&calls);
    let secrets = std::fs::read_to_string(account.join("secrets")).unwrap();
    assert_eq!(secrets.trim(), r#"{"GITHUB_CLIENT_SECRET": "s3cret"}"#);
    assert!(!work.join("state/secrets.json").exists(), "the secrets file outlived the deploy");
}
