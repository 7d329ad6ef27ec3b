//! The recipe operations' inputs and answers: search, read, writes, the site's AI, diet versions and
//! the change feeds.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::declare::input;
#[cfg(feature = "schema")]
use super::{CURSOR_MAX_CHARS, CURSOR_PATTERN};
use super::{limit, offset, required};
use crate::Diagnostic;
use crate::recipes::ai::AiRequest;
use crate::recipes::recipe::{Course, DietKind, FLAGS, Lang};
use crate::recipes::search::{DEFAULT_LIMIT, Filters, MAX_LIMIT, Query};

/// The longest search words.
pub const MAX_QUERY_CHARS: usize = 200;

input! {
    /// `GET /api/recipes`, the `search_recipes` tool: words and filters, ANDed.
    #[derive(Default)]
    pub struct RecipeSearch {
        /// Words to search for, in any of the three languages (case and accents folded, one typo
        /// tolerated). Leave out to list by filters alone.
        q: String { length(max = MAX_QUERY_CHARS) },
        /// Only gluten-free recipes.
        gf: bool,
        /// Only vegan recipes.
        vegan: bool,
        /// Only vegetarian recipes.
        vegetarian: bool,
        /// Only dairy-free recipes.
        dairy_free: bool,
        /// Only nut-free recipes.
        nut_free: bool,
        /// Only this course.
        course: Course,
        /// At most this many minutes of preparation plus cooking.
        max_min: u32 { range(min = 1) },
        /// The language of the titles and summaries in the answer (best available otherwise).
        lang: Lang,
        /// Cards per page (default 20).
        limit: u32 { range(min = 1, max = MAX_LIMIT) },
        /// `next_cursor` of the previous page.
        cursor: String { regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS) },
    }
    => Query
    |input, problems| {
        let q = input.q.unwrap_or_default();
        if q.chars().count() > MAX_QUERY_CHARS {
            problems.push(Diagnostic::new("q", format!("is longer than {MAX_QUERY_CHARS} characters")));
        }
        let asked = [input.gf, input.vegan, input.vegetarian, input.dairy_free, input.nut_free];
        let flags = FLAGS.iter().zip(asked).filter(|(_, asked)| *asked == Some(true)).map(|(flag, _)| *flag);
        if input.max_min == Some(0) {
            problems.push(Diagnostic::new("max_min", "must be a whole number of minutes above 0"));
        }
        let filters = Filters {
            flags: flags.collect(),
            course: input.course,
            max_min: input.max_min,
            exclude: Vec::new(),
        };
        let limit = limit(input.limit, DEFAULT_LIMIT, MAX_LIMIT, problems);
        let offset = offset(input.cursor.as_deref(), problems);
        Some(Query { q, filters, lang: input.lang, offset, limit })
    }
}

/// The answer of `GET /api/recipes` and `search_recipes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipePage {
    pub items: Vec<crate::recipes::search::CardView>,
    pub total: u64,
    pub next_cursor: Option<String>,
}

input! {
    /// One recipe by slug: `GET /r/{slug}.json` (`get_recipe`), `POST /api/r/{slug}/fork` (`fork_recipe`).
    pub struct RecipeSlug {
        /// The recipe's slug, as in `/r/{slug}.json` (from search_recipes).
        slug: String { required },
    }
    => String
    |input, problems| { required("slug", input.slug, problems) }
}

input! {
    /// `create_recipe` (`POST /api/recipes` takes the document itself as its body).
    pub struct CreateRecipe {
        /// The recipe document: emoji, course, difficulty, times, servings, diet flags and `texts` in one or
        /// more languages. Server-set fields are ignored; the licence is always CC0-1.0.
        recipe: Value { required, schema_with = "crate::recipes::recipe::schema::body" },
    }
    => Value
    |input, problems| { required("recipe", input.recipe, problems) }
}

input! {
    /// `update_recipe` (`PUT /api/r/{slug}` takes the document plus `note` as its body and the version
    /// as `If-Match`).
    pub struct UpdateRecipe {
        /// The slug of one of your own recipes.
        slug: String { required },
        /// The whole new recipe document (not a patch). The licence stays the one the recipe has.
        recipe: Value { required, schema_with = "crate::recipes::recipe::schema::body" },
        /// What you changed, in a sentence; it becomes the change's commit message.
        note: String { required },
        /// The version you read (get_recipe's `version`); the change is refused if it is no longer current.
        version: u64,
    }
    /// A change to one's own recipe: what the `PUT /api/r/{slug}` route and `update_recipe` both run.
    => pub struct Update {
        pub slug: String,
        /// The document with its `note`, as the route's body has it.
        pub body: Value,
        /// The version the caller read, if it named one.
        pub version: Option<u64>,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let recipe = required("recipe", input.recipe, problems);
        let note = required("note", input.note, problems);
        let mut body = recipe.unwrap_or_default();
        if let (Some(obj), Some(note)) = (body.as_object_mut(), note) {
            obj.insert("note".into(), Value::String(note));
        }
        Some(Update { slug: slug?, body, version: input.version })
    }
}

input! {
    /// `POST /api/ai/write` (its body) and `ai_write_recipe`.
    pub struct AiWrite {
        /// What to write, in plain words ("a quick lentil soup for four").
        prompt: String { required, length(min = 1, max = crate::recipes::ai::MAX_PROMPT_CHARS) },
        /// The language to write in.
        lang: Lang { required },
    }
    => AiRequest
    |input, problems| { request(input.prompt, input.lang, problems) }
}

input! {
    /// `ai_change_recipe` (`POST /api/r/{slug}/ai` takes the slug from its path and [`AiWrite`] as its body).
    pub struct AiChange {
        /// The recipe to change (someone else's is forked to you first).
        slug: String { required },
        /// What to change, in plain words ("halve the sugar").
        prompt: String { required, length(min = 1, max = crate::recipes::ai::MAX_PROMPT_CHARS) },
        /// The language of the text to change.
        lang: Lang { required },
    }
    /// A checked AI change: the recipe and what to ask of it.
    => pub struct AiChangeAsked {
        pub slug: String,
        pub request: AiRequest,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let request = request(input.prompt, input.lang, problems);
        Some(AiChangeAsked { slug: slug?, request: request? })
    }
}

/// What to ask the site's AI, or the problems with it.
fn request(prompt: Option<String>, lang: Option<Lang>, problems: &mut Vec<Diagnostic>) -> Option<AiRequest> {
    crate::recipes::ai::check_request(prompt, lang).map_err(|more| problems.extend(more)).ok()
}

input! {
    /// `POST /api/r/{slug}/variant/{kind}`, `make_diet_version`.
    pub struct DietVersion {
        /// The recipe to make a diet version of.
        slug: String { required },
        /// `gf` (gluten-free), `vegan`, or `both`.
        kind: DietKind { required },
    }
    /// A checked diet version request: the recipe and the version of it.
    => pub struct DietAsked {
        pub slug: String,
        pub kind: DietKind,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let kind = required("kind", input.kind, problems);
        Some(DietAsked { slug: slug?, kind: kind? })
    }
}

/// The longest page of a feed or a history.
pub const FEED_MAX_LIMIT: usize = 1000;
/// A feed page's length when `limit` is left out.
pub const FEED_DEFAULT_LIMIT: usize = 100;

input! {
    /// `GET /api/changes` and `GET /api/episodes/changes`: the feeds, oldest first.
    pub struct FeedQuery {
        /// The sequence number to start after (0, the default, is from the start).
        since: u64 { range(max = i64::MAX) },
        /// The same as `since`: the `next_cursor` of the previous page.
        cursor: u64 { range(max = i64::MAX) },
        /// Items per page (default 100); a page also stops at 1 MiB of items.
        limit: u32 { range(min = 1, max = FEED_MAX_LIMIT) },
    }
    /// A checked feed page: the items after `since`, at most `limit` of them.
    #[derive(Copy)]
    => pub struct FeedAsked {
        pub since: u64,
        pub limit: u32,
    }
    |input, problems| {
        let since = input.cursor.or(input.since).unwrap_or(0);
        if since > i64::MAX as u64 {
            let field = if input.cursor.is_some() { "cursor" } else { "since" };
            problems.push(Diagnostic::new(field, "must be a sequence number this feed gave out"));
        }
        let limit = limit(input.limit, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, problems);
        Some(FeedAsked { since, limit: limit as u32 })
    }
}

/// The longest history cursor: `a` and a sequence number of 18 digits, or `g` and a commit id.
pub const HISTORY_CURSOR_MAX_CHARS: usize = 56;
/// The longest cursor after an API change (`a` and at most 18 digits, which always fit a sequence
/// number): the description's `maxLength`, and the server's, since a longer one that fits the
/// pattern would name a number no feed gives out.
pub const HISTORY_API_CURSOR_MAX_CHARS: usize = 26;

input! {
    /// `GET /api/r/{slug}/history`: a recipe's history, newest first.
    pub struct HistoryQuery {
        /// The recipe.
        slug: String { required },
        /// Items per page (default 100); a page also stops at 1 MiB of items.
        limit: u32 { range(min = 1, max = FEED_MAX_LIMIT) },
        /// `next_cursor` of the previous page.
        cursor: String {
            regex(pattern = super::HISTORY_CURSOR_PATTERN), length(max = HISTORY_API_CURSOR_MAX_CHARS)
        },
    }
    /// A checked history page: the recipe, where the page starts (its first page without a cursor) and
    /// how many items it holds at most.
    => pub struct HistoryAsked {
        pub slug: String,
        pub cursor: Option<crate::recipes::write::HistoryCursor>,
        pub limit: usize,
    }
    |input, problems| {
        let slug = required("slug", input.slug, problems);
        let cursor = input.cursor.and_then(|cursor| {
            let decoded = Some(&cursor)
                .filter(|cursor| cursor.len() <= HISTORY_CURSOR_MAX_CHARS)
                .and_then(|cursor| crate::recipes::write::HistoryCursor::decode(cursor))
                .filter(|decoded| {
                    !matches!(decoded, crate::recipes::write::HistoryCursor::Api(_))
                        || cursor.len() <= HISTORY_API_CURSOR_MAX_CHARS
                });
            if decoded.is_none() {
                problems.push(Diagnostic::new("cursor", "is not a cursor this API gave out"));
            }
            decoded
        });
        let limit = limit(input.limit, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, problems);
        Some(HistoryAsked { slug: slug?, cursor, limit })
    }
}

input! {
    /// `GET /kitchen/callback/github`: where GitHub sends a person back (OAuth 2.0, RFC 6749 §4.1.2):
    /// `code` and `state` when the person signed in, `error` and `state` when they did not (§4.1.2.1).
    /// `state` is always required (this site always sends one); `code` or `error` is a rule across two
    /// parameters that JSON Schema cannot state for a query, so `code` is described as optional.
    pub struct GithubCallback {
        /// The authorisation code to trade for a token (required unless `error` says why there is none).
        code: String,
        /// The state this site set when the sign-in started.
        state: String { required },
        /// Why the sign-in did not complete (instead of `code`).
        error: String,
        error_description: String,
        error_uri: String,
    }
    => SignIn
    |input, problems| {
        let state = required("state", input.state, problems);
        match (input.code, input.error) {
            (_, Some(error)) => Some(SignIn::Refused(error)),
            (Some(code), None) => Some(SignIn::Code { code, state: state? }),
            (None, None) => {
                problems.push(Diagnostic::new("code", "give `code`, or `error` to say why there is none"));
                None
            }
        }
    }
}

/// What GitHub's callback says.
#[derive(Debug, Clone, PartialEq)]
pub enum SignIn {
    /// The person signed in at GitHub: the code to trade, and the state to compare.
    Code { code: String, state: String },
    /// The sign-in did not complete, in GitHub's words.
    Refused(String),
}
