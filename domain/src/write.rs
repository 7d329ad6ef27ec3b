//! Recipe writes through the API: what a create, change or fork stores, the change feed's items, the
//! overlay's retirement rule, `If-Match` parsing and the write rate limit.
//!
//! The edge keeps the rows (D1) and the builder's `sync` turns feed items into git commits; both use
//! the types here, so the feed has one shape. Times come in as ISO 8601 strings from the caller.

use serde::{Deserialize, Serialize};

use crate::recipe::{Published, Recipe, ServerFields};

/// Write requests a key may make per [`RATE_WINDOW_S`].
pub const WRITES_PER_WINDOW: u32 = 60;
pub const RATE_WINDOW_S: u64 = 60;
/// The largest request body a write route reads (DESIGN.md §4).
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The longest change note kept.
pub const MAX_NOTE_CHARS: usize = 500;

/// A handle: what recipes are owned by and git commits authored by. Lower-case letters, digits and
/// inner hyphens, 1–39 characters (GitHub's login rules), and never the site's own name.
pub fn is_valid_handle(handle: &str) -> bool {
    (1..=39).contains(&handle.len())
        && handle != crate::recipe::SITE_OWNER
        && !handle.starts_with('-')
        && !handle.ends_with('-')
        && handle.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePage {
    pub items: Vec<Change>,
    /// The `since` that fetches the next page; `None` when this page reached the end of the feed.
    pub next_since: Option<u64>,
}

/// The note a create or fork gets when the caller gives none.
pub fn default_note(kind: ChangeKind, slug: &str, forked_from: Option<&str>) -> String {
    match (kind, forked_from) {
        (ChangeKind::Fork, Some(from)) => format!("Fork {from} as {slug}"),
        (ChangeKind::Create, _) | (ChangeKind::Fork, None) => format!("Create {slug}"),
        (ChangeKind::Change, _) => format!("Change {slug}"),
    }
}

/// A recipe created through the API: owned by the caller, CC0, version 1.
pub fn created(slug: &str, mut recipe: Recipe, owner: &str, now: &str) -> Published {
    // The seed: a recipe created through the API is CC0, whatever licence the body names.
    recipe.licence = crate::recipe::DEFAULT_LICENCE.to_string();
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
        },
    }
}

/// Whether an overlay row still decides what readers see: until a build publishes its version.
pub fn overlay_is_live(overlay_version: u64, built_version: Option<u64>) -> bool {
    built_version.is_none_or(|built| overlay_version > built)
}

/// The version an `If-Match` header names: `3`, `"3"` or `W/"3"`. `None` when it names none.
pub fn parse_if_match(header: &str) -> Option<u64> {
    let value = header.trim();
    let value = value.strip_prefix("W/").unwrap_or(value);
    let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
    value.parse().ok()
}

/// Whether an `If-None-Match` header names the current entity tag `etag` (RFC 9110 §13.1.2): `*`,
/// or a comma-separated list of tags compared weakly (a `W/` prefix is ignored on both sides).
pub fn none_match(header: &str, etag: &str) -> bool {
    let strip = |tag: &str| tag.trim().trim_start_matches("W/").to_string();
    let current = strip(etag);
    header.split(',').map(strip).any(|tag| tag == "*" || tag == current)
}

#[cfg(test)]
mod none_match_tests {
    use super::none_match;

    #[test]
    fn lists_stars_and_weak_tags_match_the_current_tag() {
        assert!(none_match("\"x\", \"abc\"", "\"abc\""));
        assert!(none_match("*", "\"abc\""));
        assert!(none_match("W/\"abc\"", "\"abc\""));
        assert!(!none_match("\"x\", \"y\"", "\"abc\""));
    }
}

/// The entity tag a version is served with.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

/// The start of the fixed rate window `now_s` falls in.
pub fn rate_window(now_s: u64) -> u64 {
    now_s - now_s % RATE_WINDOW_S
}

/// What the write limit says about the `count`th request in the window that started at `window_s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window resets.
    pub reset_s: u64,
    /// The policy's name in the headers: `writes`, `ai`.
    pub policy_name: &'static str,
    /// The window's length in seconds.
    pub window_len_s: u64,
}

impl RateDecision {
    pub fn of(count: u32, limit: u32, window_s: u64, now_s: u64) -> RateDecision {
        RateDecision::in_window("writes", RATE_WINDOW_S, count, limit, window_s, now_s)
    }

    /// The same decision for another fixed-window limit (the AI's is an hour).
    pub fn in_window(
        policy_name: &'static str,
        window_len_s: u64,
        count: u32,
        limit: u32,
        window_s: u64,
        now_s: u64,
    ) -> RateDecision {
        RateDecision {
            allowed: count <= limit,
            limit,
            remaining: limit.saturating_sub(count),
            reset_s: (window_s + window_len_s).saturating_sub(now_s).max(1),
            policy_name,
            window_len_s,
        }
    }

    /// `RateLimit` (draft-ietf-httpapi-ratelimit-headers): remaining quota and seconds to reset.
    pub fn header(&self) -> String {
        format!("\"{}\";r={};t={}", self.policy_name, self.remaining, self.reset_s)
    }

    /// `RateLimit-Policy`: the quota and its window.
    pub fn policy(&self) -> String {
        format!("\"{}\";q={};w={}", self.policy_name, self.limit, self.window_len_s)
    }
}

/// The start of the fixed window of `len_s` seconds that `now_s` falls in.
pub fn window_of(now_s: u64, len_s: u64) -> u64 {
    now_s - now_s % len_s
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
        crate::recipe::validate(&value, crate::recipe::Source::Api).unwrap().0
    }

    #[test]
    fn api_created_recipes_are_cc0_and_owned_by_the_caller() {
        let doc = created("pancakes", recipe(), "ana", "2025-01-01T00:00:00Z");
        assert_eq!(doc.recipe.licence, "CC0-1.0");
        assert_eq!((doc.server.owner.as_str(), doc.server.version), ("ana", 1));
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
    fn if_match_forms() {
        assert_eq!(parse_if_match("3"), Some(3));
        assert_eq!(parse_if_match("\"3\""), Some(3));
        assert_eq!(parse_if_match(" W/\"12\" "), Some(12));
        assert_eq!(parse_if_match("*"), None);
    }

    #[test]
    fn the_sixty_first_write_in_a_minute_is_refused() {
        let window = rate_window(125);
        assert_eq!(window, 120);
        let ok = RateDecision::of(60, 60, window, 125);
        assert!(ok.allowed);
        assert_eq!(ok.header(), "\"writes\";r=0;t=55");
        let refused = RateDecision::of(61, 60, window, 179);
        assert!(!refused.allowed);
        assert_eq!(refused.reset_s, 1);
        assert_eq!(refused.policy(), "\"writes\";q=60;w=60");
    }
}
