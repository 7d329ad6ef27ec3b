//! The builder as a contributor and a publisher run it: every diagnostic at once, byte-identical
//! output for one commit, and an incremental rebuild that equals a full one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tests::{corpus, root};

fn builder() -> PathBuf {
    let built = tests::builder_bin();
    if !built.exists() {
        let status = Command::new("cargo")
            .args(["build", "--quiet", "--profile", "local", "-p", "builder"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    built
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
    // Each part of the dump has its Cooklang zip, written and removed with it.
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

/// an incremental rebuild wrote the site-wide files over the last build's in place, and the
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
/// creates the database, the buckets and the intake's queue and uploads every object, the second creates
/// and uploads nothing.
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
      list)
        echo "Listing buckets..."
        for made in "$account"/r2-*; do
          [ ! -e "$made" ] || printf 'name:           %s\ncreation_date:  2026-01-01\n' "${made##*/r2-}"
        done ;;
      create) touch "$account/r2-$4" ;;
    esac ;;
  "queues list")
    for made in "$account"/queue-*; do [ ! -e "$made" ] || printf '│ %s │ 0 │ 1 │\n' "${made##*/queue-}"; done ;;
  "queues create") touch "$account/queue-$3" ;;
  "deploy --config")
    # The check before anything is sent: wrangler's bindings table for the generated config.
    if [[ " $* " == *" --dry-run "* ]]; then
      printf 'Your Worker has access to the following bindings:\nBinding  Resource\nenv.ENVIRONMENT ("production")  Environment Variable\n'
    fi
    while [ $# -gt 0 ]; do [ "$1" != --secrets-file ] || cp "$2" "$account/secrets"; shift; done ;;
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
        deploy --config .wrangler-deploy.json --dry-run --outdir WORK/state/deploy-check --env-file /dev/null
        d1 list --json
        d1 create commonplace --no-update-config
        d1 list --json
        r2 bucket list
        r2 bucket create commonplace-packs --no-update-config
        r2 bucket list
        r2 bucket create commonplace-intake --no-update-config
        queues list
        queues create commonplace-intake
        d1 migrations apply DB --remote --config .wrangler-deploy.json
        r2 bulk put commonplace-packs --filename WORK/state/r2-pending.json --force --remote --config .wrangler-deploy.json
        deploy --config .wrangler-deploy.json --env-file /dev/null --secrets-file WORK/state/secrets.json
        deploy --config .wrangler-deploy.json --dry-run --outdir WORK/state/deploy-check --env-file /dev/null
        d1 list --json
        r2 bucket list
        r2 bucket list
        queues list
        d1 migrations apply DB --remote --config .wrangler-deploy.json
        deploy --config .wrangler-deploy.json --env-file /dev/null --secrets-file WORK/state/secrets.json
    "#]].assert_eq(&calls);
    let secrets = std::fs::read_to_string(account.join("secrets")).unwrap();
    assert_eq!(secrets.trim(), r#"{"GITHUB_CLIENT_SECRET": "s3cret"}"#);
    assert!(!work.join("state/secrets.json").exists(), "the secrets file outlived the deploy");
}

/// `datapackage.json` listed only the Changelog's CC BY-SA 4.0 and CC0 for the episodes,
/// left out MIT and credited every show to Changelog Media. Each licence and credit now comes from
/// the shows' and episodes' own records (an episode's own licence included), and the package still
/// passes frictionless and the other validators users run.
#[test]
fn datapackage_credits_each_show_under_its_own_licence_and_holder() {
    let out = root().join("tests/.work/builds-two-licences");
    let _ = std::fs::remove_dir_all(&out);
    let output = run(&["build", "--content", "tests/data/two-licences", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let package: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("datapackage.json")).unwrap()).unwrap();
    let episodes = package["resources"].as_array().unwrap().iter().find(|r| r["name"] == "episodes").unwrap();
    let licences: Vec<String> = episodes["licenses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{} <{}> {}",
                l["name"].as_str().unwrap(),
                l["path"].as_str().unwrap(),
                l["title"].as_str().unwrap()
            )
        })
        .collect();
    expect_test::expect![[r#"
        CC-BY-4.0 <https://creativecommons.org/licenses/by/4.0/> CC-BY-4.0 — © Field Notes Radio (Field Notes, 1 episode)
        CC0-1.0 <https://creativecommons.org/publicdomain/zero/1.0/> CC0-1.0 — © Field Notes Radio (Field Notes, 1 episode)
        MIT <https://spdx.org/licenses/MIT.html> MIT — Copyright (c) 2026 Open Lab Collective (Open Lab, 1 episode)"#]]
    .assert_eq(&licences.join("\n"));
    let whole = serde_json::to_string(&package).unwrap();
    assert!(!whole.contains("Changelog"), "a show is credited to Changelog Media: {whole}");

    let checked = Command::new(root().join("tests/.venv/bin/python"))
        .args(["tests/validators/check_dist.py", out.to_str().unwrap()])
        .current_dir(root())
        .output()
        .expect("tests/.venv is installed (scripts/setup.sh --test)");
    let said =
        format!("{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    assert!(checked.status.success(), "the validators refuse the build:\n{said}");
}

/// `scripts/site-lib.sh`'s build folder and state folder for a content folder, as `scripts/dev.sh`
/// and `scripts/grant-editor.sh` compute them.
fn site_paths(content: &Path) -> (String, String) {
    let output = Command::new("bash")
        .args(["-c", r#"source scripts/site-lib.sh && site_paths "$1" && echo "$SITE_OUT $SITE_STATE""#, "-"])
        .arg(content)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let said = String::from_utf8_lossy(&output.stdout);
    let (out, state) = said.trim().split_once(' ').unwrap();
    (out.to_string(), state.to_string())
}

/// One SQL statement on the local D1 in `state`, as an operator runs it; the rows it returns.
fn local_d1(state: &str, sql: &str) -> Vec<serde_json::Value> {
    let output = Command::new(root().join("node_modules/.bin/wrangler"))
        .args(["d1", "execute", "DB", "--local", "--persist-to", state, "--json", "--command", sql])
        .current_dir(root())
        .env("WRANGLER_SEND_METRICS", "false")
        .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    answer[0]["results"].as_array().cloned().unwrap_or_default()
}

/// two content folders with one base name shared `.wrangler/sites/<name>/`, so a second
/// server silently served the first one's build; and the README's command that grants the editor
/// role changed the default site's database only. Each folder now has a site of its own, and
/// `scripts/grant-editor.sh <handle> <content>` changes that site's database and no other.
#[test]
fn two_content_folders_with_one_name_get_two_sites_and_grant_editor_reaches_the_right_one() {
    let work = root().join("tests/.work/builds-sites");
    let _ = std::fs::remove_dir_all(&work);
    let (a, b) = (work.join("a/content"), work.join("b/content"));
    for content in [&a, &b] {
        std::fs::create_dir_all(content.join("recipes")).unwrap();
    }
    let ((a_out, a_state), (b_out, b_state)) = (site_paths(&a), site_paths(&b));
    assert_ne!(a_out, b_out, "two folders named `content` share one build");
    assert_ne!(a_state, b_state, "two folders named `content` share one database");
    for (out, state) in [(&a_out, &a_state), (&b_out, &b_state)] {
        assert!(out.starts_with(".wrangler/sites/content-") && out.ends_with("/dist"), "{out}");
        assert!(state.starts_with(".wrangler/sites/content-") && state.ends_with("/state"), "{state}");
    }
    assert_eq!(site_paths(&root().join("content")), ("dist".into(), ".wrangler/state".into()));
    assert_eq!(site_paths(&a), (a_out.clone(), a_state.clone()), "the same folder, another site");

    // Both sites know the account; the grant names folder a.
    for state in [&a_state, &b_state] {
        let _ = std::fs::remove_dir_all(root().join(state));
        let migrated = Command::new(root().join("node_modules/.bin/wrangler"))
            .args(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state])
            .current_dir(root())
            .env("WRANGLER_SEND_METRICS", "false")
            .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
            .env("CI", "true")
            .output()
            .unwrap();
        assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
        local_d1(
            state,
            "INSERT INTO accounts (handle, display_name, created_at) VALUES ('ana-lima', 'Ana', '2026-01-01')",
        );
    }
    let grant = |args: &[&str]| {
        let output =
            Command::new("bash").arg("scripts/grant-editor.sh").args(args).current_dir(root()).output();
        let output = output.unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stderr).to_string())
    };
    let (ok, said) = grant(&["ana-lima", a.to_str().unwrap()]);
    assert!(ok, "{said}");
    let role = |state: &str| {
        local_d1(state, "SELECT role FROM accounts WHERE handle = 'ana-lima'")[0]["role"].clone()
    };
    assert_eq!(role(&a_state), "editor");
    assert_eq!(role(&b_state), "cook", "the grant reached another site");

    let (ok, said) = grant(&["nobody-here", a.to_str().unwrap()]);
    assert!(!ok && said.contains("no account has the handle nobody-here"), "{said}");
    let (ok, said) = grant(&["Robert'); DROP TABLE accounts;--", a.to_str().unwrap()]);
    assert!(!ok && said.contains("is not a handle"), "{said}");

    for out in [&a_out, &b_out] {
        let _ = std::fs::remove_dir_all(root().join(out).parent().unwrap());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// a `wrangler deploy --dry-run` in the project root, while `wrangler dev` servers with
/// development env files came and went, twice listed `env.ENVIRONMENT ("dev")` among the bindings.
/// Besides its config, wrangler reads `.env`/`.env.local` (every command), `.dev.vars` (dev), a
/// redirected config (`.wrangler/deploy/config.json`), `wrangler.json` before `wrangler.toml`, and
/// CLOUDFLARE_*/WRANGLER_* variables. In a checkout holding all of them, each saying `dev`, the deploy
/// neutralises them and ships production values; and it refuses, before it asks anything of
/// Cloudflare, a development value or a variable the production configuration does not name.
#[test]
fn deploy_refuses_development_values_before_it_sends_anything() {
    let work = root().join("tests/.work/deploy-refuses");
    let _ = std::fs::remove_dir_all(&work);
    let checkout = work.join("checkout");
    // The check reads the bindings, not the Worker or the site: a stand-in module and one asset do.
    let out = work.join("site");
    std::fs::create_dir_all(work.join("site.assets")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(work.join("site.assets/index.html"), "<!doctype html>").unwrap();
    std::fs::create_dir_all(checkout.join("edge/build/worker")).unwrap();
    std::fs::write(
        checkout.join("edge/build/worker/shim.mjs"),
        "export default { fetch() { return new Response(\"stand-in\"); } };\n",
    )
    .unwrap();
    std::fs::create_dir_all(checkout.join("scripts")).unwrap();
    std::fs::create_dir_all(checkout.join(".wrangler/deploy")).unwrap();
    std::fs::copy(root().join("scripts/deploy.sh"), checkout.join("scripts/deploy.sh")).unwrap();
    std::fs::copy(root().join("wrangler.toml"), checkout.join("wrangler.toml")).unwrap();
    for linked in ["node_modules", "migrations"] {
        std::os::unix::fs::symlink(root().join(linked), checkout.join(linked)).unwrap();
    }
    let dev_config = r#"{"name": "commonplace", "main": "edge/build/worker/shim.mjs",
        "compatibility_date": "2025-09-01", "vars": {"ENVIRONMENT": "dev", "FETCH_ALLOW_LOOPBACK": "1"}}"#;
    let dev_env = "CLOUDFLARE_ENV=dev\nCLOUDFLARE_INCLUDE_PROCESS_ENV=true\nENVIRONMENT=dev\n";
    for (path, text) in [
        (".dev.vars", "ENVIRONMENT=dev\nFETCH_ALLOW_LOOPBACK=1\n"),
        (".env", dev_env),
        (".env.local", dev_env),
        ("wrangler.json", dev_config),
        ("dev.json", dev_config),
        (".wrangler/deploy/config.json", r#"{"configPath": "../../dev.json"}"#),
    ] {
        std::fs::write(checkout.join(path), text).unwrap();
    }
    // A development section that CLOUDFLARE_ENV=dev (from .env or the environment) would deploy.
    let toml = std::fs::read_to_string(checkout.join("wrangler.toml")).unwrap();
    std::fs::write(
        checkout.join("wrangler.toml"),
        format!("{toml}\n[env.dev.vars]\nENVIRONMENT = \"dev\"\n"),
    )
    .unwrap();
    // wrangler itself, with every call it gets noted; `extra` goes on each `deploy`.
    let calls = checkout.join("calls");
    let recording = |extra: &str| {
        let path = checkout.join("wrangler-recording");
        let real = root().join("node_modules/.bin/wrangler");
        let script = format!(
            "#!/usr/bin/env bash\necho \"$*\" >>{calls:?}\nif [ \"$1\" = deploy ]; then exec {real:?} \"$@\" {extra}; fi\nexec {real:?} \"$@\"\n"
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let _ = std::fs::remove_file(&calls);
        path
    };
    let deploy = |args: &[&str], env: &[(&str, &str)], wrangler: &Path| {
        let output = Command::new("bash")
            .arg(checkout.join("scripts/deploy.sh"))
            .args(["--no-build", "--out", out.to_str().unwrap()])
            .args(args)
            .current_dir(&checkout)
            .env_remove("CLOUDFLARE_API_TOKEN")
            .env("WRANGLER", wrangler)
            .env("DEPLOY_STATE", checkout.join("state"))
            .env("CLOUDFLARE_ENV", "dev")
            .env("CLOUDFLARE_INCLUDE_PROCESS_ENV", "true")
            .env("ENVIRONMENT", "dev")
            .env("CI", "true")
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let said =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), said)
    };
    let asked = || std::fs::read_to_string(&calls).unwrap_or_default();

    // Every development file and variable above is neutralised: the check passes on production values.
    let plain = recording("");
    let (ok, said) = deploy(&["--check-only"], &[], &plain);
    assert!(ok, "{said}");
    for told in
        ["ignoring CLOUDFLARE_ENV", "ENVIRONMENT (\"production\")", "the deploy ships only production values"]
    {
        assert!(said.contains(told), "no `{told}` in:\n{said}");
    }
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(checkout.join(".wrangler-deploy.json")).unwrap())
            .unwrap();
    assert_eq!(config["vars"]["ENVIRONMENT"], "production");

    // A real deploy with a loopback address among the operator's settings stops at the check: the dry
    // run is the only thing wrangler was asked (no D1 or R2 look-up, no upload, no deploy).
    let _ = std::fs::remove_file(&calls);
    let (ok, said) = deploy(
        &[],
        &[("CLOUDFLARE_API_TOKEN", "not-a-real-token"), ("AI_BASE_URL", "http://127.0.0.1:9/v1")],
        &plain,
    );
    assert!(!ok && said.contains("AI_BASE_URL") && said.contains("refusing to deploy"), "{said}");
    let only_the_check = asked();
    assert_eq!(
        only_the_check.lines().count(),
        1,
        "wrangler was asked more than the dry run:\n{only_the_check}"
    );
    assert!(
        only_the_check.starts_with("deploy --config .wrangler-deploy.json --dry-run"),
        "{only_the_check}"
    );

    // A binding wrangler reports from outside the generated config (what the outside check saw).
    let (ok, said) = deploy(&["--check-only"], &[], &recording("--var ENVIRONMENT:dev"));
    assert!(!ok && said.contains("ENVIRONMENT is hidden"), "{said}");
    let (ok, said) = deploy(&["--check-only"], &[], &recording("--var DEBUG_PANEL:on"));
    assert!(!ok && said.contains("DEBUG_PANEL") && said.contains("is not named"), "{said}");

    // A development setting in the production configuration itself.
    let loopback = work.join("loopback.toml");
    std::fs::write(&loopback, toml.replacen("[vars]\n", "[vars]\nFETCH_ALLOW_LOOPBACK = \"1\"\n", 1))
        .unwrap();
    let (ok, said) =
        deploy(&["--check-only"], &[("DEPLOY_WRANGLER_TOML", loopback.to_str().unwrap())], &plain);
    assert!(!ok && said.contains("FETCH_ALLOW_LOOPBACK") && said.contains("development setting"), "{said}");
    let _ = std::fs::remove_dir_all(&work);
}

/// `builder check` said nothing about the episodes it checked, accepted `licence:
/// "Bogus-1.0"`, did not flag `names.json` labels that match no run or roster names that never speak,
/// and reported a `show.json` with an unknown field also as missing for each of its episodes.
#[test]
fn check_counts_episodes_and_flags_licences_labels_and_roster_names() {
    let output = run(&["check", "--content", "tests/data/bad-shows"]);
    assert!(!output.status.success());
    expect_test::expect![[r#"
        tests/data/bad-shows/shows/extra-field/show.json:4:10: (json): unknown field `colour`, expected one of `title`, `url`, `description`, `licence`, `attribution`, `feed_url`
        tests/data/bad-shows/shows/made-up-licence/show.json:3:3: licence: `Bogus-1.0` is not an id of the SPDX License List (spdx.org/licenses), such as CC-BY-SA-4.0, CC0-1.0 or MIT
        tests/data/bad-shows/shows/open-kitchen/mixed-up/episode.json:5:3: licence: `CC BY 4.0` is not an id of the SPDX License List (spdx.org/licenses), such as CC-BY-SA-4.0, CC0-1.0 or MIT
        tests/data/bad-shows/shows/open-kitchen/mixed-up/episode.json:8:6: roster[1].name: Zed Nobody never speaks: no speaker label of any run resolves to this name
        tests/data/bad-shows/shows/open-kitchen/mixed-up/names.json:4:5: labels.SPEAKER_09: matches no speaker label of any run of this episode
    "#]].assert_eq(&String::from_utf8_lossy(&output.stdout));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("checked 1 recipes, 3 shows, 3 episodes and 3 runs: 5 problem(s)"), "{said}");

    let output = run(&["check", "--content", "content"]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the sample content has problems: {}{said}",
        String::from_utf8_lossy(&output.stdout)
    );
    let recipes = std::fs::read_dir(root().join("content/recipes")).unwrap().count();
    let runs =
        walk_count(&root().join("content/shows"), |path| path.parent().is_some_and(|p| p.ends_with("runs")));
    let told = format!("checked {recipes} recipes, 4 shows, 12 episodes and {runs} runs: all valid");
    assert!(said.contains(&told), "no `{told}` in: {said}");
}

/// How many files under `dir` `wanted` picks.
fn walk_count(dir: &Path, wanted: impl Fn(&Path) -> bool) -> usize {
    tree(dir).keys().filter(|rel| wanted(&dir.join(rel))).count()
}

/// Asserts that `builder check` finds no problem in the content folder `content`.
fn assert_content_checks(content: &str) {
    let output = run(&["check", "--content", content]);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A content folder under tests/.work with no recipes and no shows yet.
fn empty_content(name: &str) -> PathBuf {
    let content = root().join("tests/.work").join(name);
    let _ = std::fs::remove_dir_all(&content);
    std::fs::create_dir_all(content.join("recipes")).unwrap();
    content
}

#[test]
fn import_feed_brings_a_shows_episodes_with_publisher_transcripts_and_fetches_nothing_inside() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let host = runtime.block_on(tests::scripted::podcast_host()).unwrap();
    let content = empty_content("import-feed");
    let feed = format!("http://{}/show", host.addr);
    let content_arg = content.to_string_lossy().to_string();
    let import = |env: &[(&str, &str)]| {
        Command::new(builder())
            .args(["import-feed", "--feed", &feed, "--content", &content_arg, "--show", "morning-ledger"])
            .args(["--created", "2026-11-02"])
            .env_remove("ENVIRONMENT")
            .env_remove("FETCH_ALLOW_LOOPBACK")
            .envs(env.iter().copied())
            .env_remove("AI_BASE_URL")
            .current_dir(root())
            .output()
            .unwrap()
    };
    // Loopback is never fetched, unless a development run names the pair.
    let output = import(&[]);
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("127.0.0.1: loopback address, never fetched for a user"), "{said}");
    let allowed = host.addr.to_string();
    let output = import(&[("FETCH_ALLOW_LOOPBACK", &allowed)]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("honoured only in a development run"));

    let dev = [("ENVIRONMENT", "dev"), ("FETCH_ALLOW_LOOPBACK", allowed.as_str())];
    let output = import(&dev);
    let said = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{said}");
    assert!(said.contains("2 of 4 items imported"), "{said}");
    assert!(
        said.contains("skipped \"A transcript that points inside\": ")
            && said
                .contains("169.254.169.254: link-local (cloud metadata) address, never fetched for a user"),
        "{said}"
    );
    assert!(said.contains("skipped \"Trailer\": no publisher transcript"), "{said}");

    let show = content.join("shows/morning-ledger");
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(show.join(path)).unwrap()).unwrap()
    };
    assert_eq!(read("show.json")["licence"], "CC-BY-4.0");
    let followed = read("show.json")["feed_url"].as_str().unwrap_or_default().to_string();
    assert!(followed.ends_with("/feed.xml"), "the show follows its feed, where it answered: {followed}");
    let budget = read("budget-day-the-harbour-vote/episode.json");
    assert_eq!(budget["source_url"], "https://ledger.example.org/episodes/budget-day");
    assert_eq!(budget["published"], "2026-11-02");
    assert_eq!(budget["audio_url"], "https://cdn.ledger.example.org/42.mp3");
    // Tom Adeyemi hosts the show but no voice of this episode is his.
    assert_eq!(
        budget["roster"],
        serde_json::json!([{"name": "Rosa Quint", "role": "host"}, {"name": "Ines Varga", "role": "guest"}])
    );
    let webvtt = read("budget-day-the-harbour-vote/runs/publisher-webvtt.json");
    assert_eq!(
        (webvtt["kind"].as_str(), webvtt["segments"].as_array().map(Vec::len)),
        (Some("asr"), Some(2))
    );
    let names = read("budget-day-the-harbour-vote/names.json");
    assert!(
        names["labels"]["Ines Varga"]["votes"].as_array().is_some_and(|votes| !votes.is_empty()),
        "{names}"
    );
    let rail = read("rail-strike-day-two/runs/publisher-srt.json");
    assert_eq!(rail["segments"][1]["text"], "Nobody expected the union to hold.");

    // What it wrote is valid content, and a second run imports nothing again.
    assert_content_checks(&content_arg);
    let before = tree(&content);
    let output = import(&dev);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("0 of 4 items imported") && said.contains("held already: \"Rail strike, day two\""),
        "{said}"
    );
    assert!(tree(&content) == before, "a second import changed the content");
}

#[test]
fn import_makes_a_complete_episode_and_a_reviewed_transcripts_voices_are_its_editors_decisions() {
    let content = empty_content("import-episode");
    std::fs::create_dir_all(content.join("shows/ledger")).unwrap();
    std::fs::write(content.join("shows/ledger/show.json"), r#"{"title": "Ledger", "licence": "CC-BY-4.0"}"#)
        .unwrap();
    let episode = content.join("shows/ledger/episode-one");
    let (episode_arg, content_arg) =
        (episode.to_string_lossy().to_string(), content.to_string_lossy().to_string());
    let import = |extra: &[&str]| {
        let mut args = vec!["import", "--format", "webvtt", "--input", "tests/data/transcripts/webvtt.vtt"];
        args.extend(["--out", &episode_arg, "--pipeline", "ledger-reviewed", "--kind", "human-edited"]);
        args.extend(extra);
        run(&args)
    };
    let output = import(&["--title", "Episode one"]);
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("a new episode (no episode.json in the folder yet) needs --source-url, --published"),
        "{said}"
    );
    assert!(!episode.exists(), "a refused import wrote something");

    let output = import(&[
        "--title",
        "Episode one",
        "--source-url",
        "https://ledger.example.org/1",
        "--published",
        "2026-11-01",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(episode.join(path)).unwrap()).unwrap()
    };
    assert_eq!(read("episode.json")["source_url"], "https://ledger.example.org/1");
    assert_eq!(read("runs/ledger-reviewed.json")["kind"], "human-edited");
    let names = read("names.json");
    assert_eq!(names["labels"]["Ben Okafor"]["human"]["name"], "Ben Okafor", "{names}");
    assert_eq!(names["labels"]["Eli Cohen"]["human"]["by"], "the transcript's editors", "{names}");
    assert_content_checks(&content_arg);
}

#[test]
fn import_episode_finds_an_episode_by_its_page_or_its_audio_and_says_what_an_unknown_audio_needs() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let host = runtime.block_on(tests::scripted::podcast_host()).unwrap();
    let content = empty_content("import-episode-by-address");
    let content_arg = content.to_string_lossy().to_string();
    let allowed = host.addr.to_string();
    let import = |address: &str, feeds: &[&str]| {
        let mut command = Command::new(builder());
        command.args(["import-episode", "--address", address, "--content", &content_arg, "--show", "ledger"]);
        for feed in feeds {
            command.args(["--feed", feed]);
        }
        command
            .args(["--created", "2026-11-02"])
            .env("ENVIRONMENT", "dev")
            .env("FETCH_ALLOW_LOOPBACK", &allowed)
            .env_remove("AI_BASE_URL")
            .current_dir(root())
            .output()
            .unwrap()
    };
    // By its page: the page names the feed, the feed's item for the page names the transcript.
    let page = format!("http://{}/self/episodes/budget-day", host.addr);
    let output = import(&page, &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let episode: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(content.join("shows/ledger/budget-day-the-harbour-vote/episode.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(episode["source_url"], page.as_str());
    assert!(content.join("shows/ledger/budget-day-the-harbour-vote/runs/publisher-webvtt.json").exists());
    assert!(content.join("shows/ledger/budget-day-the-harbour-vote/names.json").exists());
    // Asked again, it is held already: nothing changes.
    let before = tree(&content);
    let output = import(&page, &[]);
    let said = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success() && said.contains("held already"), "{said}");
    assert!(tree(&content) == before, "asking again changed the content");

    // Bounded: a page over its size, and redirects past the fifth.
    let said = |address: &str| String::from_utf8_lossy(&import(address, &[]).stderr).to_string();
    let big = said(&format!("http://{}/big", host.addr));
    assert!(big.contains("the page is larger than 2 MiB"), "{big}");
    let looped = said(&format!("http://{}/loop/1", host.addr));
    assert!(looped.contains("more than 5 redirects"), "{looped}");

    // By its audio, in the show's feed.
    let feed = format!("http://{}/self/feed.xml", host.addr);
    let output = import("https://cdn.ledger.example.org/41.mp3", &[&feed]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(content.join("shows/ledger/rail-strike-day-two/runs/publisher-srt.json").exists());

    // An audio file no feed lists needs a transcription service.
    let audio = format!("http://{}/audio/99.mp3", host.addr);
    let output = import(&audio, &[&feed]);
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("is an audio file that no followed feed lists") && said.contains("TRANSCRIBE_PROVIDER"),
        "{said}"
    );

    assert_content_checks(&content_arg);
}

/// A content folder of shows alone needed an empty `recipes/`; one that holds neither is most likely
/// not the content folder, and is refused saying so.
#[test]
fn a_content_folder_of_shows_alone_builds_and_one_of_neither_is_refused() {
    let work = root().join("tests/.work/builds-shows-alone");
    let _ = std::fs::remove_dir_all(&work);
    let content = work.join("content");
    std::fs::create_dir_all(&content).unwrap();
    let copied = Command::new("cp")
        .args(["-r", "tests/data/two-licences/shows", &content.to_string_lossy()])
        .current_dir(root())
        .status()
        .unwrap();
    assert!(copied.success());
    let check = run(&["check", "--content", &content.to_string_lossy()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let out = work.join("dist");
    let built = run(&["build", "--content", &content.to_string_lossy(), "--out", &out.to_string_lossy()]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    assert!(out.join("shows.json").exists() && out.join("recipes.jsonl").exists());

    let empty = work.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let refused = run(&["check", "--content", &empty.to_string_lossy()]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("neither recipes/ nor shows/"), "{said}");
    let _ = std::fs::remove_dir_all(&work);
}

/// `builder embed-voice` gives the speaker embedding the Python package Resemblyzer gives the same
/// audio (tests/data/voices), names its model, and says why when a file is no audio.
#[test]
fn embed_voice_agrees_with_the_reference_package_and_names_its_model() {
    let dir = root().join("tests/data/voices");
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    let output = run(&["embed-voice", "--audio", &dir.join("guest.wav").to_string_lossy()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["model"], "resemblyzer-ge2e-0.1.4");
    let ours: Vec<f64> =
        answer["embedding"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let theirs: Vec<f64> =
        reference["embeddings"]["guest"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(ours.len(), 256);
    let cosine: f64 = ours.iter().zip(&theirs).map(|(a, b)| a * b).sum();
    assert!(cosine >= 0.99, "cosine {cosine}");
    let refused = run(&["embed-voice", "--audio", &dir.join("README.md").to_string_lossy()]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("not audio this builder decodes"), "{said}");
}
