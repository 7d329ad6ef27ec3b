//! The MCP server of `/mcp` as pure functions: the tool table, one typed input per tool, and the
//! JSON-RPC framing (version negotiation, errors, result envelopes). The edge only runs the tools.
//!
//! Both eras of the protocol are served by one stateless dispatcher: the `initialize` handshake
//! (2025-11-25 and the versions before it, what deployed clients send) and the stateless 2026-07-28
//! revision, where every request names its version and capabilities in `params._meta` and
//! `server/discover` replaces the handshake. Nothing is remembered between requests, so any isolate
//! answers any request.
//!
//! The tool schemas are generated from the input and output types below by the builder (feature
//! `schema`) into `mcp/tools.json`, which is compiled in: the Worker does not carry schemars. A builder
//! test fails when the file is stale (`UPDATE_EXPECT=1` rewrites it). We rejected rmcp's server runtime
//! because it needs tokio tasks a Worker lacks, and its model types because they cost wasm size for a
//! few dozen lines of framing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::recipe::{Course, Lang};

/// Versions of the handshake era, newest first; `initialize` echoes one of them.
pub const HANDSHAKE_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// Versions of the stateless era (per-request `_meta`), newest first.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];
/// What `MCP-Protocol-Version` means when a handshake-era client leaves it out (the transport spec's default).
const DEFAULT_HEADER_VERSION: &str = "2025-03-26";

pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC and MCP error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// An `Origin` this server does not serve (implementation-defined range).
pub const FORBIDDEN_ORIGIN: i64 = -32000;
pub const HEADER_MISMATCH: i64 = -32020;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// How long a client may keep `tools/list` and `server/discover` answers (stateless era).
const LIST_TTL_MS: u64 = 3_600_000;

/// What the server tells an agent about itself, in `initialize` and `server/discover`.
pub const INSTRUCTIONS: &str = "Commonplace: open recipes (en, he, pt; CC0 unless a recipe says otherwise) and \
quote attribution for podcast transcripts (each transcript keeps its show's licence; Changelog transcripts are \
CC BY-SA 4.0). Reading needs no key. Tools that write (create, fork, update, AI, diet versions) need \
`Authorization: Bearer <key>`; a person makes a key on /kitchen. You may change only your own recipes: fork \
someone else's first. Check every quote attribution whose `trust` is `review`.";

/// Whether a tool needs an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// One tool of the table: its name, description and honest behaviour hints (MCP `ToolAnnotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub access: Access,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Reaches beyond this service's own data (the AI provider).
    pub open_world: bool,
}

const fn read(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        access: Access::Read,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    }
}

const fn write(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    [destructive, idempotent, open_world]: [bool; 3],
) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        access: Access::Write,
        read_only: false,
        destructive,
        idempotent,
        open_world,
    }
}

/// Every tool, in the order `tools/list` shows them (deterministic, so clients can cache the list).
pub const TOOLS: [ToolSpec; 13] = [
    read(
        "search_recipes",
        "Search recipes",
        "Search the open recipe collection (en, he, pt). Matching folds case and accents, stems English and \
         Portuguese, handles Hebrew prefixes and tolerates one typo. Filters are ANDed. Same as GET /api/recipes. \
         Returns one page of cards and `next_cursor` for the next page.",
    ),
    read(
        "get_recipe",
        "Get a recipe",
        "Read one recipe by slug with all its languages and the server-set fields (owner, version, \
         forked_from, variant_of). Same as GET /r/{slug}.json.",
    ),
    write(
        "create_recipe",
        "Create a recipe",
        "Create a new recipe owned by the key's owner, licensed CC0-1.0. Needs an API key. The slug is made \
         from the title. Same as POST /api/recipes.",
        [false, false, false],
    ),
    write(
        "fork_recipe",
        "Fork a recipe",
        "Make your own copy of any recipe (with `forked_from` set), which you may then change with \
         update_recipe. Needs an API key. Each call makes a new copy. Same as POST /api/r/{slug}/fork.",
        [false, false, false],
    ),
    write(
        "update_recipe",
        "Change your recipe",
        "Replace the document of one of your own recipes with a new version; `note` says what changed. Send \
         `version` (from get_recipe) to refuse the change if someone changed it meanwhile. Needs an API key. \
         Someone else's recipe: fork_recipe first. Same as PUT /api/r/{slug}.",
        [true, false, false],
    ),
    write(
        "ai_write_recipe",
        "Write a recipe with AI",
        "Ask the site's AI to write a new recipe from a prompt, in one language; it is stored as yours (CC0). \
         Needs an API key; limited to 20 AI calls an hour per account. Same as POST /api/ai/write.",
        [false, false, true],
    ),
    write(
        "ai_change_recipe",
        "Change a recipe with AI",
        "Ask the site's AI to change a recipe as the prompt says. Your own recipe is changed in place; \
         anyone else's is forked to you first and the fork is changed. Needs an API key. Same as POST \
         /api/r/{slug}/ai.",
        [true, false, true],
    ),
    write(
        "make_diet_version",
        "Make a diet version",
        "Get the shared gluten-free (`gf`), vegan, or gluten-free vegan (`both`) version of a recipe. It is \
         made once (by the site's AI, checked by rules) and then shared by everyone, so calling again returns \
         the same recipe. Needs an API key. Same as POST /api/r/{slug}/variant/{kind}.",
        [false, true, true],
    ),
    read(
        "attribute_quote",
        "Attribute a quote",
        "Find who said a quote and when. Give the quote, and the episode's source URL (any spelling) if you \
         know it; without it the whole corpus is searched, and the answer adds `match` (how many places \
         hold the quote word for word) and `alternatives` (the other places). Quotes edited with an \
         ellipsis or a [bracketed] word are found (`edited: true`). Every found answer has `cite` (a \
         citation to paste) and `listen_url`. `trust` is `high` only for a verbatim match inside one \
         person's speech with a confident or human-set name, and, over the whole corpus, in exactly one \
         place; otherwise check it. Same as GET /api/attribute.",
    ),
    read(
        "search_transcripts",
        "Search transcripts",
        "Phrase search over every published transcript, each hit with its speaker and times. `speaker` \
         alone lists everything that person said. Same as GET /api/search.",
    ),
    read(
        "get_transcript",
        "Get a transcript",
        "The canonical transcript of an episode, optionally narrowed to one speaker and a time window \
         (turns overlapping the window are clipped); the filters are echoed. Same as GET \
         /api/episodes/{id}/transcript.",
    ),
    read(
        "speaker_stats",
        "Speaker statistics",
        "Seconds spoken, share of speech time, segment count, first and last appearance per speaker of an \
         episode, optionally within a time window. Same as GET /api/episodes/{id}/speakers.",
    ),
    read(
        "list_episodes",
        "List episodes",
        "Published podcast episodes with their ids, source URLs and licences, optionally of one show, one \
         page at a time. Same as GET /api/episodes.",
    ),
];

pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|tool| tool.name == name)
}

// ---------------------------------------------------------------------------------------------------
// Tool inputs: one typed struct per tool. Each turns into the query parameters or body its HTTP route
// takes, so the tool and the route run the same parsing and the same function.

/// `search_recipes`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchRecipes {
    /// Words to search for, in any of the three languages. Leave out to list by filters alone.
    #[serde(default)]
    pub q: Option<String>,
    /// Only gluten-free recipes.
    #[serde(default)]
    pub gf: Option<bool>,
    /// Only vegan recipes.
    #[serde(default)]
    pub vegan: Option<bool>,
    /// Only vegetarian recipes.
    #[serde(default)]
    pub vegetarian: Option<bool>,
    /// Only dairy-free recipes.
    #[serde(default)]
    pub dairy_free: Option<bool>,
    /// Only nut-free recipes.
    #[serde(default)]
    pub nut_free: Option<bool>,
    /// Only this course.
    #[serde(default)]
    pub course: Option<Course>,
    /// At most this many minutes of preparation plus cooking.
    #[serde(default)]
    pub max_min: Option<u32>,
    /// The language of the titles and summaries in the answer (best available otherwise).
    #[serde(default)]
    pub lang: Option<Lang>,
    /// Cards per page, 1 to 100 (default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

impl SearchRecipes {
    /// The `GET /api/recipes` query parameters.
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = Params::default();
        params.text("q", &self.q);
        for (name, flag) in [
            ("gf", self.gf),
            ("vegan", self.vegan),
            ("vegetarian", self.vegetarian),
            ("dairy_free", self.dairy_free),
            ("nut_free", self.nut_free),
        ] {
            if flag == Some(true) {
                params.push(name, "1".into());
            }
        }
        params.push_opt("course", self.course.map(|course| course.code().to_string()));
        params.push_opt("max_min", self.max_min.map(|n| n.to_string()));
        params.push_opt("lang", self.lang.map(|lang| lang.code().to_string()));
        params.push_opt("limit", self.limit.map(|n| n.to_string()));
        params.text("cursor", &self.cursor);
        params.0
    }
}

/// `get_recipe`, `fork_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipeSlug {
    /// The recipe's slug, as in `/r/{slug}.json` (from search_recipes).
    pub slug: String,
}

/// `create_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateRecipe {
    /// The recipe document: emoji, course, difficulty, times, servings, diet flags and `texts` in one or
    /// more languages. Server-set fields are ignored.
    #[cfg_attr(feature = "schema", schemars(with = "crate::recipe::Recipe"))]
    pub recipe: Value,
}

/// `update_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UpdateRecipe {
    /// The slug of one of your own recipes.
    pub slug: String,
    /// The whole new recipe document (not a patch).
    #[cfg_attr(feature = "schema", schemars(with = "crate::recipe::Recipe"))]
    pub recipe: Value,
    /// What you changed, in a sentence; it becomes the change's commit message.
    pub note: String,
    /// The version you read (get_recipe's `version`); the change is refused if it is no longer current.
    #[serde(default)]
    pub version: Option<u64>,
}

impl UpdateRecipe {
    /// The `PUT /api/r/{slug}` body (the document plus `note`) and its `If-Match` header.
    pub fn body_and_if_match(&self) -> (Value, Option<String>) {
        let mut body = self.recipe.clone();
        if let Some(obj) = body.as_object_mut() {
            obj.insert("note".into(), Value::String(self.note.clone()));
        }
        (body, self.version.map(|version| format!("\"{version}\"")))
    }
}

/// `ai_write_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AiWriteRecipe {
    /// What to write, in plain words ("a quick lentil soup for four").
    pub prompt: String,
    /// The language to write in.
    pub lang: Lang,
}

/// `ai_change_recipe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AiChangeRecipe {
    /// The recipe to change (someone else's is forked to you first).
    pub slug: String,
    /// What to change, in plain words ("halve the sugar").
    pub prompt: String,
    /// The language of the text to change.
    pub lang: Lang,
}

impl AiWriteRecipe {
    pub fn body(&self) -> Value {
        json!({ "prompt": self.prompt, "lang": self.lang.code() })
    }
}

impl AiChangeRecipe {
    pub fn body(&self) -> Value {
        json!({ "prompt": self.prompt, "lang": self.lang.code() })
    }
}

/// Which diet version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum DietKind {
    Gf,
    Vegan,
    Both,
}

impl DietKind {
    pub fn code(self) -> &'static str {
        match self {
            DietKind::Gf => "gf",
            DietKind::Vegan => "vegan",
            DietKind::Both => "both",
        }
    }
}

/// `make_diet_version`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MakeDietVersion {
    /// The recipe to make a diet version of.
    pub slug: String,
    /// `gf` (gluten-free), `vegan`, or `both`.
    pub kind: DietKind,
}

/// `attribute_quote`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttributeQuote {
    /// The episode's source address (its page URL; any spelling of it works). Leave it out to search
    /// every episode.
    #[serde(default)]
    pub source_url: Option<String>,
    /// The quote, as you have it.
    pub quote: String,
}

impl AttributeQuote {
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = vec![("quote".to_string(), self.quote.clone())];
        params.extend(self.source_url.clone().map(|url| ("source_url".to_string(), url)));
        params
    }
}

/// `search_transcripts`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchTranscripts {
    /// A phrase to find. Give `q`, `speaker`, or both.
    #[serde(default)]
    pub q: Option<String>,
    /// A person's name: only what they said (alone: everything they said).
    #[serde(default)]
    pub speaker: Option<String>,
    /// Hits per page, 1 to 100 (default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

impl SearchTranscripts {
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = Params::default();
        params.text("q", &self.q);
        params.text("speaker", &self.speaker);
        params.push_opt("limit", self.limit.map(|n| n.to_string()));
        params.text("cursor", &self.cursor);
        params.0
    }
}

/// `get_transcript`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetTranscript {
    /// The episode id (`ep_…`, from list_episodes or attribute_quote).
    pub episode_id: String,
    /// Only the turns of this person (by name).
    #[serde(default)]
    pub speaker: Option<String>,
    /// Start of the window, in seconds.
    #[serde(default)]
    pub from: Option<f64>,
    /// End of the window, in seconds.
    #[serde(default)]
    pub to: Option<f64>,
}

impl GetTranscript {
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = Params::default();
        params.text("speaker", &self.speaker);
        params.push_opt("from", self.from.map(|s| s.to_string()));
        params.push_opt("to", self.to.map(|s| s.to_string()));
        params.0
    }
}

/// `speaker_stats`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpeakerStats {
    /// The episode id (`ep_…`).
    pub episode_id: String,
    /// Start of the window, in seconds.
    #[serde(default)]
    pub from: Option<f64>,
    /// End of the window, in seconds.
    #[serde(default)]
    pub to: Option<f64>,
}

impl SpeakerStats {
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = Params::default();
        params.push_opt("from", self.from.map(|s| s.to_string()));
        params.push_opt("to", self.to.map(|s| s.to_string()));
        params.0
    }
}

/// `list_episodes`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListEpisodes {
    /// Only episodes of this show (its id, from /api/shows).
    #[serde(default)]
    pub show: Option<String>,
    /// Episodes per page, 1 to 100 (default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

impl ListEpisodes {
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = Params::default();
        params.text("show", &self.show);
        params.push_opt("limit", self.limit.map(|n| n.to_string()));
        params.text("cursor", &self.cursor);
        params.0
    }
}

/// Query parameters built from optional tool arguments.
#[derive(Default)]
struct Params(Vec<(String, String)>);

impl Params {
    fn push(&mut self, name: &str, value: String) {
        self.0.push((name.to_string(), value));
    }

    fn push_opt(&mut self, name: &str, value: Option<String>) {
        if let Some(value) = value {
            self.push(name, value);
        }
    }

    fn text(&mut self, name: &str, value: &Option<String>) {
        self.push_opt(name, value.clone());
    }
}

/// A parsed tool call: which tool, with its typed input.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInput {
    SearchRecipes(SearchRecipes),
    GetRecipe(RecipeSlug),
    CreateRecipe(CreateRecipe),
    ForkRecipe(RecipeSlug),
    UpdateRecipe(UpdateRecipe),
    AiWriteRecipe(AiWriteRecipe),
    AiChangeRecipe(AiChangeRecipe),
    MakeDietVersion(MakeDietVersion),
    AttributeQuote(AttributeQuote),
    SearchTranscripts(SearchTranscripts),
    GetTranscript(GetTranscript),
    SpeakerStats(SpeakerStats),
    ListEpisodes(ListEpisodes),
}

impl ToolInput {
    /// Reads a known tool's arguments; the message says what is wrong in the agent's terms.
    pub fn parse(name: &str, arguments: Value) -> Result<ToolInput, String> {
        fn typed<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, String> {
            serde_json::from_value(arguments)
                .map_err(|err| format!("the arguments do not fit the input schema: {err}"))
        }
        Ok(match name {
            "search_recipes" => ToolInput::SearchRecipes(typed(arguments)?),
            "get_recipe" => ToolInput::GetRecipe(typed(arguments)?),
            "create_recipe" => ToolInput::CreateRecipe(typed(arguments)?),
            "fork_recipe" => ToolInput::ForkRecipe(typed(arguments)?),
            "update_recipe" => ToolInput::UpdateRecipe(typed(arguments)?),
            "ai_write_recipe" => ToolInput::AiWriteRecipe(typed(arguments)?),
            "ai_change_recipe" => ToolInput::AiChangeRecipe(typed(arguments)?),
            "make_diet_version" => ToolInput::MakeDietVersion(typed(arguments)?),
            "attribute_quote" => ToolInput::AttributeQuote(typed(arguments)?),
            "search_transcripts" => ToolInput::SearchTranscripts(typed(arguments)?),
            "get_transcript" => ToolInput::GetTranscript(typed(arguments)?),
            "speaker_stats" => ToolInput::SpeakerStats(typed(arguments)?),
            "list_episodes" => ToolInput::ListEpisodes(typed(arguments)?),
            other => return Err(format!("no tool `{other}`")),
        })
    }
}

// ---------------------------------------------------------------------------------------------------
// Outputs without a type of their own elsewhere.

/// The answer of `GET /api/recipes` and `search_recipes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecipePage {
    pub items: Vec<crate::search::CardView>,
    pub total: u64,
    pub next_cursor: Option<String>,
}

/// The answer of `GET /api/episodes` and `list_episodes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EpisodePage {
    pub show: Option<String>,
    pub items: Vec<crate::transcript::EpisodeSummary>,
    pub total: usize,
    pub next_cursor: Option<String>,
}

/// The generated `tools/list` entries (name, title, description, schemas, annotations).
pub const TOOLS_JSON: &str = include_str!("mcp/tools.json");

/// The `tools/list` entries made from [`TOOLS`] and the schemas: what `tools.json` must hold.
/// `schemas` maps a tool name to its input and output schema.
pub fn tool_entries(schemas: impl Fn(&str) -> (Value, Value)) -> Value {
    let entries: Vec<Value> = TOOLS
        .iter()
        .map(|tool| {
            let (input, output) = schemas(tool.name);
            json!({
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": input,
                "outputSchema": output,
                "annotations": {
                    "title": tool.title,
                    "readOnlyHint": tool.read_only,
                    "destructiveHint": tool.destructive,
                    "idempotentHint": tool.idempotent,
                    "openWorldHint": tool.open_world,
                },
            })
        })
        .collect();
    Value::Array(entries)
}

// ---------------------------------------------------------------------------------------------------
// JSON-RPC framing.

/// Which revision of the protocol a request speaks; it decides the result envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// `initialize` and `MCP-Protocol-Version`: results as 2025-11-25 shapes them.
    Handshake,
    /// Per-request `_meta`: results carry `resultType`, cacheable ones `ttlMs` and `cacheScope`.
    Stateless,
}

/// The HTTP request's MCP headers.
#[derive(Debug, Clone, Default)]
pub struct Headers {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
}

/// What the edge does with a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Answer with this HTTP status and JSON-RPC body.
    Reply { status: u16, body: Value },
    /// A notification or a response: `202 Accepted`, no body.
    Accepted,
    /// Run a tool, then answer with [`tool_reply`].
    Call(Call),
}

/// A `tools/call` to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: Value,
    pub era: Era,
    pub tool: &'static ToolSpec,
    /// The typed input, or why the arguments do not fit (answered as a tool error).
    pub input: Result<ToolInput, String>,
}

/// A JSON-RPC error response.
pub fn error(id: Value, code: i64, message: impl Into<String>, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message.into() });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// The HTTP status of a JSON-RPC error. Handshake-era clients expect 200 for protocol errors other than
/// unreadable messages; the stateless era maps them (unknown method 404, malformed 400).
fn error_status(code: i64, era: &Era) -> u16 {
    match (code, era) {
        (PARSE_ERROR | INVALID_REQUEST, _) => 400,
        (_, Era::Handshake) => 200,
        (METHOD_NOT_FOUND, Era::Stateless) => 404,
        (INTERNAL_ERROR, Era::Stateless) => 500,
        (_, Era::Stateless) => 400,
    }
}

fn fail(id: Value, era: &Era, code: i64, message: impl Into<String>, data: Option<Value>) -> Step {
    Step::Reply { status: error_status(code, era), body: error(id, code, message, data) }
}

fn server_info(version: &str) -> Value {
    json!({ "name": "commonplace", "title": "Commonplace", "version": version })
}

/// Wraps a result for the request's era.
fn result(id: Value, era: &Era, mut result: Value, cacheable: bool, server_version: &str) -> Step {
    if *era == Era::Stateless {
        result["resultType"] = json!("complete");
        result["_meta"] = json!({ META_SERVER_INFO: server_info(server_version) });
        if cacheable {
            result["ttlMs"] = json!(LIST_TTL_MS);
            result["cacheScope"] = json!("public");
        }
    }
    Step::Reply { status: 200, body: json!({ "jsonrpc": "2.0", "id": id, "result": result }) }
}

/// Reads one message sent to `/mcp` and decides what to do. `server_version` names this build.
pub fn handle(body: &[u8], headers: &Headers, server_version: &str) -> Step {
    let handshake = Era::Handshake;
    let message: Value = match serde_json::from_slice(body) {
        Ok(message) => message,
        Err(err) => return fail(Value::Null, &handshake, PARSE_ERROR, format!("Parse error: {err}"), None),
    };
    let Some(obj) = message.as_object() else {
        let what =
            if message.is_array() { "batches are not supported; send one message" } else { "not an object" };
        return fail(Value::Null, &handshake, INVALID_REQUEST, format!("Invalid request: {what}"), None);
    };
    let id = obj.get("id").cloned();
    let echo = id.clone().filter(|id| id.is_string() || id.is_number()).unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return fail(echo, &handshake, INVALID_REQUEST, "Invalid request: `jsonrpc` must be \"2.0\"", None);
    }
    let method = match obj.get("method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => {
            return fail(
                echo,
                &handshake,
                INVALID_REQUEST,
                "Invalid request: `method` must be a string",
                None,
            );
        }
        // A response to a server request: we never send any, so there is nothing to match it to.
        None if obj.contains_key("result") || obj.contains_key("error") => return Step::Accepted,
        None => return fail(echo, &handshake, INVALID_REQUEST, "Invalid request: no `method`", None),
    };
    let Some(id) = id else {
        // Notifications (`notifications/initialized`, `notifications/cancelled`, …) need no answer.
        return Step::Accepted;
    };
    if !(id.is_string() || id.is_number()) {
        return fail(
            Value::Null,
            &handshake,
            INVALID_REQUEST,
            "Invalid request: `id` must be a string or a number",
            None,
        );
    }
    let params = match obj.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return fail(id, &handshake, INVALID_PARAMS, "Invalid params: `params` must be an object", None);
        }
    };
    let era = match era_of(&id, method, &params, headers) {
        Ok(era) => era,
        Err(step) => return *step,
    };
    match (method, &era) {
        ("initialize", Era::Handshake) => {
            let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
            // Negotiation: echo a version we speak, else offer our newest and let the client decide.
            let version = HANDSHAKE_VERSIONS.iter().find(|v| **v == asked).unwrap_or(&HANDSHAKE_VERSIONS[0]);
            let body = json!({
                "protocolVersion": version,
                "capabilities": { "tools": { "listChanged": false } },
                "serverInfo": server_info(server_version),
                "instructions": INSTRUCTIONS,
            });
            result(id, &era, body, false, server_version)
        }
        ("ping", Era::Handshake) => result(id, &era, json!({}), false, server_version),
        ("server/discover", _) => {
            let mut versions: Vec<&str> = STATELESS_VERSIONS.to_vec();
            versions.extend(HANDSHAKE_VERSIONS);
            let body = json!({
                "supportedVersions": versions,
                "capabilities": { "tools": { "listChanged": false } },
                "instructions": INSTRUCTIONS,
            });
            // `server/discover` is answered in the stateless shape whatever the era: it is that era's method.
            result(id, &Era::Stateless, body, true, server_version)
        }
        ("tools/list", _) => {
            if params.get("cursor").is_some_and(|cursor| !cursor.is_null()) {
                return fail(
                    id,
                    &era,
                    INVALID_PARAMS,
                    "Invalid params: this list has one page; no cursor is valid",
                    None,
                );
            }
            let tools: Value = serde_json::from_str(TOOLS_JSON).expect("tools.json is generated JSON");
            result(id, &era, json!({ "tools": tools }), true, server_version)
        }
        ("tools/call", _) => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return fail(id, &era, INVALID_PARAMS, "Invalid params: `name` (the tool) is required", None);
            };
            let Some(tool) = tool(name) else {
                return fail(
                    id,
                    &era,
                    INVALID_PARAMS,
                    format!("Invalid params: no tool `{name}`; see tools/list"),
                    None,
                );
            };
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(arguments @ Value::Object(_)) => arguments.clone(),
                Some(_) => {
                    return fail(
                        id,
                        &era,
                        INVALID_PARAMS,
                        "Invalid params: `arguments` must be an object",
                        None,
                    );
                }
            };
            Step::Call(Call { id, era, tool, input: ToolInput::parse(name, arguments) })
        }
        _ => fail(id, &era, METHOD_NOT_FOUND, format!("Method not found: {method}"), None),
    }
}

/// Which era a request belongs to, or the error that refuses it. A request that names its version in
/// `_meta` is stateless; one that does not is of the handshake era and is checked against the header.
fn era_of(
    id: &Value,
    method: &str,
    params: &Map<String, Value>,
    headers: &Headers,
) -> Result<Era, Box<Step>> {
    let stateless = Era::Stateless;
    let meta = params.get("_meta").and_then(Value::as_object);
    let meta_version = meta.and_then(|meta| meta.get(META_VERSION));
    let Some(meta_version) = meta_version else {
        let header = headers.protocol_version.as_deref().unwrap_or(DEFAULT_HEADER_VERSION);
        if STATELESS_VERSIONS.contains(&header) && method != "server/discover" {
            return Err(Box::new(fail(
                id.clone(),
                &stateless,
                INVALID_PARAMS,
                format!(
                    "Invalid params: protocol {header} needs `_meta` with `{META_VERSION}` and `{META_CAPABILITIES}`"
                ),
                None,
            )));
        }
        if !STATELESS_VERSIONS.contains(&header) && !HANDSHAKE_VERSIONS.contains(&header) {
            return Err(Box::new(fail(
                id.clone(),
                &Era::Handshake,
                INVALID_REQUEST,
                format!("Unsupported MCP-Protocol-Version `{header}`"),
                Some(json!({ "supported": supported_versions() })),
            )));
        }
        return Ok(Era::Handshake);
    };
    let requested = meta_version.as_str().unwrap_or_default();
    if let Some(header) = &headers.protocol_version
        && header != requested
    {
        return Err(Box::new(fail(
            id.clone(),
            &stateless,
            HEADER_MISMATCH,
            format!("Header mismatch: MCP-Protocol-Version is `{header}` but `_meta` says `{requested}`"),
            None,
        )));
    }
    if let Some(header) = &headers.method
        && header != method
    {
        return Err(Box::new(fail(
            id.clone(),
            &stateless,
            HEADER_MISMATCH,
            format!("Header mismatch: Mcp-Method is `{header}` but the body's method is `{method}`"),
            None,
        )));
    }
    if !STATELESS_VERSIONS.contains(&requested) {
        return Err(Box::new(fail(
            id.clone(),
            &stateless,
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version `{requested}`"),
            Some(json!({ "supported": STATELESS_VERSIONS, "requested": requested })),
        )));
    }
    if !meta.is_some_and(|meta| meta.get(META_CAPABILITIES).is_some_and(Value::is_object)) {
        return Err(Box::new(fail(
            id.clone(),
            &stateless,
            INVALID_PARAMS,
            format!("Invalid params: `_meta` must carry `{META_CAPABILITIES}` (an object)"),
            None,
        )));
    }
    Ok(Era::Stateless)
}

fn supported_versions() -> Vec<&'static str> {
    let mut versions: Vec<&str> = STATELESS_VERSIONS.to_vec();
    versions.extend(HANDSHAKE_VERSIONS);
    versions
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool's structured answer (a JSON object matching its output schema).
    Done(Value),
    /// A failure the agent can act on: what to do next, and the problem details (RFC 9457 fields).
    Failed { message: String, problem: Value },
}

/// The JSON-RPC answer to a tool call: text content next to `structuredContent`, or `isError`.
pub fn tool_reply(call: &Call, outcome: ToolOutcome, server_version: &str) -> Step {
    let body = match outcome {
        ToolOutcome::Done(value) => json!({
            // Clients without structured content read the same JSON as text.
            "content": [{ "type": "text", "text": value.to_string() }],
            "structuredContent": value,
            "isError": false,
        }),
        // No `structuredContent` on errors: it would have to match the success schema.
        ToolOutcome::Failed { message, problem } => json!({
            "content": [
                { "type": "text", "text": message },
                { "type": "text", "text": problem.to_string() },
            ],
            "isError": true,
        }),
    };
    result(call.id.clone(), &call.era, body, false, server_version)
}

/// Turns a refused call into a message that tells the agent its next step. `problem` is the RFC 9457
/// body the HTTP route would have answered; `slug` is the recipe the call was about, if any.
pub fn failure(tool: &ToolSpec, slug: Option<&str>, problem: Value) -> ToolOutcome {
    let status = problem.get("status").and_then(Value::as_u64).unwrap_or(500);
    let detail = problem.get("detail").and_then(Value::as_str).unwrap_or_default();
    let name = tool.name;
    let slug = slug.unwrap_or("the recipe");
    let message = match status {
        401 => format!(
            "{name} needs an API key ({detail}). A person signs in at /kitchen, makes a key there, and \
             configures this MCP client to send it as `Authorization: Bearer <key>`; reading tools work without one."
        ),
        403 => format!(
            "`{slug}` is not yours, so {name} may not change it. Call fork_recipe with {{\"slug\": \"{slug}\"}} \
             to get your own copy, then call {name} on the copy's slug."
        ),
        404 if tool.name.contains("recipe") || tool.name == "make_diet_version" => {
            format!("{detail}. Find recipe slugs with search_recipes.")
        }
        404 => format!("{detail}. Find episodes and their ids with list_episodes."),
        409 => format!(
            "{detail}. Read `{slug}` again with get_recipe, apply your change to that version, and send its \
             `version`."
        ),
        400 | 422 => {
            let problems: Vec<String> = problem
                .get("errors")
                .and_then(Value::as_array)
                .map(|errors| {
                    errors
                        .iter()
                        .map(|e| {
                            let field = e.get("field").and_then(Value::as_str).unwrap_or_default();
                            let reason = e.get("reason").and_then(Value::as_str).unwrap_or_default();
                            format!("{field}: {reason}")
                        })
                        .collect()
                })
                .unwrap_or_default();
            let listed = if problems.is_empty() { detail.to_string() } else { problems.join("; ") };
            format!("The arguments have problems: {listed}. Fix all of them and call {name} again.")
        }
        429 => format!(
            "Too many calls: {detail}. Every key of an account shares its limits, so wait, then call {name} again."
        ),
        503 => format!(
            "{detail}. The AI is not available on this server now; write or change the recipe yourself with \
             create_recipe or update_recipe."
        ),
        502 | 504 => format!("The AI provider failed ({detail}). Call {name} again later."),
        _ => format!("The server failed ({detail}). Call {name} again later."),
    };
    ToolOutcome::Failed { message, problem }
}

/// The failure for arguments that do not fit the tool's input schema.
pub fn bad_arguments(tool: &ToolSpec, reason: &str) -> ToolOutcome {
    ToolOutcome::Failed {
        message: format!("{reason}. See the inputSchema of {} in tools/list and call again.", tool.name),
        problem: json!({
            "type": "/problems/invalid-parameter",
            "title": "The arguments do not fit the tool's input schema",
            "status": 400,
            "detail": reason,
        }),
    }
}

#[cfg(test)]
mod tests;
