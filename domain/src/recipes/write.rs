//! Recipe writes through the API: what a create, change or fork stores, the change feed's items, the
//! overlay's retirement rule and `If-Match` parsing. The write limit is in [`crate::site::limits`].
//!
//! The edge keeps the rows (D1) and the builder's `sync` turns feed items into git commits; both use
//! the types here, so the feed has one shape. Times come in as ISO 8601 strings from the caller.

use serde::{Deserialize, Serialize};

use crate::recipes::recipe::{Published, Recipe, ServerFields};

/// The largest request body a write route reads.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The longest change note kept.
pub const MAX_NOTE_CHARS: usize = 500;

/// A handle: what recipes are owned by and git commits authored by. Lower-case letters, digits and
/// inner hyphens, 1–39 characters (GitHub's login rules), and never the site's own name.
pub fn is_valid_handle(handle: &str) -> bool {
    handle_problem(handle).is_none()
}

/// Why `handle` cannot be a handle, in words for the person who typed it; `None` when it can.
pub fn handle_problem(handle: &str) -> Option<String> {
    if handle == crate::recipes::recipe::SITE_OWNER {
        return Some(format!(
            "`{handle}` is reserved: it owns the recipes that come in through the content repository"
        ));
    }
    let shaped = (1..=39).contains(&handle.len())
        && !handle.starts_with('-')
        && !handle.ends_with('-')
        && handle.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    (!shaped).then(|| {
        format!("`{handle}` is not a handle: use 1 to 39 of a-z, 0-9 and -, not starting or ending with -")
    })
}

/// The handle a GitHub login asks for: the login in lower case (GitHub logins ignore case).
pub fn handle_from_login(login: &str) -> String {
    let handle = login.to_ascii_lowercase();
    if is_valid_handle(&handle) { handle } else { format!("gh-{}", handle.trim_matches('-')) }
}

/// What a change-feed item did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Create,
    Change,
    Fork,
}

impl ChangeKind {
    pub fn code(self) -> &'static str {
        match self {
            ChangeKind::Create => "create",
            ChangeKind::Change => "change",
            ChangeKind::Fork => "fork",
        }
    }

    pub fn parse(code: &str) -> Option<ChangeKind> {
        [ChangeKind::Create, ChangeKind::Change, ChangeKind::Fork].into_iter().find(|k| k.code() == code)
    }
}

/// One item of the public change feed (`GET /api/changes`): the whole document after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub seq: u64,
    pub kind: ChangeKind,
    pub slug: String,
    pub version: u64,
    pub owner: String,
    pub note: String,
    pub at: String,
    pub document: Published,
}

/// A page of the change feed.
pub type ChangePage = crate::paging::FeedPage<Change>;

impl crate::paging::Positioned for Change {
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// Where the next page of a recipe's history (`GET /api/r/{slug}/history`, newest first) goes on:
/// after an API change (the feed's `seq`), or after a commit of the built history. Both stay put when
/// new writes arrive, which come first in the list, so following cursors meets no item twice. Given
/// out as an opaque string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryCursor {
    /// Go on with the API changes older than this `seq`, then the built history.
    Api(u64),
    /// Go on with the built history after this commit.
    Git(String),
}

impl HistoryCursor {
    pub fn encode(&self) -> String {
        let text = match self {
            HistoryCursor::Api(seq) => format!("a{seq}"),
            HistoryCursor::Git(commit) => format!("g{commit}"),
        };
        data_encoding::BASE64URL_NOPAD.encode(text.as_bytes())
    }

    pub fn decode(cursor: &str) -> Option<HistoryCursor> {
        let bytes = data_encoding::BASE64URL_NOPAD.decode(cursor.as_bytes()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        match text.split_at_checked(1)? {
            // Digits only: `u64`'s parser would also take a sign the cursor's pattern has no room for.
            ("a", seq) if seq.bytes().all(|b| b.is_ascii_digit()) => seq.parse().ok().map(HistoryCursor::Api),
            ("g", commit) if !commit.is_empty() => Some(HistoryCursor::Git(commit.to_string())),
            _ => None,
        }
    }
}

/// One page of a recipe's history: the API changes the build does not have yet (`(seq, item)`, newest
/// first; those the cursor has passed may be among them), then the built history (items with a
/// `commit`, newest first), at most `limit` items and [`crate::paging::PAGE_BYTES`] of them. Returns
/// the items and the cursor of the next page, or a problem naming `cursor` when it names a commit this
/// history does not hold (a build from another line of history replaced it).
pub fn history_page(
    api: Vec<(u64, serde_json::Value)>,
    git: Vec<serde_json::Value>,
    after: Option<&HistoryCursor>,
    limit: usize,
) -> Result<(Vec<serde_json::Value>, Option<HistoryCursor>), crate::Diagnostic> {
    let api_after = |seq: u64| match after {
        None => true,
        Some(HistoryCursor::Api(last)) => seq < *last,
        Some(HistoryCursor::Git(_)) => false,
    };
    let git_start = match after {
        Some(HistoryCursor::Git(commit)) => {
            git.iter().position(|item| item["commit"] == commit.as_str()).map(|at| at + 1).ok_or_else(
                || {
                    crate::Diagnostic::new(
                        "cursor",
                        "names a commit this history no longer holds; start again without a cursor",
                    )
                },
            )?
        }
        _ => 0,
    };
    let mut candidates: Vec<(HistoryCursor, serde_json::Value)> = api
        .into_iter()
        .filter(|(seq, _)| api_after(*seq))
        .map(|(seq, item)| (HistoryCursor::Api(seq), item))
        .collect();
    candidates.extend(git.into_iter().skip(git_start).map(|item| {
        let commit = item["commit"].as_str().unwrap_or_default().to_string();
        (HistoryCursor::Git(commit), item)
    }));
    let n_candidates = candidates.len();
    candidates.truncate(limit);
    let kept = crate::paging::fitting(
        candidates.iter().map(|(_, item)| crate::paging::json_len(item)),
        crate::paging::PAGE_BYTES,
    );
    candidates.truncate(kept);
    let next = if kept < n_candidates { candidates.last().map(|(cursor, _)| cursor.clone()) } else { None };
    Ok((candidates.into_iter().map(|(_, item)| item).collect(), next))
}

/// The note a create or fork gets when the caller gives none.
pub fn default_note(kind: ChangeKind, slug: &str, forked_from: Option<&str>) -> String {
    match (kind, forked_from) {
        (ChangeKind::Fork, Some(from)) => format!("Fork {from} as {slug}"),
        (ChangeKind::Create, _) | (ChangeKind::Fork, None) => format!("Create {slug}"),
        (ChangeKind::Change, _) => format!("Change {slug}"),
    }
}

/// The problem with a `licence` an API body names, when it is not the one the recipe gets: `licence`
/// is CC0-1.0 for a new recipe and stays what it was for a change (see [`created`], [`changed`]).
/// Naming that same licence is no problem, so a client may send back the document it read.
pub fn licence_problem(asked: Option<&serde_json::Value>, licence: &str) -> Option<crate::Diagnostic> {
    let asked = asked?;
    if asked.as_str() == Some(licence) {
        return None;
    }
    let reason = if licence == crate::recipes::recipe::DEFAULT_LICENCE {
        format!(
            "recipes written through the API are always {licence}; leave `licence` out (a recipe under \
             another licence comes in through the content repository)"
        )
    } else {
        format!("this recipe stays {licence}, the licence it was published under; leave `licence` out")
    };
    Some(crate::Diagnostic::new("licence", reason))
}

/// A recipe created through the API: owned by the caller, CC0, version 1.
pub fn created(slug: &str, mut recipe: Recipe, owner: &str, now: &str) -> Published {
    // The seed: a recipe created through the API is CC0, whatever licence the body names.
    recipe.licence = crate::recipes::recipe::DEFAULT_LICENCE.to_string();
    Published {
        slug: slug.to_string(),
        recipe,
        server: ServerFields {
            owner: owner.to_string(),
            forked_from: None,
            variant_of: None,
            created_at: Some(now.to_string()),
            updated_at: Some(now.to_string()),
            version: 1,
            generated_by: None,
            photo: None,
        },
    }
}

/// The next version of `current` with a new document. The licence stays what it was: an owner may not
/// relicense text that others may have built on.
pub fn changed(current: &Published, mut recipe: Recipe, now: &str) -> Published {
    recipe.licence = current.recipe.licence.clone();
    let mut server = current.server.clone();
    server.version += 1;
    server.updated_at = Some(now.to_string());
    // Human changes make the text no longer the model's alone.
    server.generated_by = None;
    Published { slug: current.slug.clone(), recipe, server }
}

/// The caller's own copy of `source`. `forked_from` names the direct parent, so a fork of a fork keeps
/// the whole chain (each link names the one before).
pub fn forked(source: &Published, slug: &str, owner: &str, now: &str) -> Published {
    Published {
        slug: slug.to_string(),
        recipe: source.recipe.clone(),
        server: ServerFields {
            owner: owner.to_string(),
            forked_from: Some(source.slug.clone()),
            variant_of: None,
            created_at: Some(now.to_string()),
            updated_at: Some(now.to_string()),
            version: 1,
            generated_by: source.server.generated_by.clone(),
            photo: None,
        },
    }
}

/// Whether an overlay row still decides what readers see: until a build publishes its version.
pub fn overlay_is_live(overlay_version: u64, built_version: Option<u64>) -> bool {
    built_version.is_none_or(|built| overlay_version > built)
}

/// What an `If-Match` header asks (RFC 9110 §13.1.1): any current representation (`*`), or one of a
/// list of entity tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfMatch {
    Any,
    /// The tags as sent, `W/` prefix and quotes included.
    Tags(Vec<String>),
}

impl IfMatch {
    /// The precondition that names one version, as `update_recipe`'s `version` does.
    pub fn version(version: u64) -> IfMatch {
        IfMatch::Tags(vec![etag(version)])
    }

    /// Reads a header: `*`, or a comma-separated list of entity tags (`"3"`, `W/"3"`; empty list
    /// elements are skipped, RFC 9110 §5.6.1). `None` when it is neither, such as a bare `3`.
    pub fn parse(header: &str) -> Option<IfMatch> {
        if header.trim() == "*" {
            return Some(IfMatch::Any);
        }
        let mut tags = Vec::new();
        let mut rest = header.trim_start_matches([' ', '\t', ',']);
        while !rest.is_empty() {
            let opaque = rest.strip_prefix("W/").unwrap_or(rest);
            let inner = opaque.strip_prefix('"')?;
            let end = inner.find('"')?;
            // etagc: visible ASCII but `"`, and obs-text (RFC 9110 §8.8.3).
            if !inner[..end].bytes().all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80) {
                return None;
            }
            let len = rest.len() - inner.len() + end + 1;
            tags.push(rest[..len].to_string());
            let after = rest[len..].trim_start_matches([' ', '\t']);
            if !after.is_empty() && !after.starts_with(',') {
                return None;
            }
            rest = after.trim_start_matches([' ', '\t', ',']);
        }
        (!tags.is_empty()).then_some(IfMatch::Tags(tags))
    }

    /// Whether the precondition holds for the representation at `version`: the strong comparison
    /// If-Match asks for, so a weak tag never matches (RFC 9110 §8.8.3.2, §13.1.1).
    pub fn holds(&self, version: u64) -> bool {
        match self {
            IfMatch::Any => true,
            IfMatch::Tags(tags) => tags.iter().any(|tag| *tag == etag(version)),
        }
    }
}

/// Whether an `If-None-Match` header matches the current representation (RFC 9110 §13.1.2): `*`
/// matches any representation that exists; otherwise a comma-separated list of tags matches when one
/// equals `etag` compared weakly (a `W/` prefix is ignored on both sides). A representation with no
/// entity tag matches only `*`.
pub fn none_match(header: &str, etag: Option<&str>) -> bool {
    let strip = |tag: &str| tag.trim().trim_start_matches("W/").to_string();
    let current = etag.map(strip);
    header.split(',').map(strip).any(|tag| tag == "*" || Some(&tag) == current.as_ref())
}

#[cfg(test)]
mod none_match_tests {
    use super::none_match;

    #[test]
    fn lists_stars_and_weak_tags_match_the_current_tag() {
        assert!(none_match("\"x\", \"abc\"", Some("\"abc\"")));
        assert!(none_match("*", Some("\"abc\"")));
        assert!(none_match("W/\"abc\"", Some("\"abc\"")));
        assert!(none_match("\"abc\"", Some("W/\"abc\"")));
        assert!(!none_match("\"x\", \"y\"", Some("\"abc\"")));
    }

    #[test]
    fn a_representation_without_a_tag_matches_only_the_star() {
        assert!(none_match("*", None));
        assert!(!none_match("\"abc\"", None));
        assert!(!none_match("", None));
    }
}

/// The entity tag a version is served with.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recipe() -> Recipe {
        let value = json!({
            "emoji": "🥞", "course": "breakfast", "difficulty": 1, "prep_min": 10, "cook_min": 15,
            "servings": 4, "gf": 0, "vegan": 0, "vegetarian": 1, "dairy_free": 0, "nut_free": 1,
            "licence": "CC-BY-4.0",
            "texts": {"en": {"title": "Pancakes", "summary": "Soft.",
                "ingredients": [{"q": 200, "u": "g", "i": "flour"}], "steps": [{"t": "Mix."}]}}
        });
        crate::recipes::recipe::validate(&value, crate::recipes::recipe::Source::Api).unwrap().0
    }

    #[test]
    fn api_created_recipes_are_cc0_and_owned_by_the_caller() {
        let doc = created("pancakes", recipe(), "ana", "2025-01-01T00:00:00Z");
        assert_eq!(doc.recipe.licence, "CC0-1.0");
        assert_eq!((doc.server.owner.as_str(), doc.server.version), ("ana", 1));
    }

    #[test]
    fn a_licence_other_than_the_one_the_recipe_gets_is_refused_by_name() {
        assert_eq!(licence_problem(None, "CC0-1.0"), None);
        assert_eq!(licence_problem(Some(&json!("CC0-1.0")), "CC0-1.0"), None);
        let refused = licence_problem(Some(&json!("CC-BY-4.0")), "CC0-1.0").unwrap();
        assert_eq!(refused.field, "licence");
        assert!(refused.reason.contains("always CC0-1.0"), "{refused}");
        assert!(
            licence_problem(Some(&json!("CC0-1.0")), "CC-BY-4.0").unwrap().reason.contains("stays CC-BY-4.0")
        );
    }

    #[test]
    fn a_change_bumps_the_version_and_keeps_the_creation_time() {
        let first = created("pancakes", recipe(), "ana", "2025-01-01T00:00:00Z");
        let second = changed(&first, recipe(), "2025-01-02T00:00:00Z");
        assert_eq!(second.server.version, 2);
        assert_eq!(second.server.created_at.as_deref(), Some("2025-01-01T00:00:00Z"));
        assert_eq!(second.server.updated_at.as_deref(), Some("2025-01-02T00:00:00Z"));
    }

    #[test]
    fn a_fork_of_a_fork_names_its_parent() {
        let first = created("pancakes", recipe(), "ana", "t0");
        let fork = forked(&first, "pancakes-2", "bea", "t1");
        let fork2 = forked(&fork, "pancakes-3", "cai", "t2");
        assert_eq!(fork.server.forked_from.as_deref(), Some("pancakes"));
        assert_eq!(fork2.server.forked_from.as_deref(), Some("pancakes-2"));
        assert_eq!((fork2.server.owner.as_str(), fork2.server.version), ("cai", 1));
    }

    #[test]
    fn overlay_rows_retire_once_built() {
        assert!(overlay_is_live(1, None));
        assert!(overlay_is_live(3, Some(2)));
        assert!(!overlay_is_live(3, Some(3)));
        assert!(!overlay_is_live(2, Some(3)));
    }

    #[test]
    fn handles() {
        assert!(is_valid_handle("ana-maria"));
        assert!(!is_valid_handle("commonplace"));
        assert!(!is_valid_handle("Ana"));
        assert!(!is_valid_handle("-ana"));
        assert_eq!(handle_from_login("Octo-Cat"), "octo-cat");
        assert_eq!(handle_from_login("commonplace"), "gh-commonplace");
    }

    #[test]
    fn if_match_reads_lists_stars_and_weak_tags_as_rfc_9110_says() {
        let tags = |list: &[&str]| Some(IfMatch::Tags(list.iter().map(|t| t.to_string()).collect()));
        assert_eq!(IfMatch::parse("\"9\", \"999\""), tags(&["\"9\"", "\"999\""]));
        assert_eq!(IfMatch::parse(" , \"3\",,W/\"4\" "), tags(&["\"3\"", "W/\"4\""]));
        assert_eq!(IfMatch::parse("\"a,b\""), tags(&["\"a,b\""]));
        assert_eq!(IfMatch::parse(" * "), Some(IfMatch::Any));
        for not_tags in ["8", "", "yesterday", "\"3", "\"3\" \"4\"", "W/3", "*, \"3\"", "\"a b\""] {
            assert_eq!(IfMatch::parse(not_tags), None, "{not_tags}");
        }
        assert!(IfMatch::parse("\"9\", \"999\"").unwrap().holds(9));
        assert!(!IfMatch::parse("W/\"7\"").unwrap().holds(7), "weak tags never match");
        assert!(!IfMatch::parse("\"8\"").unwrap().holds(9));
        assert!(IfMatch::Any.holds(1) && IfMatch::version(5).holds(5));
    }

    #[test]
    fn the_site_owner_handle_is_refused_as_reserved() {
        assert!(handle_problem("commonplace").unwrap().contains("reserved"));
        assert!(handle_problem("Ana").unwrap().contains("a-z, 0-9 and -"));
        assert_eq!(handle_problem("ana-maria"), None);
    }

    fn api_item(seq: u64) -> (u64, serde_json::Value) {
        (seq, json!({"source": "api", "seq": seq, "message": format!("change {seq}")}))
    }

    fn git_item(commit: &str) -> serde_json::Value {
        json!({"source": "git", "commit": commit, "message": "x".repeat(300 * 1024)})
    }

    /// Every item of a history, following cursors from page to page.
    fn walk(
        api: &[(u64, serde_json::Value)],
        git: &[serde_json::Value],
        limit: usize,
    ) -> Vec<serde_json::Value> {
        let mut seen = Vec::new();
        let mut after: Option<HistoryCursor> = None;
        loop {
            let (items, next) = history_page(api.to_vec(), git.to_vec(), after.as_ref(), limit).unwrap();
            assert!(!items.is_empty() || seen.is_empty());
            seen.extend(items);
            match next {
                Some(cursor) => after = HistoryCursor::decode(&cursor.encode()),
                None => return seen,
            }
        }
    }

    #[test]
    fn history_pages_by_count_and_bytes_meet_every_item_once() {
        let api: Vec<_> = (1..=5).rev().map(api_item).collect();
        let git: Vec<_> = ["c5", "c4", "c3", "c2", "c1"].into_iter().map(git_item).collect();
        let all: Vec<_> = api.iter().map(|(_, item)| item.clone()).chain(git.iter().cloned()).collect();
        for limit in [1, 2, 3, 100] {
            assert_eq!(walk(&api, &git, limit), all, "limit {limit}");
        }
        // Five API items and three 300 KiB commits fit in one MiB; the fourth commit does not.
        let (first, next) = history_page(api.clone(), git.clone(), None, 100).unwrap();
        assert_eq!(first.len(), 8);
        assert_eq!(next, Some(HistoryCursor::Git("c3".into())));
    }

    #[test]
    fn new_writes_during_paging_do_not_repeat_items() {
        let api: Vec<_> = (1..=4).rev().map(api_item).collect();
        let (first, next) = history_page(api.clone(), Vec::new(), None, 2).unwrap();
        assert_eq!(first.iter().map(|i| i["seq"].as_u64().unwrap()).collect::<Vec<_>>(), [4, 3]);
        // Two writes arrive, newest first, before the next page is read.
        let mut newer: Vec<_> = (5..=6).rev().map(api_item).collect();
        newer.extend(api);
        let (second, _) = history_page(newer, Vec::new(), next.as_ref(), 2).unwrap();
        assert_eq!(second.iter().map(|i| i["seq"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn history_cursors_are_opaque_and_checked() {
        for cursor in [HistoryCursor::Api(12), HistoryCursor::Git("0123abcd".into())] {
            assert_eq!(HistoryCursor::decode(&cursor.encode()), Some(cursor));
        }
        assert_eq!(HistoryCursor::decode("not a cursor"), None);
        assert_eq!(HistoryCursor::decode(&data_encoding::BASE64URL_NOPAD.encode(b"g")), None);
        let gone = HistoryCursor::Git("rewritten".into());
        let problem = history_page(Vec::new(), vec![git_item("c1")], Some(&gone), 10).unwrap_err();
        assert_eq!(problem.field, "cursor");
    }
}
