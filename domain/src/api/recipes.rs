//! The recipe operations' inputs and answers: search, read, writes, the site's AI, diet versions and
//! the change feeds.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use super::{CURSOR_MAX_CHARS, CURSOR_PATTERN};
use super::{Input, done, limit, offset, required};
use crate::Diagnostic;
use crate::recipes::ai::AiRequest;
use crate::recipes::recipe::{Course, DietKind, FLAGS, Lang};
use crate::recipes::search::{DEFAULT_LIMIT, Filters, MAX_LIMIT, Query};

/// The longest search words.
pub const MAX_QUERY_CHARS: usize = 200;

/// `GET /api/recipes`, the `search_recipes` tool: words and filters, ANDed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipeSearch {
    /// Words to search for, in any of the three languages (case and accents folded, one typo
    /// tolerated). Leave out to list by filters alone.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_QUERY_CHARS)))]
    pub q: Option<String>,
    /// Only gluten-free recipes.
    pub gf: Option<bool>,
    /// Only vegan recipes.
    pub vegan: Option<bool>,
    /// Only vegetarian recipes.
    pub vegetarian: Option<bool>,
    /// Only dairy-free recipes.
    pub dairy_free: Option<bool>,
    /// Only nut-free recipes.
    pub nut_free: Option<bool>,
    /// Only this course.
    pub course: Option<Course>,
    /// At most this many minutes of preparation plus cooking.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub max_min: Option<u32>,
    /// The language of the titles and summaries in the answer (best available otherwise).
    pub lang: Option<Lang>,
    /// Cards per page (default 20).
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_LIMIT)))]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = CURSOR_PATTERN), length(max = CURSOR_MAX_CHARS)))]
    pub cursor: Option<String>,
}

impl Input for RecipeSearch {
    type Valid = Query;

    fn validate(self) -> Result<Query, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let q = self.q.unwrap_or_default();
        if q.chars().count() > MAX_QUERY_CHARS {
            problems.push(Diagnostic::new("q", format!("is longer than {MAX_QUERY_CHARS} characters")));
        }
        let asked = [self.gf, self.vegan, self.vegetarian, self.dairy_free, self.nut_free];
        let flags = FLAGS.iter().zip(asked).filter(|(_, asked)| *asked == Some(true)).map(|(flag, _)| *flag);
        if self.max_min == Some(0) {
            problems.push(Diagnostic::new("max_min", "must be a whole number of minutes above 0"));
        }
        let filters = Filters {
            flags: flags.collect(),
            course: self.course,
            max_min: self.max_min,
            exclude: Vec::new(),
        };
        let limit = limit(self.limit, DEFAULT_LIMIT, MAX_LIMIT, &mut problems);
        let offset = offset(self.cursor.as_deref(), &mut problems);
        done(Query { q, filters, lang: self.lang, offset, limit }, problems)
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

/// One recipe by slug: `GET /r/{slug}.json` (`get_recipe`), `POST /api/r/{slug}/fork` (`fork_recipe`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipeSlug {
    /// The recipe's slug, as in `/r/{slug}.json` (from search_recipes).
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
}

impl Input for RecipeSlug {
    type Valid = String;

    fn validate(self) -> Result<String, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        done(slug.unwrap_or_default(), problems)
    }
}

/// `create_recipe` (`POST /api/recipes` takes the document itself as its body).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateRecipe {
    /// The recipe document: emoji, course, difficulty, times, servings, diet flags and `texts` in one or
    /// more languages. Server-set fields are ignored; the licence is always CC0-1.0.
    #[cfg_attr(feature = "schema", schemars(required, schema_with = "crate::recipes::recipe::schema::body"))]
    pub recipe: Option<Value>,
}

impl Input for CreateRecipe {
    type Valid = Value;

    fn validate(self) -> Result<Value, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let recipe = required("recipe", self.recipe, &mut problems);
        done(recipe.unwrap_or_default(), problems)
    }
}

/// `update_recipe` (`PUT /api/r/{slug}` takes the document plus `note` as its body and the version
/// as `If-Match`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UpdateRecipe {
    /// The slug of one of your own recipes.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// The whole new recipe document (not a patch). The licence stays the one the recipe has.
    #[cfg_attr(feature = "schema", schemars(required, schema_with = "crate::recipes::recipe::schema::body"))]
    pub recipe: Option<Value>,
    /// What you changed, in a sentence; it becomes the change's commit message.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub note: Option<String>,
    /// The version you read (get_recipe's `version`); the change is refused if it is no longer current.
    pub version: Option<u64>,
}

/// A change to one's own recipe: what the `PUT /api/r/{slug}` route and `update_recipe` both run.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub slug: String,
    /// The document with its `note`, as the route's body has it.
    pub body: Value,
    /// The version the caller read, if it named one.
    pub version: Option<u64>,
}

impl Input for UpdateRecipe {
    type Valid = Update;

    fn validate(self) -> Result<Update, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let recipe = required("recipe", self.recipe, &mut problems);
        let note = required("note", self.note, &mut problems);
        let mut body = recipe.unwrap_or_default();
        if let (Some(obj), Some(note)) = (body.as_object_mut(), note) {
            obj.insert("note".into(), Value::String(note));
        }
        done(Update { slug: slug.unwrap_or_default(), body, version: self.version }, problems)
    }
}

/// `POST /api/ai/write` (its body) and `ai_write_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AiWrite {
    /// What to write, in plain words ("a quick lentil soup for four").
    #[cfg_attr(feature = "schema", schemars(required, length(min = 1, max = crate::recipes::ai::MAX_PROMPT_CHARS)))]
    pub prompt: Option<String>,
    /// The language to write in.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub lang: Option<Lang>,
}

impl Input for AiWrite {
    type Valid = AiRequest;

    fn validate(self) -> Result<AiRequest, Vec<Diagnostic>> {
        crate::recipes::ai::check_request(self.prompt, self.lang)
    }
}

/// `ai_change_recipe` (`POST /api/r/{slug}/ai` takes the slug from its path and [`AiWrite`] as its body).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AiChange {
    /// The recipe to change (someone else's is forked to you first).
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// What to change, in plain words ("halve the sugar").
    #[cfg_attr(feature = "schema", schemars(required, length(min = 1, max = crate::recipes::ai::MAX_PROMPT_CHARS)))]
    pub prompt: Option<String>,
    /// The language of the text to change.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub lang: Option<Lang>,
}

/// A checked AI change: the recipe and what to ask of it.
#[derive(Debug, Clone, PartialEq)]
pub struct AiChangeAsked {
    pub slug: String,
    pub request: AiRequest,
}

impl Input for AiChange {
    type Valid = AiChangeAsked;

    fn validate(self) -> Result<AiChangeAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let request =
            crate::recipes::ai::check_request(self.prompt, self.lang).map_err(|more| problems.extend(more));
        match (slug, request) {
            (Some(slug), Ok(request)) if problems.is_empty() => Ok(AiChangeAsked { slug, request }),
            _ => Err(problems),
        }
    }
}

/// `POST /api/r/{slug}/variant/{kind}`, `make_diet_version`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DietVersion {
    /// The recipe to make a diet version of.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// `gf` (gluten-free), `vegan`, or `both`.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub kind: Option<DietKind>,
}

/// A checked diet version request: the recipe and the version of it.
#[derive(Debug, Clone, PartialEq)]
pub struct DietAsked {
    pub slug: String,
    pub kind: DietKind,
}

impl Input for DietVersion {
    type Valid = DietAsked;

    fn validate(self) -> Result<DietAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let kind = required("kind", self.kind, &mut problems);
        match (slug, kind) {
            (Some(slug), Some(kind)) => Ok(DietAsked { slug, kind }),
            _ => Err(problems),
        }
    }
}

/// The longest page of a feed or a history.
pub const FEED_MAX_LIMIT: usize = 1000;
/// A feed page's length when `limit` is left out.
pub const FEED_DEFAULT_LIMIT: usize = 100;

/// `GET /api/changes` and `GET /api/episodes/changes`: the feeds, oldest first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedQuery {
    /// The sequence number to start after (0, the default, is from the start).
    #[cfg_attr(feature = "schema", schemars(range(max = i64::MAX)))]
    pub since: Option<u64>,
    /// The same as `since`: the `next_cursor` of the previous page.
    #[cfg_attr(feature = "schema", schemars(range(max = i64::MAX)))]
    pub cursor: Option<u64>,
    /// Items per page (default 100); a page also stops at 1 MiB of items.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = FEED_MAX_LIMIT)))]
    pub limit: Option<u32>,
}

/// A checked feed page: the items after `since`, at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedAsked {
    pub since: u64,
    pub limit: u32,
}

impl Input for FeedQuery {
    type Valid = FeedAsked;

    fn validate(self) -> Result<FeedAsked, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let since = self.cursor.or(self.since).unwrap_or(0);
        if since > i64::MAX as u64 {
            let field = if self.cursor.is_some() { "cursor" } else { "since" };
            problems.push(Diagnostic::new(field, "must be a sequence number this feed gave out"));
        }
        let limit = limit(self.limit, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, &mut problems);
        done(FeedAsked { since, limit: limit as u32 }, problems)
    }
}

/// The longest history cursor: `a` and a sequence number of 18 digits, or `g` and a commit id.
pub const HISTORY_CURSOR_MAX_CHARS: usize = 56;
/// The longest cursor after an API change (`a` and at most 18 digits, which always fit a sequence
/// number): the description's `maxLength`, and the server's, since a longer one that fits the
/// pattern would name a number no feed gives out.
pub const HISTORY_API_CURSOR_MAX_CHARS: usize = 26;

/// `GET /api/r/{slug}/history`: a recipe's history, newest first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistoryQuery {
    /// The recipe.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub slug: Option<String>,
    /// Items per page (default 100); a page also stops at 1 MiB of items.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = FEED_MAX_LIMIT)))]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = super::HISTORY_CURSOR_PATTERN), length(max = HISTORY_API_CURSOR_MAX_CHARS)))]
    pub cursor: Option<String>,
}

/// A checked history page: the recipe, where the page starts (its first page without a cursor) and
/// how many items it holds at most.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryAsked {
    pub slug: String,
    pub cursor: Option<crate::recipes::write::HistoryCursor>,
    pub limit: usize,
}

impl Input for HistoryQuery {
    type Valid = HistoryAsked;

    fn validate(self) -> Result<Self::Valid, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let slug = required("slug", self.slug, &mut problems);
        let cursor = self.cursor.and_then(|cursor| {
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
        let limit = limit(self.limit, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, &mut problems);
        done(HistoryAsked { slug: slug.unwrap_or_default(), cursor, limit }, problems)
    }
}

/// `GET /kitchen/callback/github`: where GitHub sends a person back (OAuth 2.0, RFC 6749 §4.1.2):
/// `code` and `state` when the person signed in, `error` and `state` when they did not (§4.1.2.1).
/// `state` is always required (this site always sends one); `code` or `error` is a rule across two
/// parameters that JSON Schema cannot state for a query, so `code` is described as optional.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GithubCallback {
    /// The authorisation code to trade for a token (required unless `error` says why there is none).
    pub code: Option<String>,
    /// The state this site set when the sign-in started.
    #[cfg_attr(feature = "schema", schemars(required))]
    pub state: Option<String>,
    /// Why the sign-in did not complete (instead of `code`).
    pub error: Option<String>,
    pub error_description: Option<String>,
    pub error_uri: Option<String>,
}

/// What GitHub's callback says.
#[derive(Debug, Clone, PartialEq)]
pub enum SignIn {
    /// The person signed in at GitHub: the code to trade, and the state to compare.
    Code { code: String, state: String },
    /// The sign-in did not complete, in GitHub's words.
    Refused(String),
}

impl Input for GithubCallback {
    type Valid = SignIn;

    fn validate(self) -> Result<SignIn, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let state = required("state", self.state, &mut problems);
        let answer = match (self.code, self.error) {
            (_, Some(error)) => Some(SignIn::Refused(error)),
            (Some(code), None) => Some(SignIn::Code { code, state: state.unwrap_or_default() }),
            (None, None) => {
                problems.push(Diagnostic::new("code", "give `code`, or `error` to say why there is none"));
                None
            }
        };
        match answer {
            Some(answer) if problems.is_empty() => Ok(answer),
            _ => Err(problems),
        }
    }
}
