//! What agents read: the MCP tool schemas (`domain/src/mcp/tools.json`, compiled into the Worker),
//! `openapi.json` (every HTTP route), and the agent parts of `llms.txt` and `llms-full.txt`.
//!
//! Everything here comes from the same tables: [`domain::mcp::TOOLS`] for the tools and [`ROUTES`] for
//! the HTTP API, with schemas generated from the `domain` types the Worker serialises. A schema written
//! by hand would drift from what the Worker sends; these cannot.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use domain::mcp::{self as mcp, RecipePage};
use domain::quote::{Attribution, phrase, views};
use domain::recipe::{Published, Recipe};

/// One schema for a tool, self-contained (its own `definitions`), without `$schema`: MCP reads a schema
/// without one as JSON Schema 2020-12, and draft-07-style `definitions` resolve the same way there,
/// while validators that only know draft 7 (the TypeScript SDK's Ajv) read it too.
fn tool_schema<T: JsonSchema>() -> Value {
    let generator = SchemaGenerator::new(SchemaSettings::draft07());
    let mut value = serde_json::to_value(generator.into_root_schema_for::<T>()).expect("schemas serialise");
    if let Some(obj) = value.as_object_mut() {
        // The tool's own description says what the arguments are for.
        for key in ["$schema", "title", "description"] {
            obj.remove(key);
        }
    }
    value
}

/// The input and output schema of a tool.
pub fn tool_schemas(name: &str) -> (Value, Value) {
    use mcp::*;
    match name {
        "search_recipes" => (tool_schema::<SearchRecipes>(), tool_schema::<RecipePage>()),
        "get_recipe" | "fork_recipe" => (tool_schema::<RecipeSlug>(), tool_schema::<Published>()),
        "create_recipe" => (tool_schema::<CreateRecipe>(), tool_schema::<Published>()),
        "update_recipe" => (tool_schema::<UpdateRecipe>(), tool_schema::<Published>()),
        "ai_write_recipe" => (tool_schema::<AiWriteRecipe>(), tool_schema::<Published>()),
        "ai_change_recipe" => (tool_schema::<AiChangeRecipe>(), tool_schema::<Published>()),
        "make_diet_version" => (tool_schema::<MakeDietVersion>(), tool_schema::<Published>()),
        "attribute_quote" => (tool_schema::<AttributeQuote>(), tool_schema::<Attribution>()),
        "search_transcripts" => (tool_schema::<SearchTranscripts>(), tool_schema::<phrase::Answer>()),
        "get_transcript" => (tool_schema::<GetTranscript>(), tool_schema::<views::TranscriptView>()),
        "speaker_stats" => (tool_schema::<SpeakerStats>(), tool_schema::<views::SpeakersView>()),
        "list_episodes" => (tool_schema::<ListEpisodes>(), tool_schema::<EpisodePage>()),
        other => panic!("no schemas for tool `{other}`: add them here"),
    }
}

/// The text of `domain/src/mcp/tools.json` (checked by a test; `UPDATE_EXPECT=1` rewrites it).
#[cfg(test)]
pub fn tools_json() -> String {
    let mut text = serde_json::to_string_pretty(&mcp::tool_entries(tool_schemas)).expect("JSON serialises");
    text.push('\n');
    text
}

/// What a route answers on success.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Json(&'static str),
    Html,
    Text,
}

/// One HTTP route, as `openapi.json` and `llms-full.txt` describe it.
#[derive(Debug)]
struct Route {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    /// Needs `Authorization: Bearer <key>`.
    key: bool,
    /// Query parameters: name, description.
    query: &'static [(&'static str, &'static str)],
    /// Request body schema name, if any.
    body: Option<&'static str>,
    /// Success status and its body.
    ok: (u16, Answer),
    /// Error statuses it may answer (problem+json).
    errors: &'static [u16],
    example: &'static str,
}

const SEARCH_QUERY: &[(&str, &str)] = &[
    ("q", "words, in en, he or pt; folds case and accents, tolerates one typo"),
    ("gf", "1 = gluten-free only"),
    ("vegan", "1 = vegan only"),
    ("vegetarian", "1 = vegetarian only"),
    ("dairy_free", "1 = dairy-free only"),
    ("nut_free", "1 = nut-free only"),
    ("course", "breakfast, starter, soup, salad, main, side, dessert, baking, snack, drink, sauce, basics"),
    ("max_min", "at most this many minutes of prep + cook"),
    ("lang", "en, he or pt: the language of the cards"),
    ("limit", "1-100, default 20"),
    ("cursor", "next_cursor of the previous page"),
];
const WRITE_ERRORS: &[u16] = &[400, 401, 413, 415, 422, 429];
const AI_ERRORS: &[u16] = &[400, 401, 403, 404, 422, 429, 502, 503];

/// Every HTTP route of the Worker except the kitchen's HTML forms (a person's sign-in, not an API).
const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/api/recipes",
        summary: "Search recipes",
        key: false,
        query: SEARCH_QUERY,
        body: None,
        ok: (200, Answer::Json("RecipePage")),
        errors: &[400],
        example: "curl -s '{base}/api/recipes?q=lentil+soup&vegan=1&lang=en'",
    },
    Route {
        method: "post",
        path: "/api/recipes",
        summary: "Create a recipe (CC0, owned by the key's owner); 201 with Location",
        key: true,
        query: &[],
        body: Some("Recipe"),
        ok: (201, Answer::Json("PublishedRecipe")),
        errors: WRITE_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data @recipe.json {base}/api/recipes",
    },
    Route {
        method: "get",
        path: "/r/{slug}.json",
        summary: "One recipe, all languages, with the server-set fields",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Json("PublishedRecipe")),
        errors: &[404],
        example: "curl -s {base}/r/hummus.json",
    },
    Route {
        method: "get",
        path: "/r/{slug}",
        summary: "The recipe page (HTML, right-to-left for Hebrew)",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Html),
        errors: &[404],
        example: "curl -s {base}/r/hummus",
    },
    Route {
        method: "put",
        path: "/api/r/{slug}",
        summary: "Change your own recipe: the whole document plus `note`; `If-Match: \"<version>\"` guards against lost updates",
        key: true,
        query: &[],
        body: Some("RecipeChange"),
        ok: (200, Answer::Json("PublishedRecipe")),
        errors: &[400, 401, 403, 404, 409, 413, 415, 422, 429],
        example: "curl -si -X PUT -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' -H 'If-Match: \"1\"' --data @changed.json {base}/api/r/my-hummus",
    },
    Route {
        method: "post",
        path: "/api/r/{slug}/fork",
        summary: "Your own copy of any recipe (forked_from set); 201",
        key: true,
        query: &[],
        body: None,
        ok: (201, Answer::Json("PublishedRecipe")),
        errors: &[401, 404, 429],
        example: "curl -si -X POST -H \"Authorization: Bearer $KEY\" {base}/api/r/shakshuka/fork",
    },
    Route {
        method: "get",
        path: "/api/r/{slug}/history",
        summary: "A recipe's history, newest first: the API changes the build does not have yet, then its git \
                  history; a page stops at `limit` items or 1 MiB of them",
        key: false,
        query: &[("limit", "1-1000, default 100"), ("cursor", "next_cursor of the previous page")],
        body: None,
        ok: (200, Answer::Json("Object")),
        errors: &[400, 404],
        example: "curl -s {base}/api/r/hummus/history",
    },
    Route {
        method: "get",
        path: "/api/changes",
        summary: "The public change feed of API writes, oldest first; a page stops at `limit` items or 1 MiB of \
                  them, and `next_since` (also as the string `next_cursor`) is where the next page starts",
        key: false,
        query: &[
            ("since", "feed sequence number to start after (0 = from the start); `cursor` is the same"),
            ("limit", "1-1000, default 100"),
        ],
        body: None,
        ok: (200, Answer::Json("Object")),
        errors: &[400],
        example: "curl -s '{base}/api/changes?since=0&limit=100'",
    },
    Route {
        method: "get",
        path: "/api/me",
        summary: "Who the key belongs to: handle, display name, key label, role",
        key: true,
        query: &[],
        body: None,
        ok: (200, Answer::Json("Me")),
        errors: &[401],
        example: "curl -s -H \"Authorization: Bearer $KEY\" {base}/api/me",
    },
    Route {
        method: "post",
        path: "/api/ai/write",
        summary: "The site's AI writes a new recipe from a prompt, stored as yours; 201. 503 when no AI is configured",
        key: true,
        query: &[],
        body: Some("AiPrompt"),
        ok: (201, Answer::Json("PublishedRecipe")),
        errors: AI_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data '{\"prompt\":\"a quick lentil soup\",\"lang\":\"en\"}' {base}/api/ai/write",
    },
    Route {
        method: "post",
        path: "/api/r/{slug}/ai",
        summary: "The site's AI changes a recipe: yours in place (200), anyone else's after forking it to you (201)",
        key: true,
        query: &[],
        body: Some("AiPrompt"),
        ok: (200, Answer::Json("PublishedRecipe")),
        errors: AI_ERRORS,
        example: "curl -si -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' --data '{\"prompt\":\"halve the sugar\",\"lang\":\"en\"}' {base}/api/r/banana-bread/ai",
    },
    Route {
        method: "post",
        path: "/api/r/{slug}/variant/{kind}",
        summary: "The shared diet version (kind gf, vegan or both): 201 when made, 200 when it already existed",
        key: true,
        query: &[],
        body: None,
        ok: (201, Answer::Json("PublishedRecipe")),
        errors: AI_ERRORS,
        example: "curl -si -X POST -H \"Authorization: Bearer $KEY\" {base}/api/r/banana-bread/variant/gf",
    },
    Route {
        method: "get",
        path: "/api/attribute",
        summary: "Who said a quote in an episode, and when",
        key: false,
        query: &[("source_url", "the episode's source address (any spelling)"), ("quote", "the quote")],
        body: None,
        ok: (200, Answer::Json("Attribution")),
        errors: &[400, 404],
        example: "curl -s '{base}/api/attribute?source_url=https://changelog.com/podcast/600&quote=open+source'",
    },
    Route {
        method: "get",
        path: "/api/shows",
        summary: "Shows with their episode counts and licences",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Json("Object")),
        errors: &[],
        example: "curl -s {base}/api/shows",
    },
    Route {
        method: "get",
        path: "/api/episodes",
        summary: "Published episodes, one page at a time",
        key: false,
        query: &[
            ("show", "only this show's episodes"),
            ("limit", "1-100, default 20"),
            ("cursor", "next_cursor of the previous page"),
        ],
        body: None,
        ok: (200, Answer::Json("EpisodePage")),
        errors: &[400],
        example: "curl -s '{base}/api/episodes?limit=5'",
    },
    Route {
        method: "get",
        path: "/api/episodes/{id}",
        summary: "The full episode record with every pipeline run and the name votes",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Json("Object")),
        errors: &[404],
        example: "curl -s {base}/api/episodes/ep_abcdefghij",
    },
    Route {
        method: "get",
        path: "/api/episodes/{id}/transcript",
        summary: "The canonical transcript, optionally narrowed; the filters are echoed",
        key: false,
        query: &[("speaker", "a person's name"), ("from", "seconds"), ("to", "seconds")],
        body: None,
        ok: (200, Answer::Json("TranscriptView")),
        errors: &[400, 404],
        example: "curl -s '{base}/api/episodes/ep_abcdefghij/transcript?from=60&to=120'",
    },
    Route {
        method: "get",
        path: "/api/episodes/{id}/speakers",
        summary: "Per-speaker statistics; share is of speech time, not of the window",
        key: false,
        query: &[("from", "seconds"), ("to", "seconds")],
        body: None,
        ok: (200, Answer::Json("SpeakersView")),
        errors: &[400, 404],
        example: "curl -s {base}/api/episodes/ep_abcdefghij/speakers",
    },
    Route {
        method: "get",
        path: "/api/search",
        summary: "Phrase search over every transcript, with speakers; `speaker` alone lists what a person said",
        key: false,
        query: &[
            ("q", "a phrase"),
            ("speaker", "a person's name"),
            ("limit", "1-100, default 20"),
            ("cursor", "next_cursor of the previous page"),
        ],
        body: None,
        ok: (200, Answer::Json("QuoteSearch")),
        errors: &[400],
        example: "curl -s '{base}/api/search?q=open+source'",
    },
    Route {
        method: "put",
        path: "/api/episodes/{id}/speakers/{label}",
        summary: "Name a speaker as a person (keys with the editor role); shown at once, never overwritten by \
                  any identification source, synced to git by `builder sync`",
        key: true,
        query: &[],
        body: Some("SpeakerDecision"),
        ok: (200, Answer::Json("Object")),
        errors: &[400, 401, 403, 404, 413, 415, 422, 429],
        example: "curl -s -X PUT -H 'Authorization: Bearer $KEY' -H 'Content-Type: application/json' \
                  --data '{\"name\":\"Jerod Santo\",\"note\":\"introduces himself at 0:04\"}' \
                  {base}/api/episodes/ep_abcdefghij/speakers/A",
    },
    Route {
        method: "get",
        path: "/api/episodes/changes",
        summary: "The public feed of speaker-name decisions, oldest first (what `builder sync` commits)",
        key: false,
        query: &[("since", "the last seq you have; 0 for all"), ("limit", "1-1000, default 100")],
        body: None,
        ok: (200, Answer::Json("Object")),
        errors: &[400],
        example: "curl -s '{base}/api/episodes/changes?since=0'",
    },
    Route {
        method: "post",
        path: "/mcp",
        summary: "The MCP server (streamable HTTP, stateless): one JSON-RPC message per POST, JSON answers; \
                  notifications get 202. Write tools need the bearer key; read tools do not",
        key: false,
        query: &[],
        body: Some("JsonRpc"),
        ok: (200, Answer::Json("JsonRpc")),
        errors: &[400, 403, 404, 413],
        example: "curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' {base}/mcp",
    },
    Route {
        method: "get",
        path: "/llms.txt",
        summary: "This service described for language models (llmstxt.org)",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Text),
        errors: &[],
        example: "curl -s {base}/llms.txt",
    },
    Route {
        method: "get",
        path: "/recipes.jsonl",
        summary: "Every recipe, one JSON document a line (CC0-1.0 unless `licence` says otherwise)",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Text),
        errors: &[],
        example: "curl -s {base}/recipes.jsonl | head -1",
    },
    Route {
        method: "get",
        path: "/episodes.jsonl",
        summary: "Every canonical transcript, one episode a line, each with its licence (Changelog: CC BY-SA 4.0)",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Text),
        errors: &[],
        example: "curl -s {base}/episodes.jsonl | head -1",
    },
    Route {
        method: "get",
        path: "/kitchen",
        summary: "The kitchen page (HTML): sign in and make or revoke API keys. Its forms are for people, not described here",
        key: false,
        query: &[],
        body: None,
        ok: (200, Answer::Html),
        errors: &[],
        example: "open {base}/kitchen",
    },
];

/// `openapi.json`: OpenAPI 3.1 with the schemas generated from the `domain` types.
pub fn openapi() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.definitions_path = "/components/schemas".into());
    let mut generator = SchemaGenerator::new(settings);
    let mut named: Map<String, Value> = Map::new();
    let mut name = |key: &str, schema: schemars::Schema| {
        named.insert(key.to_string(), serde_json::to_value(schema).expect("schemas serialise"));
    };
    name("Recipe", generator.subschema_for::<Recipe>());
    name("PublishedRecipe", generator.subschema_for::<Published>());
    name("RecipePage", generator.subschema_for::<RecipePage>());
    name("Attribution", generator.subschema_for::<Attribution>());
    name("EpisodePage", generator.subschema_for::<mcp::EpisodePage>());
    name("TranscriptView", generator.subschema_for::<views::TranscriptView>());
    name("SpeakersView", generator.subschema_for::<views::SpeakersView>());
    name("QuoteSearch", generator.subschema_for::<phrase::Answer>());
    let mut components: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    // Names a route refers to that are not a type's own name get an alias.
    for (key, schema) in named {
        if !components.contains_key(&key) {
            components.insert(key, schema);
        }
    }
    components.insert(
        "RecipeChange".into(),
        json!({"allOf": [{"$ref": "#/components/schemas/Recipe"}, {"type": "object", "required": ["note"],
            "properties": {"note": {"type": "string", "description": "what changed, in a sentence"}}}]}),
    );
    components.insert(
        "AiPrompt".into(),
        json!({"type": "object", "required": ["prompt", "lang"], "properties": {
            "prompt": {"type": "string"}, "lang": {"type": "string", "enum": ["en", "he", "pt"]}}}),
    );
    components.insert(
        "Me".into(),
        json!({"type": "object", "required": ["handle", "key_label", "role"], "properties": {
            "handle": {"type": "string"}, "display_name": {"type": ["string", "null"]},
            "key_label": {"type": "string"}, "role": {"type": "string"}}}),
    );
    components.insert(
        "JsonRpc".into(),
        json!({"type": "object", "description": "A JSON-RPC 2.0 message of the Model Context Protocol \
            (2025-11-25 handshake or 2026-07-28 stateless)", "required": ["jsonrpc"],
            "properties": {"jsonrpc": {"const": "2.0"}}}),
    );
    components.insert("Object".into(), json!({"type": "object"}));
    components.insert(
        "SpeakerDecision".into(),
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "description": "the person's name as it should be shown"},
            "note": {"type": "string", "description": "how you know, in a sentence"}}}),
    );
    components.insert(
        "Problem".into(),
        json!({"type": "object", "description": "RFC 9457 problem details", "required": ["type", "title", "status"],
            "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
            "detail": {"type": "string"}, "instance": {"type": "string"},
            "errors": {"type": "array", "items": {"type": "object", "required": ["field", "reason"],
                "properties": {"field": {"type": "string"}, "reason": {"type": "string"}}}}}}),
    );

    let mut paths: Map<String, Value> = Map::new();
    for route in ROUTES {
        let entry = paths.entry(route.path.to_string()).or_insert_with(|| json!({}));
        entry[route.method] = operation(route);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Commonplace",
            "version": "1",
            "description": "Open recipes (CC0) and quote attribution for podcast transcripts. Reads are public; \
                writes need `Authorization: Bearer <key>` (make one on /kitchen). Limits count per account, all \
                its keys together: 60 writes a minute, 20 AI requests an hour; an account holds at most 20 live \
                keys. Every answer after a count carries `RateLimit` and `RateLimit-Policy` headers. The change \
                feeds, recipe histories, the episode list and quote search page by `limit` and by bytes: a page \
                stops once its items reach 1 MiB of JSON (always holding at least one), and `next_cursor` says \
                where the next page starts; following it meets every item once. Errors are RFC 9457 \
                application/problem+json. Changes are additive; a breaking change gets a /v2 prefix.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": "/"}],
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                "description": "An API key made on /kitchen (cpk_…)"}},
        },
        "paths": paths,
    })
}

fn operation(route: &Route) -> Value {
    let mut parameters: Vec<Value> = path_params(route.path)
        .into_iter()
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect();
    for (name, description) in route.query {
        parameters.push(json!({"name": name, "in": "query", "required": false, "description": description,
            "schema": {"type": "string"}}));
    }
    if route.method == "put" {
        parameters.push(json!({"name": "If-Match", "in": "header", "required": false,
            "description": "the version you read, such as \"3\"", "schema": {"type": "string"}}));
    }
    let (status, answer) = route.ok;
    let ok = match answer {
        Answer::Json(schema) => {
            json!({"description": "OK", "content": {"application/json": {"schema": reference(schema)}}})
        }
        Answer::Html => {
            json!({"description": "OK", "content": {"text/html": {"schema": {"type": "string"}}}})
        }
        Answer::Text => {
            json!({"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}})
        }
    };
    let mut responses = Map::new();
    responses.insert(status.to_string(), ok);
    if route.path == "/api/r/{slug}/ai" {
        responses.insert(
            "201".into(),
            json!({"description": "a fork of someone else's recipe, changed",
            "content": {"application/json": {"schema": reference("PublishedRecipe")}}}),
        );
    }
    if route.path == "/api/r/{slug}/variant/{kind}" {
        responses.insert(
            "200".into(),
            json!({"description": "the diet version already existed",
            "content": {"application/json": {"schema": reference("PublishedRecipe")}}}),
        );
    }
    if route.path == "/mcp" {
        responses.insert("202".into(), json!({"description": "a notification or response was accepted"}));
    }
    for status in route.errors {
        responses.insert(
            status.to_string(),
            json!({"description": error_description(*status),
            "content": {"application/problem+json": {"schema": reference("Problem")}}}),
        );
    }
    let mut operation = json!({
        "summary": route.summary,
        "operationId": operation_id(route),
        "parameters": parameters,
        "responses": responses,
    });
    if let Some(body) = route.body {
        operation["requestBody"] =
            json!({"required": true, "content": {"application/json": {"schema": reference(body)}}});
    }
    if route.key {
        operation["security"] = json!([{"bearer": []}]);
    }
    operation
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn path_params(path: &str) -> Vec<&str> {
    path.split('{').skip(1).filter_map(|rest| rest.split('}').next()).collect()
}

fn operation_id(route: &Route) -> String {
    let words: Vec<String> = route
        .path
        .split(['/', '.', '{', '}'])
        .filter(|word| !word.is_empty())
        .map(|word| word.replace('-', "_"))
        .collect();
    format!("{}_{}", route.method, words.join("_"))
}

fn error_description(status: u16) -> &'static str {
    match status {
        400 => "malformed request or parameter",
        401 => "missing, unknown or revoked key (WWW-Authenticate: Bearer)",
        403 => "not yours (recipes) or a foreign Origin (MCP)",
        404 => "not found",
        409 => "If-Match names a version that is no longer current",
        413 => "body over 256 KiB",
        415 => "body is not application/json",
        422 => "the document has problems: every one is listed in `errors`",
        429 => {
            "rate limited (per account, all its keys together): Retry-After and RateLimit headers say when to \
                try again"
        }
        502 => "the AI provider failed or answered nonsense",
        503 => "no AI provider is configured",
        _ => "error",
    }
}

/// The agent part of `llms.txt`: the MCP server and its tools, the API description, and the fuller
/// file, which holds every tool's description and schemas.
pub fn llms_part() -> crate::opendata::LlmsPart {
    let about = String::from(
        "Agents: both services are also an MCP server at `/mcp` (streamable HTTP, stateless: the 2025-11-25 \
         `initialize` handshake and the 2026-07-28 style with `server/discover` and per-request `_meta`). Send the \
         same `Authorization: Bearer <key>` header as the API; tools that write need it, tools that read do not. \
         Every tool returns JSON as text and as `structuredContent`.\n",
    );
    let tools = |access: bool| -> String {
        mcp::TOOLS
            .iter()
            .filter(|tool| (tool.access == mcp::Access::Write) == access)
            .map(|tool| format!("`{}`", tool.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sections = format!(
        "\n## Agents\n\n\
         - [MCP server](/mcp): POST JSON-RPC; tools that read: {}; tools that write (need a key): {}\n\
         - [OpenAPI description](/openapi.json): every HTTP route with its schemas\n\
         - [MCP tools in full](/llms-full.txt): every route with an example, every MCP tool with its description and schemas\n\n\
         ## Optional\n\n- [llms-full.txt](/llms-full.txt): the full text, with every schema\n",
        tools(false),
        tools(true)
    );
    crate::opendata::LlmsPart { about, sections }
}

/// `llms-full.txt`: `llms.txt` followed by every route with an example and every tool with its schemas.
pub fn llms_full(llms: &str) -> String {
    let mut text = llms.trim_end().to_string();
    text.push_str(
        "\n\n## HTTP API in full\n\nReplace `{base}` with this site's address and `$KEY` with an API key. \
         Errors are application/problem+json (RFC 9457) with `type`, `title`, `status`, `detail`, `instance` \
         and, for validation, `errors: [{field, reason}]`. Public reads send `Access-Control-Allow-Origin: *`.\n",
    );
    for route in ROUTES {
        text.push_str(&format!(
            "\n### {} {}\n\n{}.{}\n",
            route.method.to_uppercase(),
            route.path,
            route.summary,
            if route.key { " Needs `Authorization: Bearer <key>`." } else { "" }
        ));
        if !route.query.is_empty() {
            text.push_str("\nParameters:\n");
            for (name, description) in route.query {
                text.push_str(&format!("- `{name}`: {description}\n"));
            }
        }
        text.push_str(&format!("\n```sh\n{}\n```\n", route.example));
    }
    text.push_str("\n## MCP tools in full\n\nPOST JSON-RPC to `/mcp`. Call a tool with `tools/call` and `{\"name\": …, \"arguments\": {…}}`.\n");
    for tool in &mcp::TOOLS {
        let (input, output) = tool_schemas(tool.name);
        text.push_str(&format!(
            "\n### {}\n\n{}\n\nAnnotations: readOnlyHint {}, destructiveHint {}, idempotentHint {}, openWorldHint {}.\n\n\
             Input schema:\n\n```json\n{}\n```\n\nOutput schema (`structuredContent`):\n\n```json\n{}\n```\n",
            tool.name,
            one_line(tool.description),
            tool.read_only,
            tool.destructive,
            tool.idempotent,
            tool.open_world,
            serde_json::to_string(&input).expect("JSON serialises"),
            serde_json::to_string(&output).expect("JSON serialises"),
        ));
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Worker compiles `tools.json` in; this keeps it equal to what the types say.
    #[test]
    fn mcp_tools_json_is_fresh() {
        expect_test::expect_file!["../../domain/src/mcp/tools.json"].assert_eq(&tools_json());
    }

    #[test]
    fn every_tool_has_object_schemas_and_every_route_an_operation_id() {
        for tool in &mcp::TOOLS {
            let (input, output) = tool_schemas(tool.name);
            assert_eq!(input["type"], "object", "{}", tool.name);
            assert_eq!(output["type"], "object", "{}", tool.name);
        }
        let ids: std::collections::BTreeSet<String> = ROUTES.iter().map(operation_id).collect();
        assert_eq!(ids.len(), ROUTES.len(), "operation ids are unique");
    }
}
