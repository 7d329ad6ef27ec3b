//! Retries made safe and failures told safely, through the real Worker and D1: `Idempotency-Key` on
//! the POSTs that create, and what an error on our side shows (a reference, nothing of the server).

use std::sync::Arc;

use anyhow::{Result, ensure};
use futures::future::join_all;
use serde_json::json;
use tests::Worker;
use tests::kitchen::key_for;

use crate::recipes_write::{Answer, Api, recipe};

async fn create_keyed(api: &Api, key: &str, doc: &serde_json::Value) -> Result<Answer> {
    let request = api
        .client
        .post(format!("{}/api/recipes", api.base))
        .bearer_auth(&api.key)
        .header("Idempotency-Key", key);
    api.send(request.json(doc)).await
}

/// How many recipes `owner` has in D1 titled `title` (creates and forks alike).
fn made(w: &Worker, owner: &str, title: &str) -> Result<u64> {
    let rows = w.d1_query(&format!(
        "SELECT count(*) AS n FROM recipes WHERE owner = '{owner}' \
         AND json_extract(doc, '$.texts.en.title') = '{title}'"
    ))?;
    Ok(rows.first().and_then(|row| row["n"].as_u64()).unwrap_or(0))
}

fn problem_type(answer: &Answer, status: u16, kind: &str) -> Result<()> {
    ensure!(answer.status.as_u16() == status, "expected {status}, got {}: {}", answer.status, answer.text);
    ensure!(answer.headers["content-type"] == "application/problem+json", "{:?}", answer.headers);
    ensure!(answer.body["type"] == format!("/problems/{kind}"), "{}", answer.body);
    Ok(())
}

pub async fn a_retried_create_with_its_idempotency_key_makes_one_recipe(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "retrying-cook").await?);
    let doc = recipe("Retried Radish Salad");
    let first = create_keyed(&api, "\"retry-1\"", &doc).await?;
    ensure!(first.status == 201, "{}", first.text);
    ensure!(!first.headers.contains_key("idempotent-replayed"), "{:?}", first.headers);
    // The answer was lost; the client sends the same request again.
    let again = create_keyed(&api, "\"retry-1\"", &doc).await?;
    ensure!(again.status == 201 && again.body == first.body, "{}", again.text);
    ensure!(again.headers["location"] == first.headers["location"], "{:?}", again.headers);
    ensure!(again.headers["etag"] == first.headers["etag"], "{:?}", again.headers);
    ensure!(again.headers["idempotent-replayed"] == "true", "{:?}", again.headers);
    ensure!(made(&w, "retrying-cook", "Retried Radish Salad")? == 1, "a second recipe was made");
    // Keys are the account's: another account's same key is its own request.
    let other = Api::new(&w, &key_for(&w, "other-retrying-cook").await?);
    let theirs = create_keyed(&other, "\"retry-1\"", &doc).await?;
    ensure!(theirs.status == 201 && theirs.body["owner"] == "other-retrying-cook", "{}", theirs.text);

    // The same key with another body is another request: 422, and nothing is made.
    let changed = create_keyed(&api, "\"retry-1\"", &recipe("Another Radish Salad")).await?;
    problem_type(&changed, 422, "idempotency-key-reused")?;
    ensure!(made(&w, "retrying-cook", "Another Radish Salad")? == 0, "the other body was stored");

    // A bare key, as most clients send it, is the same key as its quoted form.
    let bare = create_keyed(&api, "retry-1", &doc).await?;
    ensure!(bare.status == 201 && bare.body == first.body, "{}", bare.text);
    ensure!(bare.headers["idempotent-replayed"] == "true", "{:?}", bare.headers);

    // A header that is neither a Structured Field string nor a bare key is 400 naming it.
    for bad in ["retry 2", "\"\"", &format!("\"{}\"", "k".repeat(256)), "\"caf\u{e9}\""] {
        let refused = create_keyed(&api, bad, &doc).await;
        let Ok(refused) = refused else { continue }; // reqwest refuses non-ASCII header values itself
        problem_type(&refused, 400, "invalid-parameter")?;
        ensure!(refused.body["detail"].as_str().unwrap().contains("Idempotency-Key"), "{}", refused.body);
    }

    // A failed request is not remembered: the retry of an invalid body fails the same way, and the
    // key then serves a valid body.
    let mut invalid = doc.clone();
    invalid["course"] = json!("elevenses");
    let failed = create_keyed(&api, "\"retry-3\"", &invalid).await?;
    ensure!(failed.status == 422, "{}", failed.text);
    ensure!(create_keyed(&api, "\"retry-3\"", &invalid).await?.status == 422, "a failure was replayed");

    // Forks take a key too; the replay names the same fork.
    let fork = |key: &'static str| {
        let request = api
            .client
            .post(format!("{}/api/r/hummus/fork", api.base))
            .bearer_auth(&api.key)
            .header("Idempotency-Key", key);
        api.send(request)
    };
    let forked = fork("\"fork-1\"").await?;
    ensure!(forked.status == 201, "{}", forked.text);
    let replayed = fork("\"fork-1\"").await?;
    ensure!(replayed.status == 201 && replayed.body["slug"] == forked.body["slug"], "{}", replayed.text);
    Ok(())
}

pub async fn concurrent_creates_with_one_idempotency_key_make_one_recipe(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "hasty-cook").await?);
    let doc = recipe("Hasty Herb Salad");
    let answers = join_all((0..8).map(|_| create_keyed(&api, "\"hasty\"", &doc))).await;
    let mut slugs = Vec::new();
    for answer in answers {
        let answer = answer?;
        match answer.status.as_u16() {
            201 => slugs.push(answer.body["slug"].as_str().unwrap_or_default().to_string()),
            409 => problem_type(&answer, 409, "idempotency-key-in-flight")?,
            _ => anyhow::bail!("unexpected {}: {}", answer.status, answer.text),
        }
    }
    ensure!(!slugs.is_empty() && slugs.iter().all(|s| *s == slugs[0]), "{slugs:?}");
    ensure!(made(&w, "hasty-cook", "Hasty Herb Salad")? == 1, "more than one recipe was made");
    // Once the first is done, every retry gets its answer.
    let after = create_keyed(&api, "\"hasty\"", &doc).await?;
    ensure!(after.status == 201 && after.body["slug"] == slugs[0].as_str(), "{}", after.text);
    Ok(())
}

/// The `reference` of a problem for an error on our side: 16 hex digits.
fn reference_of(answer: &Answer) -> Result<String> {
    let reference = answer.body["reference"].as_str().unwrap_or_default().to_string();
    ensure!(
        reference.len() == 16 && reference.bytes().all(|b| b.is_ascii_hexdigit()),
        "no reference: {}",
        answer.text
    );
    Ok(reference)
}

/// Whether an answer shows anything of how the server is built.
fn leaks(answer: &Answer) -> Option<&'static str> {
    ["D1", "SQLITE", "sqlite", "no such table", "JsValue", "file://", "node_modules", "miniflare", "Error:"]
        .into_iter()
        .find(|inside| answer.text.contains(inside))
}

pub async fn an_internal_error_answers_a_reference_and_nothing_of_the_server() -> Result<()> {
    // A worker of its own: its database loses a table every write needs, a fault no retry mends.
    let w = Worker::start().await?;
    let api = Api::new(&w, &key_for(&w, "unlucky-cook").await?);
    w.d1_execute("DROP TABLE changes")?;
    let failed = api.create(&recipe("Unlucky Lentils")).await?;
    problem_type(&failed, 500, "internal")?;
    ensure!(leaks(&failed).is_none(), "the answer shows {:?}: {}", leaks(&failed), failed.text);
    let reference = reference_of(&failed)?;
    // The details are in the log, under the same reference.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let log = w.log();
        // The logged detail may run over several lines (a D1 error prints its cause on the next).
        let logged = log.find(&reference).map(|at| log[at..].chars().take(600).collect::<String>());
        if logged.is_some_and(|entry| entry.contains("no such table")) {
            break;
        }
        ensure!(std::time::Instant::now() < deadline, "the log has no line for {reference}:\n{log}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // Nothing was half stored, and the next failure has a reference of its own.
    ensure!(made(&w, "unlucky-cook", "Unlucky Lentils")? == 0, "the recipe row outlived its transaction");
    let again = api.create(&recipe("Unlucky Lentils")).await?;
    ensure!(reference_of(&again)? != reference, "{}", again.text);
    Ok(())
}

/// Holds an exclusive lock on each of the worker's D1 files for `hold`, from another process, as a
/// second writer of the database would; returns once the lock is held.
async fn lock_database(w: &Worker, hold: std::time::Duration) -> Result<tokio::process::Child> {
    let files = w.d1_files();
    ensure!(!files.is_empty(), "no D1 file under the worker's state");
    let script = "import sqlite3, sys, time\n\
        held = []\n\
        for path in sys.argv[2:]:\n\
        \x20   c = sqlite3.connect(path, isolation_level=None, timeout=0)\n\
        \x20   c.execute('BEGIN EXCLUSIVE')\n\
        \x20   held.append(c)\n\
        print('locked', flush=True)\n\
        time.sleep(float(sys.argv[1]))\n\
        for c in held: c.execute('COMMIT')\n";
    let mut child = tokio::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(hold.as_secs_f64().to_string())
        .args(&files)
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut out = tokio::io::BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line).await?;
    ensure!(line.trim() == "locked", "the lock was not taken: {line:?}");
    Ok(child)
}

/// Under a moment of `SQLITE_BUSY` an AI write answered 500 with D1's internals: a busy database is
/// tried again a few times (about half a second in all) before it is a 503 with `Retry-After`.
pub async fn a_moment_of_a_busy_database_is_retried_and_a_longer_one_is_503() -> Result<()> {
    let w = Worker::start().await?;
    let api = Api::new(&w, &key_for(&w, "patient-cook").await?);
    // Busy for a moment: the create waits it out.
    let mut lock = lock_database(&w, std::time::Duration::from_millis(250)).await?;
    let created = api.create(&recipe("Patient Lentils")).await?;
    lock.wait().await?;
    ensure!(created.status.as_u16() == 201, "{}: {}", created.status, created.text);
    // Busy for longer than the retries wait: 503 with Retry-After, nothing of the server, nothing stored.
    let mut lock = lock_database(&w, std::time::Duration::from_secs(3)).await?;
    let refused = api.create(&recipe("Impatient Lentils")).await?;
    lock.wait().await?;
    problem_type(&refused, 503, "unavailable")?;
    ensure!(refused.headers.contains_key("retry-after"), "{:?}", refused.headers);
    ensure!(leaks(&refused).is_none(), "the answer shows {:?}: {}", leaks(&refused), refused.text);
    ensure!(made(&w, "patient-cook", "Impatient Lentils")? == 0, "a refused create left a row");
    ensure!(made(&w, "patient-cook", "Patient Lentils")? == 1, "the waited-out create is stored once");
    Ok(())
}
