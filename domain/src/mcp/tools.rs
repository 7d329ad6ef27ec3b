//! The tool table of `/mcp`: each tool's name, description and behaviour hints, the route's operation
//! ([`Op`]) it runs, and the operation input (`crate::api`) its arguments deserialise into. One entry
//! in [`tools!`] below declares a tool: its place in `tools/list`, its [`ToolInput`] variant (named
//! as its operation) and its schemas all come from it.

use serde_json::{Value, json};

use crate::Diagnostic;
use crate::api::routes::Op;
use crate::api::{self, from_json};
#[cfg(feature = "schema")]
use crate::quotes::quote::{Attribution, phrase, views};
#[cfg(feature = "schema")]
use crate::recipes::recipe::Published;

/// Whether a tool needs an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// One tool of the table: its name, description and honest behaviour hints (MCP `ToolAnnotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// The operation the tool runs: the one its HTTP route runs.
    pub op: Op,
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

const fn read(op: Op, name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        op,
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

/// What a writing tool may do beyond adding data (MCP `ToolAnnotations`' hints).
#[derive(Debug, Clone, Copy)]
struct WriteHints {
    /// It may replace what was there (a recipe's document).
    destructive: bool,
    /// The same call twice has the effect of one.
    idempotent: bool,
    /// It reaches beyond this service's own data (the AI provider).
    open_world: bool,
}

const fn write(
    op: Op,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    WriteHints { destructive, idempotent, open_world }: WriteHints,
) -> ToolSpec {
    ToolSpec {
        op,
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

/// Declares the tools: `Op(Input => Output) = read(…)` or `write(…)`, in `tools/list` order. `Op` is
/// the [`Op`] variant the tool runs, and names its [`ToolInput`] variant too.
macro_rules! tools {
    ($($variant:ident($input:ty => $output:ty) = $kind:ident($($spec:tt)*),)*) => {
        /// Every tool, in the order `tools/list` shows them (deterministic, so clients can cache the list).
        pub const TOOLS: &[ToolSpec] = &[$($kind(Op::$variant, $($spec)*)),*];

        /// A tool call's arguments, read and checked by the input of the tool's operation; a variant
        /// is named as the [`Op`] it runs.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolInput {
            $($variant(<$input as api::Input>::Valid),)*
        }

        impl ToolInput {
            /// Reads a tool's arguments, or lists every problem with them; `None` for an unknown tool.
            pub fn parse(name: &str, arguments: &Value) -> Option<Result<ToolInput, Vec<Diagnostic>>> {
                let mut names = TOOLS.iter().map(|tool| tool.name);
                $(if names.next() == Some(name) {
                    return Some(from_json::<$input>(arguments).map(ToolInput::$variant));
                })*
                None
            }
        }

        /// The input and output schema of a tool, generated with `settings`.
        #[cfg(feature = "schema")]
        pub fn tool_schemas(name: &str, settings: &schemars::generate::SchemaSettings) -> Option<(Value, Value)> {
            fn schema<T: schemars::JsonSchema>(settings: &schemars::generate::SchemaSettings) -> Value {
                let root = settings.clone().into_generator().into_root_schema_for::<T>();
                serde_json::to_value(root).expect("schemas serialise")
            }
            let mut names = TOOLS.iter().map(|tool| tool.name);
            $(if names.next() == Some(name) {
                return Some((schema::<$input>(settings), schema::<$output>(settings)));
            })*
            None
        }
    };
}

tools! {
    SearchRecipes(api::RecipeSearch => api::RecipePage) = read(
        "search_recipes",
        "Search recipes",
        "Search the open recipe collection (en, he, pt). Matching folds case and accents, stems English and \
         Portuguese, handles Hebrew prefixes and tolerates one typo. Filters are ANDed. Same as GET /api/recipes. \
         Returns one page of cards and `next_cursor` for the next page.",
    ),
    RecipeJson(api::RecipeView => crate::recipes::cooking::Adjusted) = read(
        "get_recipe",
        "Get a recipe",
        "Read one recipe by slug with all its languages and the server-set fields (owner, version, \
         forked_from, variant_of). `servings` scales every quantity (the answer names `scaled_from`); \
         `units` converts weights and volumes to `metric` or `us` (the answer lists the lines `converted`). \
         Same as GET /r/{slug}.json?servings=&units=.",
    ),
    CreateRecipe(api::CreateRecipe => Published) = write(
        "create_recipe",
        "Create a recipe",
        "Create a new recipe owned by the key's owner, licensed CC0-1.0. Needs an API key; 60 writes a minute \
         per account. The server makes the slug (`^[a-z0-9]+(-[a-z0-9]+)*$`, 3-80 characters) from the English \
         title, else the Portuguese or the transliterated Hebrew one, with `-2`, `-3`... when taken; it never \
         changes. The document is at most 256 KiB. Same as POST /api/recipes.",
        WriteHints { destructive: false, idempotent: false, open_world: false },
    ),
    ForkRecipe(api::RecipeSlug => Published) = write(
        "fork_recipe",
        "Fork a recipe",
        "Make your own copy of any recipe (with `forked_from` set), which you may then change with \
         update_recipe. Needs an API key. Each call makes a new copy. Same as POST /api/r/{slug}/fork.",
        WriteHints { destructive: false, idempotent: false, open_world: false },
    ),
    ChangeRecipe(api::UpdateRecipe => Published) = write(
        "update_recipe",
        "Change your recipe",
        "Replace the document of one of your own recipes with a new version; `note` says what changed. Send \
         `version` (from get_recipe) to refuse the change if someone changed it meanwhile. Needs an API key. \
         Someone else's recipe: fork_recipe first. Same as PUT /api/r/{slug}.",
        WriteHints { destructive: true, idempotent: false, open_world: false },
    ),
    AiWrite(api::AiWrite => Published) = write(
        "ai_write_recipe",
        "Write a recipe with AI",
        "Ask the site's AI to write a new recipe from a prompt, in one language; it is stored as yours (CC0). \
         Needs an API key; limited to 20 AI calls an hour per account. Same as POST /api/ai/write.",
        WriteHints { destructive: false, idempotent: false, open_world: true },
    ),
    AiChange(api::AiChange => Published) = write(
        "ai_change_recipe",
        "Change a recipe with AI",
        "Ask the site's AI to change a recipe as the prompt says. Your own recipe is changed in place; \
         anyone else's is forked to you first and the fork is changed. Needs an API key. Same as POST \
         /api/r/{slug}/ai.",
        WriteHints { destructive: true, idempotent: false, open_world: true },
    ),
    DietVersion(api::DietVersion => Published) = write(
        "make_diet_version",
        "Make a diet version",
        "Get the shared gluten-free (`gf`), vegan, or gluten-free vegan (`both`) version of a recipe. It is \
         made once (by the site's AI, checked by rules) and then shared by everyone, so calling again returns \
         the same recipe. Needs an API key. Same as POST /api/r/{slug}/variant/{kind}.",
        WriteHints { destructive: false, idempotent: true, open_world: true },
    ),
    Attribute(api::QuoteAttribution => Attribution) = read(
        "attribute_quote",
        "Attribute a quote",
        "Find who said a quote and when. Give the quote, and the episode's source URL (any spelling) if you \
         know it; without it the whole corpus is searched. Every answer has `match` (how many places hold \
         the quote word for word: in that episode, or in the corpus) and `alternatives` (the other places); \
         the first place in time answers. Quotes edited with an ellipsis or a [bracketed] word are found \
         (`edited: true`). Every found answer has `cite` (a citation to paste) and `listen_url`. `trust` is \
         `high` only for a verbatim match inside one person's speech with a confident or human-set name, \
         held in exactly one place; otherwise check it. Same as GET /api/attribute.",
    ),
    PhraseSearch(api::TranscriptSearch => phrase::Answer) = read(
        "search_transcripts",
        "Search transcripts",
        "Phrase search over every published transcript, each hit with its speaker and times. `speaker` \
         alone lists everything that person said. Same as GET /api/search.",
    ),
    Transcript(api::TranscriptQuery => views::TranscriptView) = read(
        "get_transcript",
        "Get a transcript",
        "The canonical transcript of an episode, optionally narrowed to one speaker and a time window \
         (turns overlapping the window are clipped); the filters are echoed. Same as GET \
         /api/episodes/{id}/transcript.",
    ),
    Speakers(api::SpeakerStats => views::SpeakersView) = read(
        "speaker_stats",
        "Speaker statistics",
        "Seconds spoken, share of speech time, segment count, first and last appearance per speaker of an \
         episode, optionally within a time window. Same as GET /api/episodes/{id}/speakers.",
    ),
    Episodes(api::EpisodeList => api::EpisodePage) = read(
        "list_episodes",
        "List episodes",
        "Published podcast episodes with their ids, source URLs and licences, optionally of one show, one \
         page at a time. Same as GET /api/episodes.",
    ),
    RequestEpisode(api::EpisodeRequest => api::IntakeJob) = write(
        "request_episode",
        "Take in an episode by its address",
        "Ask for the podcast episode at an address this service does not hold yet (its page, or its audio \
         when a feed lists it) to be taken in: its page's feed and the publisher's transcript are read, and \
         the voices named. Returns the job; call again with the same address (or GET its `url`) until \
         `state` is `ready` (then attribute_quote answers for the episode) or `failed` (with a `reason`). \
         One address is one job, so calling again costs nothing. Needs an API key. Same as POST \
         /api/episodes.",
        WriteHints { destructive: false, idempotent: true, open_world: true },
    ),
}

pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|tool| tool.name == name)
}

/// The generated `tools/list` entries (name, title, description, schemas, annotations).
pub const TOOLS_JSON: &str = include_str!("tools.json");

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
