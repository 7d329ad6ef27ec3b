//! Every D1 query of the accounts and recipe-write side, so SQL lives in one file next to the schema
//! (`migrations/`). Multi-statement writes go through `batch`, which D1 runs as one transaction.

use domain::limits::LIVE_KEYS_PER_ACCOUNT;
use domain::recipe::Published;
use domain::search::overlay::{Entry, Listing, Posting, facets_of};
use domain::search::{Card, FACETS_VERSION};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use worker::wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result, Env};

use crate::error::{ApiError, Transient, transient};

pub fn db(env: &Env) -> Result<D1Database, ApiError> {
    Ok(env.d1("DB")?)
}

/// A bound argument: text, integer or null.
pub enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

impl From<&Arg<'_>> for JsValue {
    fn from(arg: &Arg<'_>) -> JsValue {
        match arg {
            Arg::Text(text) => JsValue::from_str(text),
            // D1 numbers are JavaScript numbers: exact up to 2^53, far beyond any id or time here.
            Arg::Int(n) => JsValue::from_f64(*n as f64),
            Arg::Null => JsValue::null(),
        }
    }
}

pub fn stmt(db: &D1Database, sql: &str, args: &[Arg]) -> Result<D1PreparedStatement, ApiError> {
    let values: Vec<JsValue> = args.iter().map(JsValue::from).collect();
    Ok(db.prepare(sql).bind(&values)?)
}

pub async fn first<T: DeserializeOwned>(
    db: &D1Database,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Option<T>, ApiError> {
    let statement = stmt(db, sql, args)?;
    Ok(retry(Retrying::of(sql), || statement.first::<T>(None)).await?)
}

pub async fn all<T: DeserializeOwned>(
    db: &D1Database,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Vec<T>, ApiError> {
    let statement = stmt(db, sql, args)?;
    Ok(retry(Retrying::of(sql), || statement.all()).await?.results::<T>()?)
}

/// Runs one statement and returns how many rows it changed.
pub async fn run(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> Result<usize, ApiError> {
    let statement = stmt(db, sql, args)?;
    let result = retry(Retrying::of(sql), || statement.run()).await?;
    Ok(result.meta()?.and_then(|meta| meta.changes).unwrap_or(0))
}

/// Runs statements as one transaction; returns the rows each changed.
pub async fn batch(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
) -> Result<Vec<usize>, worker::Error> {
    let results = batch_results(db, statements, Retrying::Busy).await?;
    results.iter().map(|result| Ok(result.meta()?.and_then(|meta| meta.changes).unwrap_or(0))).collect()
}

/// Runs statements as one transaction and returns their results; `retrying` says which failures
/// are tried again (reads: [`Retrying::Any`]).
async fn batch_results(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
    retrying: Retrying,
) -> Result<Vec<D1Result>, worker::Error> {
    retry(retrying, || db.batch(statements.clone())).await
}

/// Waits before each new try of a D1 call that failed for a passing reason: about half a second in
/// all, short enough for the request to stay well inside any client's patience.
const RETRY_WAITS_MS: [u64; 3] = [30, 120, 350];

/// Which failures a call is tried again after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retrying {
    /// Only [`Transient::Busy`]: a write.
    Busy,
    /// Every [`Transient`] failure: a read.
    Any,
}

impl Retrying {
    /// A statement that only reads may be asked again after any passing failure.
    fn of(sql: &str) -> Retrying {
        let read = sql.trim_start().get(..6).is_some_and(|verb| verb.eq_ignore_ascii_case("SELECT"));
        if read { Retrying::Any } else { Retrying::Busy }
    }

    fn covers(self, transient: Transient) -> bool {
        self == Retrying::Any || transient == Transient::Busy
    }
}

/// Runs a D1 call, and again after a short wait while it fails for a reason `retrying` covers.
async fn retry<T, F, Fut>(retrying: Retrying, mut call: F) -> Result<T, worker::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, worker::Error>>,
{
    for wait_ms in RETRY_WAITS_MS {
        match call().await {
            Err(err) if transient(&err.to_string()).is_some_and(|t| retrying.covers(t)) => {
                worker::Delay::from(std::time::Duration::from_millis(wait_ms)).await;
            }
            done => return done,
        }
    }
    call().await
}

/// Whether a failed write failed on a UNIQUE constraint (a slug taken by a concurrent write).
pub fn is_unique_violation(err: &worker::Error) -> bool {
    err.to_string().contains("UNIQUE constraint failed")
}

#[derive(Debug, Clone, Deserialize)]
pub struct Account {
    pub id: i64,
}

/// The account and key behind a bearer key.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyOwner {
    pub key_label: String,
    pub account_id: i64,
    pub handle: String,
    pub display_name: String,
    pub role: String,
}

pub async fn key_owner(db: &D1Database, key_hash: &str) -> Result<Option<KeyOwner>, ApiError> {
    first(
        db,
        "SELECT k.label AS key_label, a.id AS account_id, a.handle, a.display_name, a.role \
         FROM api_keys k JOIN accounts a ON a.id = k.account_id \
         WHERE k.key_hash = ?1 AND k.revoked_at IS NULL",
        &[Arg::Text(key_hash)],
    )
    .await
}

#[derive(Deserialize)]
struct Count {
    count: u32,
}

/// Counts one request of `subject` against `policy` in the window starting at `window_s` and returns
/// the window's count so far. The same transaction deletes every counter spent before `spent_before`,
/// so the table never holds more than the last hour's counters (and those spent since the last count).
pub async fn count_up(
    db: &D1Database,
    policy: &str,
    subject: &str,
    window_s: u64,
    spent_before: u64,
) -> Result<u32, ApiError> {
    let spent = stmt(db, "DELETE FROM limit_counts WHERE window_s < ?1", &[Arg::Int(spent_before as i64)])?;
    let count = stmt(
        db,
        "INSERT INTO limit_counts (policy, subject, window_s, count) VALUES (?1, ?2, ?3, 1) \
         ON CONFLICT (policy, subject, window_s) DO UPDATE SET count = count + 1 RETURNING count",
        &[Arg::Text(policy), Arg::Text(subject), Arg::Int(window_s as i64)],
    )?;
    let results = batch_results(db, vec![spent, count], Retrying::Busy).await?;
    let rows: Vec<Count> = match results.get(1) {
        Some(result) => result.results()?,
        None => Vec::new(),
    };
    Ok(rows.first().map_or(1, |row| row.count))
}

/// Gives one counted request back.
pub async fn count_down(db: &D1Database, policy: &str, subject: &str, window_s: u64) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE limit_counts SET count = count - 1 \
         WHERE policy = ?1 AND subject = ?2 AND window_s = ?3 AND count > 0",
        &[Arg::Text(policy), Arg::Text(subject), Arg::Int(window_s as i64)],
    )
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct KeyRow {
    pub id: i64,
    pub key_prefix: String,
    pub label: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// The account's keys for the kitchen: every live key, then the newest revoked ones, at most
/// `2 × LIVE_KEYS_PER_ACCOUNT` in all, so an account that has made and revoked many keys still gets a
/// short page.
pub async fn keys_of(db: &D1Database, account_id: i64) -> Result<Vec<KeyRow>, ApiError> {
    all(
        db,
        "SELECT id, key_prefix, label, created_at, revoked_at FROM api_keys WHERE account_id = ?1 \
         ORDER BY revoked_at IS NOT NULL, id DESC LIMIT ?2",
        &[Arg::Int(account_id), Arg::Int(i64::from(2 * LIVE_KEYS_PER_ACCOUNT))],
    )
    .await
}

/// Adds a key unless the account already holds `LIVE_KEYS_PER_ACCOUNT` live keys: the count and the
/// insert are one statement, so concurrent requests cannot pass the cap together. Returns whether
/// the key was added.
pub async fn add_key(
    db: &D1Database,
    account_id: i64,
    key_hash: &str,
    prefix: &str,
    label: &str,
    now: &str,
) -> Result<bool, ApiError> {
    let added = run(
        db,
        "INSERT INTO api_keys (account_id, key_hash, key_prefix, label, created_at) \
         SELECT ?1, ?2, ?3, ?4, ?5 \
         WHERE (SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND revoked_at IS NULL) < ?6",
        &[
            Arg::Int(account_id),
            Arg::Text(key_hash),
            Arg::Text(prefix),
            Arg::Text(label),
            Arg::Text(now),
            Arg::Int(i64::from(LIVE_KEYS_PER_ACCOUNT)),
        ],
    )
    .await?;
    Ok(added == 1)
}

/// How many live keys the account holds.
pub async fn live_keys(db: &D1Database, account_id: i64) -> Result<u32, ApiError> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS count FROM api_keys WHERE account_id = ?1 AND revoked_at IS NULL",
        &[Arg::Int(account_id)],
    )
    .await?;
    Ok(row.map_or(0, |row| row.count))
}

/// Revokes one of the account's own keys; a key of someone else's is left alone.
pub async fn revoke_key(db: &D1Database, account_id: i64, key_id: i64, now: &str) -> Result<usize, ApiError> {
    run(
        db,
        "UPDATE api_keys SET revoked_at = ?3 WHERE id = ?1 AND account_id = ?2 AND revoked_at IS NULL",
        &[Arg::Int(key_id), Arg::Int(account_id), Arg::Text(now)],
    )
    .await
}

/// The account with this GitHub id, made on first sign-in. The handle is the GitHub login, or the
/// login with a number when another account holds it already.
pub async fn github_account(
    db: &D1Database,
    github_id: i64,
    login: &str,
    name: &str,
    now: &str,
) -> Result<Account, ApiError> {
    let select = "SELECT id FROM accounts WHERE github_id = ?1";
    if let Some(account) = first::<Account>(db, select, &[Arg::Int(github_id)]).await? {
        return Ok(account);
    }
    for attempt in 1..=20 {
        let handle = if attempt == 1 { login.to_string() } else { format!("{login}-{attempt}") };
        let inserted = run(
            db,
            "INSERT INTO accounts (handle, display_name, github_id, created_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT DO NOTHING",
            &[Arg::Text(&handle), Arg::Text(name), Arg::Int(github_id), Arg::Text(now)],
        )
        .await?;
        if inserted == 1 || attempt == 20 {
            break;
        }
        if let Some(account) = first::<Account>(db, select, &[Arg::Int(github_id)]).await? {
            return Ok(account);
        }
    }
    first::<Account>(db, select, &[Arg::Int(github_id)])
        .await?
        .ok_or_else(|| ApiError::Internal(format!("no free handle for GitHub login {login}")))
}

/// The local (dev-only) account with this handle, made on first sign-in.
pub async fn local_account(db: &D1Database, handle: &str, now: &str) -> Result<Account, ApiError> {
    run(
        db,
        "INSERT INTO accounts (handle, display_name, created_at) VALUES (?1, ?1, ?2) ON CONFLICT DO NOTHING",
        &[Arg::Text(handle), Arg::Text(now)],
    )
    .await?;
    first(db, "SELECT id FROM accounts WHERE handle = ?1", &[Arg::Text(handle)])
        .await?
        .ok_or_else(|| ApiError::Internal("the account just made is missing".into()))
}

#[derive(Debug, Clone, Deserialize)]
pub struct Session {
    pub account_id: i64,
    pub handle: String,
    pub display_name: String,
    pub csrf: String,
}

pub async fn session(db: &D1Database, token_hash: &str, now_s: u64) -> Result<Option<Session>, ApiError> {
    first(
        db,
        "SELECT s.account_id, a.handle, a.display_name, s.csrf FROM sessions s \
         JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?1 AND s.expires_s > ?2",
        &[Arg::Text(token_hash), Arg::Int(now_s as i64)],
    )
    .await
}

/// Starts a session, and drops the sessions that have expired (nothing else ever reads them again).
pub async fn add_session(
    db: &D1Database,
    token_hash: &str,
    account_id: i64,
    csrf: &str,
    now: &str,
    now_s: u64,
    expires_s: u64,
) -> Result<(), ApiError> {
    let expired = stmt(db, "DELETE FROM sessions WHERE expires_s <= ?1", &[Arg::Int(now_s as i64)])?;
    let insert = stmt(
        db,
        "INSERT INTO sessions (token_hash, account_id, csrf, created_at, expires_s) VALUES (?1, ?2, ?3, ?4, ?5)",
        &[
            Arg::Text(token_hash),
            Arg::Int(account_id),
            Arg::Text(csrf),
            Arg::Text(now),
            Arg::Int(expires_s as i64),
        ],
    )?;
    batch(db, vec![expired, insert]).await?;
    Ok(())
}

pub async fn end_session(db: &D1Database, token_hash: &str) -> Result<(), ApiError> {
    run(db, "DELETE FROM sessions WHERE token_hash = ?1", &[Arg::Text(token_hash)]).await?;
    Ok(())
}

/// An overlay row: the newest API-written document of a recipe.
#[derive(Debug, Clone, Deserialize)]
pub struct OverlayRow {
    pub slug: String,
    pub account_id: i64,
    pub version: u64,
    pub doc: String,
}

pub async fn overlay(db: &D1Database, slug: &str) -> Result<Option<OverlayRow>, ApiError> {
    first(db, "SELECT slug, account_id, version, doc FROM recipes WHERE slug = ?1", &[Arg::Text(slug)]).await
}

#[derive(Debug, Clone, Deserialize)]
pub struct MyRecipe {
    pub slug: String,
    pub version: u64,
    pub forked_from: Option<String>,
    pub updated_at: String,
}

/// The account's `limit` most recently written recipes, newest first.
pub async fn recipes_of(db: &D1Database, account_id: i64, limit: u32) -> Result<Vec<MyRecipe>, ApiError> {
    all(
        db,
        "SELECT slug, version, forked_from, updated_at FROM recipes WHERE account_id = ?1 \
         ORDER BY updated_at DESC, slug LIMIT ?2",
        &[Arg::Int(account_id), Arg::Int(i64::from(limit))],
    )
    .await
}

/// Overlay slugs that are `base` or `base-<something>`: the ones a new slug must not collide with.
pub async fn slugs_like(db: &D1Database, base: &str) -> Result<Vec<String>, ApiError> {
    #[derive(Deserialize)]
    struct Slug {
        slug: String,
    }
    // A range, not `LIKE 'base-%'`: D1 refuses a LIKE pattern longer than 50 bytes ("LIKE or GLOB
    // pattern too complex"), and slugs run to 80. Slugs are `[a-z0-9-]`, so `base-` ≤ slug < `base.`
    // (`.` follows `-`) holds exactly those that start with `base-`.
    let (from, to) = (format!("{base}-"), format!("{base}."));
    let rows: Vec<Slug> = all(
        db,
        "SELECT slug FROM recipes WHERE slug = ?1 OR (slug >= ?2 AND slug < ?3)",
        &[Arg::Text(base), Arg::Text(&from), Arg::Text(&to)],
    )
    .await?;
    Ok(rows.into_iter().map(|row| row.slug).collect())
}

/// A new overlay row plus its change-feed item, in one transaction. Fails with a UNIQUE violation when
/// the slug was taken meanwhile (the caller picks the next one).
pub struct NewRow<'a> {
    pub slug: &'a str,
    pub account_id: i64,
    pub owner: &'a str,
    pub forked_from: Option<&'a str>,
    pub doc: &'a str,
    pub kind: &'a str,
    pub note: &'a str,
    pub now: &'a str,
    /// What the overlay search stores of the document: taken by the write, which turns it into
    /// statements and lets it go before it waits on D1.
    pub search: Entry,
}

/// Stores a new recipe, its feed item and its search rows in one transaction. What a write holds
/// while it waits on D1 is the document once (the feed item copies it from the row inside D1), so
/// many large writes in flight in one isolate stay small.
pub async fn insert_recipe(db: &D1Database, row: NewRow<'_>) -> Result<(), worker::Error> {
    let forked_from = row.forked_from.map_or(Arg::Null, Arg::Text);
    let insert = stmt(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?6)",
        &[
            Arg::Text(row.slug),
            Arg::Int(row.account_id),
            Arg::Text(row.owner),
            forked_from,
            Arg::Text(row.doc),
            Arg::Text(row.now),
        ],
    )
    .map_err(api_to_worker)?;
    let feed = first_feed_item(db, row.slug, row.kind, row.owner, row.note, row.now)?;
    let mut statements = vec![insert, feed];
    statements.extend(search_rows(db, row.slug, 1, row.search, Guard::Always).map_err(api_to_worker)?);
    batch(db, statements).await?;
    crate::waiting::note_waiting(row.slug, 1);
    Ok(())
}

/// The feed item of a recipe's first version (a create or a fork), after the statement inserting
/// the row: its document is the row's, copied inside D1 rather than sent twice.
fn first_feed_item(
    db: &D1Database,
    slug: &str,
    kind: &str,
    owner: &str,
    note: &str,
    now: &str,
) -> Result<D1PreparedStatement, worker::Error> {
    stmt(
        db,
        "INSERT INTO changes (slug, version, kind, owner, note, doc, at) \
         SELECT slug, 1, ?2, ?3, ?4, doc, ?5 FROM recipes WHERE slug = ?1 AND version = 1",
        &[Arg::Text(slug), Arg::Text(kind), Arg::Text(owner), Arg::Text(note), Arg::Text(now)],
    )
    .map_err(api_to_worker)
}

fn api_to_worker(err: ApiError) -> worker::Error {
    worker::Error::RustError(format!("{err:?}"))
}

/// A change of an existing recipe.
pub struct Update<'a> {
    pub slug: &'a str,
    pub account_id: i64,
    pub owner: &'a str,
    /// The version the caller saw; the write happens only if it is still the current one.
    pub expected: u64,
    pub doc: &'a str,
    pub note: &'a str,
    pub now: &'a str,
    /// What the overlay search stores of the new document (taken, as [`NewRow::search`]).
    pub search: Entry,
}

/// Compare-and-set: the row changes only if its version is still `expected`, and the feed item is
/// written only if the row changed (`changes()` counts the statement before it in the transaction).
/// Returns whether the write happened.
pub async fn update_recipe(db: &D1Database, update: Update<'_>) -> Result<bool, ApiError> {
    let expected = update.expected as i64;
    let set = stmt(
        db,
        "UPDATE recipes SET doc = ?1, version = ?2 + 1, updated_at = ?3 \
         WHERE slug = ?4 AND version = ?2 AND account_id = ?5",
        &[
            Arg::Text(update.doc),
            Arg::Int(expected),
            Arg::Text(update.now),
            Arg::Text(update.slug),
            Arg::Int(update.account_id),
        ],
    )?;
    let feed = stmt(
        db,
        "INSERT INTO changes (slug, version, kind, owner, note, doc, at) \
         SELECT slug, version, 'change', ?3, ?4, doc, ?5 FROM recipes \
         WHERE slug = ?1 AND version = ?2 + 1 AND changes() = 1",
        &[
            Arg::Text(update.slug),
            Arg::Int(expected),
            Arg::Text(update.owner),
            Arg::Text(update.note),
            Arg::Text(update.now),
        ],
    )?;
    let mut statements = vec![set, feed];
    statements.extend(search_rows(db, update.slug, update.expected + 1, update.search, Guard::Chained)?);
    let changed = batch(db, statements).await?.first().copied() == Some(1);
    if changed {
        crate::waiting::note_waiting(update.slug, update.expected + 1);
    }
    Ok(changed)
}

/// Brings a recipe whose current document is the built one (its overlay row retired, or gone after a
/// database restore) into the overlay at the built version, so a change can compare-and-set against it.
pub async fn adopt_built(
    db: &D1Database,
    built: &Published,
    account_id: i64,
    doc: &str,
    now: &str,
) -> Result<(), ApiError> {
    let server = &built.server;
    run(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) \
         ON CONFLICT (slug) DO UPDATE SET version = excluded.version, doc = excluded.doc \
         WHERE recipes.version < excluded.version",
        &[
            Arg::Text(&built.slug),
            Arg::Int(account_id),
            Arg::Text(&server.owner),
            Arg::Int(server.version as i64),
            server.forked_from.as_deref().map_or(Arg::Null, Arg::Text),
            Arg::Text(doc),
            Arg::Text(now),
        ],
    )
    .await?;
    Ok(())
}

// The overlay search (`migrations/0005_overlay_search.sql`): rows written with each recipe write, read
// by a search for the terms it can match.

/// When the statements of [`search_rows`] run.
#[derive(Debug, Clone, Copy)]
enum Guard {
    /// Always: the batch's first statement fails the whole transaction if the write cannot happen.
    Always,
    /// Only if the statement before wrote exactly one row: they follow a compare-and-set chain (the
    /// change, then its feed item) and do nothing when the change did not happen.
    Chained,
    /// Only while the recipe is still at this version (a sweep indexing an older row).
    Current,
}

/// The statements that store what the overlay search needs of `slug` at `version`. The entry is
/// taken: its terms go to this isolate's dictionary copy now (a term noted for a write that then
/// fails matches nothing) and the entry is gone before the caller waits on D1.
fn search_rows(
    db: &D1Database,
    slug: &str,
    version: u64,
    entry: Entry,
    guard: Guard,
) -> Result<Vec<D1PreparedStatement>, ApiError> {
    crate::waiting::note_terms(&entry);
    let guard = match guard {
        Guard::Always => "1",
        Guard::Chained => "changes() = 1",
        Guard::Current => "EXISTS (SELECT 1 FROM recipes WHERE slug = ?1 AND version = ?2)",
    };
    let card = serde_json::to_string(&entry.card).map_err(|err| ApiError::Internal(err.to_string()))?;
    let facets = entry.facets();
    let terms = serde_json::to_string(&entry.terms).map_err(|err| ApiError::Internal(err.to_string()))?;
    let version = version as i64;
    let upsert = stmt(
        db,
        &format!(
            "INSERT INTO overlay_search \
             (slug, version, live, flags, course, total_min, card, facets, facets_version) \
             SELECT ?1, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8 WHERE {guard} \
             ON CONFLICT (slug) DO UPDATE SET version = excluded.version, live = 1, flags = excluded.flags, \
             course = excluded.course, total_min = excluded.total_min, card = excluded.card, \
             facets = excluded.facets, facets_version = excluded.facets_version \
             WHERE excluded.version > overlay_search.version \
             OR (excluded.version = overlay_search.version AND overlay_search.live = 1 \
                 AND excluded.facets_version <> overlay_search.facets_version)"
        ),
        &[
            Arg::Text(slug),
            Arg::Int(version),
            // Read by no search since migration 0006; the Worker before it still wrote them.
            Arg::Int(i64::from(entry.card.flags)),
            Arg::Text(entry.card.course.code()),
            Arg::Int(i64::from(entry.total_min())),
            Arg::Text(&card),
            Arg::Text(&facets),
            Arg::Int(i64::from(FACETS_VERSION)),
        ],
    )?;
    let postings = stmt(
        db,
        &format!(
            "INSERT OR IGNORE INTO overlay_terms (term, slug, version, field) \
             SELECT json_extract(value, '$[0]'), ?1, ?2, json_extract(value, '$[1]') FROM json_each(?3) \
             WHERE {guard}"
        ),
        &[Arg::Text(slug), Arg::Int(version), Arg::Text(&terms)],
    )?;
    // The terms are sent once; the dictionary takes them from the postings just written.
    let dictionary = stmt(
        db,
        "INSERT OR IGNORE INTO overlay_dict (term) SELECT term FROM overlay_terms WHERE slug = ?1 AND version = ?2",
        &[Arg::Text(slug), Arg::Int(version)],
    )?;
    let older = stmt(
        db,
        "DELETE FROM overlay_terms WHERE slug = ?1 \
         AND version < (SELECT version FROM overlay_search WHERE slug = ?1)",
        &[Arg::Text(slug)],
    )?;
    Ok(vec![upsert, postings, dictionary, older])
}

#[derive(Debug, Clone, Deserialize)]
pub struct DictTerm {
    pub id: u64,
    pub term: String,
}

/// What the feed and the overlay dictionary hold past `seq` and `term_id`, in one round trip: the
/// feed items, and up to `max_terms` dictionary terms in the order they were added.
pub async fn news_since(
    db: &D1Database,
    seq: u64,
    term_id: u64,
    max_terms: u32,
) -> Result<(Vec<FeedVersion>, Vec<DictTerm>), ApiError> {
    let feed = stmt(
        db,
        "SELECT seq, slug, version FROM changes WHERE seq > ?1 ORDER BY seq",
        &[Arg::Int(seq as i64)],
    )?;
    let dict = stmt(
        db,
        "SELECT id, term FROM overlay_dict WHERE id > ?1 ORDER BY id LIMIT ?2",
        &[Arg::Int(term_id as i64), Arg::Int(i64::from(max_terms))],
    )?;
    let results = batch_results(db, vec![feed, dict], Retrying::Any).await?;
    let items = results.first().map(|r| r.results::<FeedVersion>()).transpose()?.unwrap_or_default();
    let terms = results.get(1).map(|r| r.results::<DictTerm>()).transpose()?.unwrap_or_default();
    Ok((items, terms))
}

/// The dictionary terms that are `exact` or lie in one of `ranges` (`[low, high)`), in one round trip:
/// for an isolate whose copy of the dictionary grew too large to keep.
pub async fn overlay_dictionary(
    db: &D1Database,
    exact: &[String],
    ranges: &[(String, String)],
) -> Result<Vec<String>, ApiError> {
    #[derive(Deserialize)]
    struct Term {
        term: String,
    }
    let exact = serde_json::to_string(exact).map_err(|err| ApiError::Internal(err.to_string()))?;
    let mut statements = vec![stmt(
        db,
        "SELECT term FROM overlay_dict WHERE term IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&exact)],
    )?];
    for (low, high) in ranges {
        statements.push(stmt(
            db,
            "SELECT term FROM overlay_dict WHERE term >= ?1 AND term < ?2",
            &[Arg::Text(low), Arg::Text(high)],
        )?);
    }
    let mut terms = Vec::new();
    for result in batch_results(db, statements, Retrying::Any).await? {
        terms.extend(result.results::<Term>()?.into_iter().map(|row| row.term));
    }
    terms.sort();
    terms.dedup();
    Ok(terms)
}

/// The postings of `terms`, each with its recipe's facets, for the versions the search table holds.
pub async fn overlay_postings(db: &D1Database, terms: &[String]) -> Result<Vec<Posting>, ApiError> {
    let terms = serde_json::to_string(terms).map_err(|err| ApiError::Internal(err.to_string()))?;
    all(
        db,
        "SELECT p.term, p.slug, p.version, p.field, s.facets, s.total_min \
         FROM overlay_terms p JOIN overlay_search s ON s.slug = p.slug AND s.version = p.version AND s.live = 1 \
         WHERE p.term IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&terms)],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct ListedRow {
    pub slug: String,
    pub version: u64,
}

/// One page of a listing's overlay part, in slug order, and how many overlay recipes match.
pub async fn overlay_listing(db: &D1Database, listing: &Listing) -> Result<(Vec<ListedRow>, u64), ApiError> {
    #[derive(Deserialize)]
    struct Count {
        n: u64,
    }
    // One condition per facet key, whatever filter asked for it (`domain::search::Filters::keys`).
    let mut filter = "live = 1 AND (?1 IS NULL OR total_min <= ?1)".to_string();
    let mut args = vec![listing.max_min.map_or(Arg::Null, |max| Arg::Int(i64::from(max)))];
    for key in &listing.keys {
        args.push(Arg::Text(key));
        filter.push_str(&format!(" AND instr(facets, ?{}) > 0", args.len()));
    }
    let count = stmt(db, &format!("SELECT count(*) AS n FROM overlay_search WHERE {filter}"), &args)?;
    let (limit, offset) = (args.len() + 1, args.len() + 2);
    args.extend([Arg::Int(listing.limit as i64), Arg::Int(listing.offset as i64)]);
    let page = stmt(
        db,
        &format!(
            "SELECT slug, version FROM overlay_search WHERE {filter} ORDER BY slug LIMIT ?{limit} OFFSET ?{offset}"
        ),
        &args,
    )?;
    let results = batch_results(db, vec![count, page], Retrying::Any).await?;
    let n =
        results.first().map(|r| r.results::<Count>()).transpose()?.and_then(|rows| rows.into_iter().next());
    let rows = results.get(1).map(|r| r.results::<ListedRow>()).transpose()?.unwrap_or_default();
    Ok((rows, n.map_or(0, |count| count.n)))
}

/// The stored cards of `slugs`.
pub async fn overlay_cards(db: &D1Database, slugs: &[String]) -> Result<Vec<(String, Card)>, ApiError> {
    #[derive(Deserialize)]
    struct Row {
        slug: String,
        card: String,
    }
    if slugs.is_empty() {
        return Ok(Vec::new());
    }
    let slugs = serde_json::to_string(slugs).map_err(|err| ApiError::Internal(err.to_string()))?;
    let rows: Vec<Row> = all(
        db,
        "SELECT slug, card FROM overlay_search WHERE live = 1 AND slug IN (SELECT value FROM json_each(?1))",
        &[Arg::Text(&slugs)],
    )
    .await?;
    rows.into_iter()
        .map(|row| {
            let card = serde_json::from_str(&row.card).map_err(|err| {
                ApiError::Internal(format!("overlay card of {} does not parse: {err}", row.slug))
            })?;
            Ok((row.slug, card))
        })
        .collect()
}

/// Claims the sweep of build `generation`: true for the one caller that moved the marker to it.
pub async fn claim_sweep(db: &D1Database, generation: &str) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE overlay_sweep SET generation = ?1 WHERE id = 1 AND generation <> ?1",
        &[Arg::Text(generation)],
    )
    .await?;
    Ok(changed == 1)
}

/// Gives a claimed sweep back, so the next request goes on with it.
pub async fn release_sweep(db: &D1Database, generation: &str) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE overlay_sweep SET generation = '' WHERE id = 1 AND generation = ?1",
        &[Arg::Text(generation)],
    )
    .await?;
    Ok(())
}

/// Every recipe version the search table holds as live.
pub async fn overlay_versions(db: &D1Database) -> Result<Vec<ListedRow>, ApiError> {
    all(db, "SELECT slug, version FROM overlay_search WHERE live = 1", &[]).await
}

/// Overlay rows whose current version the search table does not hold (written before it existed),
/// or holds as live with facet keys of another [`FACETS_VERSION`].
pub async fn unindexed_overlay(db: &D1Database, limit: u32) -> Result<Vec<OverlayRow>, ApiError> {
    all(
        db,
        "SELECT r.slug, r.account_id, r.version, r.doc FROM recipes r \
         LEFT JOIN overlay_search s ON s.slug = r.slug AND s.version >= r.version \
         WHERE s.slug IS NULL LIMIT ?1",
        &[Arg::Int(i64::from(limit))],
    )
    .await
}

/// Live overlay rows whose search row has the facet keys of other rules than this Worker's: their
/// terms stand, only the keys (and the card) are made again.
pub async fn stale_facets_overlay(db: &D1Database, limit: u32) -> Result<Vec<OverlayRow>, ApiError> {
    all(
        db,
        "SELECT r.slug, r.account_id, r.version, r.doc FROM recipes r \
         JOIN overlay_search s ON s.slug = r.slug AND s.version = r.version \
         WHERE s.live = 1 AND s.facets_version <> ?2 LIMIT ?1",
        &[Arg::Int(i64::from(limit)), Arg::Int(i64::from(FACETS_VERSION))],
    )
    .await
}

/// Gives live search rows the card and facet keys of this Worker's rules, in one batch; a row a
/// newer version replaced meanwhile is left alone.
pub async fn set_overlay_facets(db: &D1Database, rows: &[(String, u64, Card)]) -> Result<(), ApiError> {
    let mut statements = Vec::with_capacity(rows.len());
    for (slug, version, card) in rows {
        let json = serde_json::to_string(card).map_err(|err| ApiError::Internal(err.to_string()))?;
        let facets = facets_of(card);
        statements.push(stmt(
            db,
            "UPDATE overlay_search SET card = ?3, facets = ?4, facets_version = ?5, total_min = ?6 \
             WHERE slug = ?1 AND version = ?2 AND live = 1",
            &[
                Arg::Text(slug),
                Arg::Int(*version as i64),
                Arg::Text(&json),
                Arg::Text(&facets),
                Arg::Int(i64::from(FACETS_VERSION)),
                Arg::Int(i64::from(card.prep_min + card.cook_min)),
            ],
        )?);
    }
    if !statements.is_empty() {
        batch(db, statements).await?;
    }
    Ok(())
}

/// Marks recipe versions a build has published (or that never were live) retired and deletes their
/// terms; a newer version written meanwhile is kept.
pub async fn retire_overlay(db: &D1Database, retired: &[ListedRow]) -> Result<(), ApiError> {
    let mut statements = Vec::with_capacity(retired.len() * 2);
    for row in retired {
        let args = [Arg::Text(&row.slug), Arg::Int(row.version as i64)];
        statements.push(stmt(db, "DELETE FROM overlay_terms WHERE slug = ?1 AND version <= ?2", &args)?);
        statements.push(stmt(
            db,
            "INSERT INTO overlay_search (slug, version, live, flags, course, total_min, card) \
             VALUES (?1, ?2, 0, 0, '', 0, '') \
             ON CONFLICT (slug) DO UPDATE SET live = 0, card = '' WHERE overlay_search.version <= excluded.version",
            &args,
        )?);
    }
    if !statements.is_empty() {
        batch(db, statements).await?;
    }
    Ok(())
}

/// Stores the search rows of an overlay row written before the search table existed, if the row is
/// still at `version`.
pub async fn index_overlay(db: &D1Database, slug: &str, version: u64, entry: Entry) -> Result<(), ApiError> {
    batch(db, search_rows(db, slug, version, entry, Guard::Current)?).await?;
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChangeRow {
    pub seq: u64,
    pub slug: String,
    pub version: u64,
    pub kind: String,
    pub owner: String,
    pub note: String,
    pub doc: String,
    pub at: String,
}

/// The feed's sequence numbers after `since`, at most `limit`, each with the bytes of its document and
/// note (`change_bytes`, a lower bound of the item's size): what a page may hold, known without
/// reading a document.
pub async fn change_sizes_since(
    db: &D1Database,
    since: u64,
    limit: u32,
) -> Result<Vec<ChangeSize>, ApiError> {
    all(
        db,
        "SELECT seq, bytes FROM change_bytes WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        &[Arg::Int(since as i64), Arg::Int(i64::from(limit))],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChangeSize {
    pub seq: u64,
    pub bytes: u64,
}

/// The feed items after `since` up to and including `through`, oldest first.
pub async fn changes_between(db: &D1Database, since: u64, through: u64) -> Result<Vec<ChangeRow>, ApiError> {
    all(
        db,
        "SELECT seq, slug, version, kind, owner, note, doc, at FROM changes WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
        &[Arg::Int(since as i64), Arg::Int(through as i64)],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct FeedVersion {
    pub seq: u64,
    pub slug: String,
    pub version: u64,
}

/// A recipe's feed items newer than version `after_version` and older than `before_seq`, newest
/// first, at most `limit`, without their documents.
pub async fn changes_of(
    db: &D1Database,
    slug: &str,
    after_version: u64,
    before_seq: u64,
    limit: usize,
) -> Result<Vec<ChangeRow>, ApiError> {
    all(
        db,
        "SELECT seq, slug, version, kind, owner, note, '' AS doc, at FROM changes \
         WHERE slug = ?1 AND version > ?2 AND seq < ?3 ORDER BY seq DESC LIMIT ?4",
        &[
            Arg::Text(slug),
            Arg::Int(after_version as i64),
            Arg::Int(before_seq.min(i64::MAX as u64) as i64),
            Arg::Int(limit as i64),
        ],
    )
    .await
}

// The site's AI (issue 4): the diet-version claims (`migrations/0002_…`).

/// The site's own account, owner of diet versions (made by migration 0002).
pub async fn site_account(db: &D1Database) -> Result<i64, ApiError> {
    first::<Account>(
        db,
        "SELECT id FROM accounts WHERE handle = ?1",
        &[Arg::Text(domain::recipe::SITE_OWNER)],
    )
    .await?
    .map(|account| account.id)
    .ok_or_else(|| ApiError::Internal("the site account is missing: apply the D1 migrations".into()))
}

/// A diet version's claim row.
#[derive(Debug, Clone, Deserialize)]
pub struct DietClaim {
    pub state: String,
    pub variant_slug: Option<String>,
    pub attempt: i64,
    pub claimed_s: u64,
    pub error: Option<String>,
}

pub async fn diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
) -> Result<Option<DietClaim>, ApiError> {
    first(
        db,
        "SELECT state, variant_slug, attempt, claimed_s, error FROM diet_versions \
         WHERE source_slug = ?1 AND kind = ?2",
        &[Arg::Text(source_slug), Arg::Text(kind)],
    )
    .await
}

/// Claims the making of a diet version; `true` for the one caller whose insert made the row.
pub async fn claim_diet(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    now_s: u64,
) -> Result<bool, ApiError> {
    let inserted = run(
        db,
        "INSERT INTO diet_versions (source_slug, kind, state, attempt, claimed_s) VALUES (?1, ?2, 'making', 1, ?3) \
         ON CONFLICT (source_slug, kind) DO NOTHING",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(now_s as i64)],
    )
    .await?;
    Ok(inserted == 1)
}

/// Takes over a failed or abandoned claim last held at `attempt`; `true` for the one caller that did.
pub async fn retake_diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    attempt: i64,
    now_s: u64,
    stale_before_s: u64,
) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE diet_versions SET state = 'making', attempt = attempt + 1, claimed_s = ?4, error = NULL \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3 \
         AND (state = 'failed' OR (state = 'making' AND claimed_s < ?5))",
        &[
            Arg::Text(source_slug),
            Arg::Text(kind),
            Arg::Int(attempt),
            Arg::Int(now_s as i64),
            Arg::Int(stale_before_s as i64),
        ],
    )
    .await?;
    Ok(changed == 1)
}

/// Marks our attempt failed, so waiting callers stop and the next request tries again.
pub async fn fail_diet_claim(
    db: &D1Database,
    source_slug: &str,
    kind: &str,
    attempt: i64,
    error: &str,
) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE diet_versions SET state = 'failed', error = ?4 \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3 AND state = 'making'",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(attempt), Arg::Text(error)],
    )
    .await?;
    Ok(())
}

/// Stores a diet version, its feed item and the claim's `made` in one transaction. Fails with a
/// UNIQUE violation when the slug is taken (the caller tries the next one).
pub async fn insert_diet_version(
    db: &D1Database,
    row: NewRow<'_>,
    source_slug: &str,
    kind: &str,
    attempt: i64,
) -> Result<(), worker::Error> {
    let insert = stmt(
        db,
        "INSERT INTO recipes (slug, account_id, owner, version, forked_from, doc, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 1, NULL, ?4, ?5, ?5)",
        &[
            Arg::Text(row.slug),
            Arg::Int(row.account_id),
            Arg::Text(row.owner),
            Arg::Text(row.doc),
            Arg::Text(row.now),
        ],
    )
    .map_err(api_to_worker)?;
    let feed = first_feed_item(db, row.slug, row.kind, row.owner, row.note, row.now)?;
    let made = stmt(
        db,
        "UPDATE diet_versions SET state = 'made', variant_slug = ?4, error = NULL \
         WHERE source_slug = ?1 AND kind = ?2 AND attempt = ?3",
        &[Arg::Text(source_slug), Arg::Text(kind), Arg::Int(attempt), Arg::Text(row.slug)],
    )
    .map_err(api_to_worker)?;
    let mut statements = vec![insert, feed, made];
    statements.extend(search_rows(db, row.slug, 1, row.search, Guard::Always).map_err(api_to_worker)?);
    batch(db, statements).await?;
    crate::waiting::note_waiting(row.slug, 1);
    Ok(())
}

// Idempotency keys (`migrations/0007_…`, `crate::idempotency`).

/// What D1 holds of a key: the request it was first sent with and, once done, that request's answer.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyedRequest {
    pub fingerprint: String,
    pub state: String,
    pub claimed_s: u64,
    pub status: Option<u16>,
    pub location: Option<String>,
    pub etag: Option<String>,
    pub body: Option<String>,
}

/// Claims `key` of the account for a request now: `true` for the one caller whose insert made the
/// row. The same transaction deletes every key past its lifetime.
pub async fn claim_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    fingerprint: &str,
    now_s: u64,
    expires_s: u64,
) -> Result<bool, ApiError> {
    let expired = stmt(db, "DELETE FROM idempotency_keys WHERE expires_s <= ?1", &[Arg::Int(now_s as i64)])?;
    let claim = stmt(
        db,
        "INSERT INTO idempotency_keys (account_id, key, fingerprint, state, claimed_s, expires_s) \
         VALUES (?1, ?2, ?3, 'running', ?4, ?5) ON CONFLICT (account_id, key) DO NOTHING",
        &[
            Arg::Int(account_id),
            Arg::Text(key),
            Arg::Text(fingerprint),
            Arg::Int(now_s as i64),
            Arg::Int(expires_s as i64),
        ],
    )?;
    let changed = batch(db, vec![expired, claim]).await?;
    Ok(changed.get(1) == Some(&1))
}

pub async fn idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
) -> Result<Option<KeyedRequest>, ApiError> {
    first(
        db,
        "SELECT fingerprint, state, claimed_s, status, location, etag, body FROM idempotency_keys \
         WHERE account_id = ?1 AND key = ?2",
        &[Arg::Int(account_id), Arg::Text(key)],
    )
    .await
}

/// Takes over a key whose request has run since `claimed_s` without an answer (it died): `true`
/// for the one caller that did.
pub async fn retake_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    claimed_s: u64,
    now_s: u64,
) -> Result<bool, ApiError> {
    let changed = run(
        db,
        "UPDATE idempotency_keys SET claimed_s = ?4 \
         WHERE account_id = ?1 AND key = ?2 AND state = 'running' AND claimed_s = ?3",
        &[Arg::Int(account_id), Arg::Text(key), Arg::Int(claimed_s as i64), Arg::Int(now_s as i64)],
    )
    .await?;
    Ok(changed == 1)
}

/// The first answer under a key, which every retry with it gets again.
pub struct KeyedAnswer<'a> {
    pub status: u16,
    pub location: Option<&'a str>,
    pub etag: Option<&'a str>,
    pub body: &'a str,
}

pub async fn finish_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    answer: KeyedAnswer<'_>,
) -> Result<(), ApiError> {
    run(
        db,
        "UPDATE idempotency_keys SET state = 'done', status = ?3, location = ?4, etag = ?5, body = ?6 \
         WHERE account_id = ?1 AND key = ?2",
        &[
            Arg::Int(account_id),
            Arg::Text(key),
            Arg::Int(i64::from(answer.status)),
            answer.location.map_or(Arg::Null, Arg::Text),
            answer.etag.map_or(Arg::Null, Arg::Text),
            Arg::Text(answer.body),
        ],
    )
    .await?;
    Ok(())
}

/// Lets go of a key whose request failed, so it can be sent again.
pub async fn release_idempotency_key(
    db: &D1Database,
    account_id: i64,
    key: &str,
    claimed_s: u64,
) -> Result<(), ApiError> {
    run(
        db,
        "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND state = 'running' AND claimed_s = ?3",
        &[Arg::Int(account_id), Arg::Text(key), Arg::Int(claimed_s as i64)],
    )
    .await?;
    Ok(())
}
