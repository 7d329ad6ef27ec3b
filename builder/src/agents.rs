//! What agents read: the MCP tool schemas (`domain/src/mcp/tools.json`, compiled into the Worker),
//! `openapi.json` (every HTTP route), and the agent parts of `llms.txt` and `llms-full.txt`.
//!
//! Everything here comes from the same tables: [`domain::mcp::TOOLS`] for the tools and
//! [`domain::api::routes::ROUTES`] (the table the Worker's router reads) for the HTTP API, with schemas
//! generated from the `domain` types the Worker reads and serialises. A schema written by hand would
//! drift from what the Worker sends; these cannot. Only standard JSON Schema formats are published
//! (`schemas.rs`).

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use domain::api::routes::{self, Answer, ROUTES, Route, Takes, path_params};
use domain::api::{self};
use domain::mcp;
use domain::quotes::quote::{Attribution, phrase, views};
use domain::recipes::recipe::{self, Course, Published, Recipe};
use domain::site::limits;

use crate::schemas::settings;

/// An input's property as a caller sends it: an `Option` means "may be left out", not "may be null".
fn without_null(property: &mut Value) {
    if let Some(types) = property.get_mut("type").and_then(Value::as_array_mut) {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            property["type"] = types[0].clone();
        }
    }
    let one = property.get("anyOf").and_then(Value::as_array).and_then(|options| {
        let rest: Vec<&Value> = options.iter().filter(|o| o.get("type") != Some(&json!("null"))).collect();
        (rest.len() == 1 && rest.len() < options.len()).then(|| rest[0].clone())
    });
    if let (Some(one), Some(obj)) = (one, property.as_object_mut()) {
        obj.remove("anyOf");
        for (key, value) in one.as_object().into_iter().flatten() {
            obj.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    if let Some(values) = property.get_mut("enum").and_then(Value::as_array_mut) {
        values.retain(|value| !value.is_null());
    }
}

/// The input and output schema of a tool: self-contained (their own `definitions`), without
/// `$schema`. MCP reads a schema without one as JSON Schema 2020-12, and draft-07-style `definitions`
/// resolve the same way there, while validators that only know draft 7 (the TypeScript SDK's Ajv)
/// read it too.
pub fn tool_schemas(name: &str) -> (Value, Value) {
    let (mut input, mut output) = mcp::tool_schemas(name, &settings(SchemaSettings::draft07()))
        .unwrap_or_else(|| panic!("no tool `{name}`"));
    for schema in [&mut input, &mut output] {
        if let Some(obj) = schema.as_object_mut() {
            // The tool's own description says what the arguments are for.
            for key in ["$schema", "title", "description"] {
                obj.remove(key);
            }
        }
    }
    for property in input.get_mut("properties").and_then(Value::as_object_mut).into_iter().flatten() {
        without_null(property.1);
    }
    (input, output)
}

/// The text of `domain/src/mcp/tools.json` (checked by a test; `UPDATE_EXPECT=1` rewrites it).
#[cfg(test)]
pub fn tools_json() -> String {
    let mut text = serde_json::to_string_pretty(&mcp::tool_entries(tool_schemas)).expect("JSON serialises");
    text.push('\n');
    text
}

/// `openapi.json`: OpenAPI 3.1, every route of [`ROUTES`] with the schemas generated from the `domain`
/// types.
pub fn openapi() -> Value {
    let settings =
        settings(SchemaSettings::draft2020_12()).with(|s| s.definitions_path = "/components/schemas".into());
    let mut generator = settings.into_generator();
    let mut named: Map<String, Value> = Map::new();
    let mut name = |key: &str, schema: schemars::Schema| {
        named.insert(key.to_string(), serde_json::to_value(schema).expect("schemas serialise"));
    };
    name("Recipe", generator.subschema_for::<Recipe>());
    // Written by hand from the validation's constants, not generated: its formats are made standard here.
    let mut body = domain::recipes::recipe::schema::body(&mut generator);
    schemars::transform::Transform::transform(
        &mut schemars::transform::RecursiveTransform(crate::schemas::standard_formats),
        &mut body,
    );
    name("RecipeBody", body);
    name("PublishedRecipe", generator.subschema_for::<Published>());
    name("AdjustedRecipe", generator.subschema_for::<domain::recipes::cooking::Adjusted>());
    name("RecipePage", generator.subschema_for::<api::RecipePage>());
    name("Attribution", generator.subschema_for::<Attribution>());
    name("EpisodePage", generator.subschema_for::<api::EpisodePage>());
    name("TranscriptView", generator.subschema_for::<views::TranscriptView>());
    name("SpeakersView", generator.subschema_for::<views::SpeakersView>());
    name("QuoteSearch", generator.subschema_for::<phrase::Answer>());
    name("EpisodeRequest", generator.subschema_for::<api::EpisodeRequest>());
    name("IntakeJob", generator.subschema_for::<api::IntakeJob>());
    name("AiWrite", generator.subschema_for::<api::AiWrite>());
    let mut components: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    // Names a route refers to that are not a type's own name get an alias.
    for (key, schema) in named {
        if !components.contains_key(&key) {
            components.insert(key, schema);
        }
    }
    if let Some(properties) = components["AiWrite"].get_mut("properties").and_then(Value::as_object_mut) {
        properties.values_mut().for_each(without_null);
    }
    components.insert(
        "RecipeChange".into(),
        json!({"allOf": [{"$ref": "#/components/schemas/RecipeBody"}, {"type": "object", "required": ["note"],
            "properties": {"note": {"type": "string", "description": "what changed, in a sentence"}}}]}),
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
            (2025-11-25 handshake or 2026-07-28 stateless): a request (with `id`) or a notification",
            "required": ["jsonrpc", "method"], "additionalProperties": false,
            "properties": {"jsonrpc": {"const": "2.0"},
                "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "method": {"type": "string", "minLength": 1},
                "params": {"type": "object", "additionalProperties": false, "properties": {
                    "name": {"type": "string"}, "arguments": {"type": "object"}, "cursor": {"type": "null"},
                    "protocolVersion": {"type": "string"}}}}}),
    );
    components.insert(
        "JsonRpcAnswer".into(),
        json!({"type": "object", "description": "A JSON-RPC 2.0 response: `result` or `error`",
            "required": ["jsonrpc"], "properties": {"jsonrpc": {"const": "2.0"}, "result": {"type": "object"},
            "error": {"type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}}}}),
    );
    components.insert("Object".into(), json!({"type": "object"}));
    components.insert("Array".into(), json!({"type": "array", "items": {}}));
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
        entry[route.method.name().to_lowercase()] = operation(route);
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
                application/problem+json. Changes are additive; a breaking change gets a /v2 prefix. \
                Examples write `$BASE` for this site's address and `$KEY` for an API key.",
            // No address is fixed for the project yet, so the contact names who answers and where.
            "contact": {"name": "Commonplace contributors, through the content repository's issues and pull requests"},
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": "/"}],
        "tags": routes::TAGS.iter().map(|(name, description)| json!({"name": name, "description": description}))
            .collect::<Vec<_>>(),
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                "description": "An API key made on /kitchen (cpk_…)"}},
        },
        "paths": paths,
    })
}

/// A route's parameters: its path parameters, then the query parameters of its input type, each
/// with the type, range, enum and required-ness the input declares. A flag (`bool`) is `1` in a query.
fn parameters(route: &Route) -> Vec<Value> {
    let path_names = path_params(route.path);
    let inline = settings(SchemaSettings::draft2020_12()).with(|s| s.inline_subschemas = true);
    let input = routes::parameters_schema(route.op, &inline).unwrap_or_else(|| json!({}));
    let required: Vec<&str> =
        input["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let mut parameters: Vec<Value> = path_names
        .iter()
        .map(|name| {
            let mut schema =
                input["properties"].get(*name).cloned().unwrap_or_else(|| json!({"type": "string"}));
            without_null(&mut schema);
            let description = schema.as_object_mut().and_then(|obj| obj.remove("description"));
            let mut parameter = json!({"name": name, "in": "path", "required": true, "schema": schema});
            if let Some(description) = description {
                parameter["description"] = description;
            }
            parameter
        })
        .collect();
    if route.takes == Takes::Query {
        for (name, schema) in input["properties"].as_object().into_iter().flatten() {
            if path_names.contains(&name.as_str()) {
                continue;
            }
            let mut schema = schema.clone();
            without_null(&mut schema);
            if schema["type"] == "boolean" {
                schema["type"] = json!("integer");
                schema["enum"] = json!([1]);
            }
            let description = schema.as_object_mut().and_then(|obj| obj.remove("description"));
            let required = required.contains(&name.as_str());
            let mut parameter = json!({"name": name, "in": "query", "required": required, "schema": schema});
            if let Some(description) = description {
                parameter["description"] = description;
            }
            parameters.push(parameter);
        }
    }
    if route.op.takes_idempotency_key() {
        parameters.push(json!({"name": domain::site::idempotency::HEADER, "in": "header", "required": false,
            "description": format!(
                "a key of yours for this request, as a quoted string (RFC 8941), at most {} characters: \
                 a retry with the same key and body gets the first answer again (`Idempotent-Replayed: \
                 true`) for 24 hours; the same key with another body is 422, while its first request runs 409",
                domain::site::idempotency::MAX_KEY_CHARS
            ),
            "schema": {"type": "string", "pattern": domain::site::idempotency::key_pattern()}}));
    }
    if route.method == routes::Method::Put {
        parameters.push(json!({"name": "If-Match", "in": "header", "required": false,
            "description": "`*`, or the entity tags of the versions you would change (RFC 9110 §13.1.1), such \
                as \"3\" (the quotes are part of the tag) or \"3\", \"4\"; a weak W/ tag never matches",
            "schema": {"type": "string", "pattern": IF_MATCH_PATTERN}}));
    }
    parameters
}

/// `If-Match` as RFC 9110 §13.1.1 writes it: `*`, or a list of entity tags (empty list elements
/// allowed). The server reads the same grammar (`domain::recipes::write::IfMatch::parse`) and answers 400 to
/// anything else.
const IF_MATCH_PATTERN: &str = r#"^[ \t]*(\*|[ \t,]*(W/)?"[\x21\x23-\x7E\x80-\xFF]*"([ \t]*,[ \t,]*(W/)?"[\x21\x23-\x7E\x80-\xFF]*")*[ \t,]*)[ \t]*$"#;

fn operation(route: &Route) -> Value {
    let content = |answer: Answer| match answer {
        Answer::Json(schema) => json!({"application/json": {"schema": reference(schema)}}),
        Answer::Html => json!({"text/html": {"schema": {"type": "string"}}}),
        Answer::Text => json!({"text/plain": {"schema": {"type": "string"}}}),
        Answer::JsonLines => json!({"application/jsonl": {"schema": {"type": "string"}}}),
        // OpenAPI 3.1 describes a binary body by its media type alone.
        Answer::Image(media) => json!({ media: {} }),
        Answer::Redirect | Answer::Empty => json!({}),
    };
    let (status, answer) = route.ok;
    let mut responses = Map::new();
    let response = |answer: Answer, description: &str| match answer {
        Answer::Redirect | Answer::Empty => json!({"description": description}),
        answer => json!({"description": description, "content": content(answer)}),
    };
    let description = if answer == Answer::Redirect { "a redirect (Location)" } else { "OK" };
    responses.insert(status.to_string(), response(answer, description));
    for (status, answer, description) in route.also {
        responses.insert(status.to_string(), response(*answer, description));
    }
    // A JSON-RPC endpoint answers its errors in JSON-RPC; every other route in RFC 9457 problems.
    let error_body = match route.takes {
        Takes::Json("JsonRpc") => json!({"application/json": {"schema": reference("JsonRpcAnswer")}}),
        _ => json!({"application/problem+json": {"schema": reference("Problem")}}),
    };
    for status in route.errors {
        let mut content = error_body.clone();
        // A browser (`Accept: text/html`) refused gets a page saying why (`edge::http::wants_page`).
        if route.refuses_as_page() && routes::PAGE_REFUSALS.contains(status) {
            content["text/html"] = json!({"schema": {"type": "string"}});
        }
        responses.insert(
            status.to_string(),
            json!({"description": error_description(*status), "content": content}),
        );
    }
    let mut operation = json!({
        "summary": route.summary,
        "description": operation_description(route),
        "operationId": operation_id(route),
        "tags": [route.op.tag()],
        "parameters": parameters(route),
        "responses": responses,
    });
    match route.takes {
        Takes::Json(body) => {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": reference(body)}}});
        }
        Takes::Form(fields) => {
            let properties: Map<String, Value> = ["csrf"]
                .iter()
                .chain(fields)
                .map(|field| (field.to_string(), json!({"type": "string"})))
                .collect();
            operation["requestBody"] = json!({"required": false, "content": {
                "application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": properties}}}});
        }
        Takes::Nothing | Takes::Query => {}
    }
    // Public operations say so: an empty list is "no credentials", where a missing one is "unsaid".
    operation["security"] = if route.key { json!([{"bearer": []}]) } else { json!([]) };
    operation
}

/// What an operation's description adds to its summary: whether it needs a key, how a built file is
/// served, and the route's example.
fn operation_description(route: &Route) -> String {
    let mut text = format!("{}.", route.summary.trim_end_matches('.'));
    if route.key {
        text.push_str(
            " Needs an API key (`Authorization: Bearer <key>`, made on /kitchen); counts toward the \
             account's limits.",
        );
    }
    if route.op == routes::Op::BuiltFile {
        text.push_str(
            " A file the build wrote, served as it is with its `ETag`; `If-None-Match` answers 304.",
        );
    }
    if !route.example.is_empty() {
        let example = route.example.replace("{base}", "$BASE");
        text.push_str(&format!("\n\nExample:\n\n```sh\n{example}\n```"));
    }
    text
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn operation_id(route: &Route) -> String {
    let words: Vec<String> = route
        .path
        .split(['/', '.', '{', '}'])
        .filter(|word| !word.is_empty())
        .map(|word| word.replace('-', "_"))
        .collect();
    let words = if words.is_empty() { "home".to_string() } else { words.join("_") };
    format!("{}_{words}", route.method.name().to_lowercase())
}

fn error_description(status: u16) -> &'static str {
    match status {
        400 => "malformed request, parameter or header (each problem names it)",
        401 => "missing, unknown or revoked key (WWW-Authenticate: Bearer)",
        403 => "not yours (recipes), a foreign Origin (MCP), or a form without a live session",
        404 => "not found",
        409 => "If-Match names a version that is no longer current, or the account holds 20 live keys",
        412 => "If-Match names a version that is no longer current",
        413 => "body over 256 KiB",
        415 => "body is not application/json in UTF-8",
        422 => "the document has problems: every one is listed in `errors`",
        429 => {
            "rate limited (per account, all its keys together): Retry-After and RateLimit headers say when to \
                try again"
        }
        502 => {
            "the AI provider failed, or the checks refused its answer (`ai-invalid-answer`, each problem in `errors`)"
        }
        503 => "no AI provider is configured",
        _ => "error",
    }
}

/// The agent part of `llms.txt`: the MCP server and its tools, the API description, and the fuller
/// file, which holds every tool's description and schemas.
pub fn llms_part() -> crate::opendata::LlmsPart {
    let mut about = writing();
    about.push_str(
        "\nAgents: both services are also an MCP server at `/mcp` (streamable HTTP, stateless: the 2025-11-25 \
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

/// What `llms.txt` tells a writer: how to get a key, every route that writes (from [`ROUTES`]), the
/// limits, and the rules of a recipe document that the schemas do not show at a glance. Each number
/// is the constant the server enforces.
fn writing() -> String {
    let routes: Vec<String> = ROUTES
        .iter()
        .filter(|route| route.key && route.method != routes::Method::Get)
        .map(|route| {
            let what = route.summary.split([':', ';', '(']).next().unwrap_or(route.summary).trim();
            let mut chars = what.chars();
            let first = chars.next().map(|c| c.to_lowercase().to_string()).unwrap_or_default();
            format!("`{} {}` ({first}{})", route.method.name(), route.path, chars.as_str())
        })
        .collect();
    let courses: Vec<&str> = Course::ALL.iter().map(|course| course.code()).collect();
    format!(
        "Writing needs an API key: a person signs in on [the kitchen page](/kitchen) (with GitHub), makes a key \
         there (`cpk_…`, shown once) and sends it as `Authorization: Bearer <key>`. The routes that write: {}. \
         Limits: a request body of at most {} KiB (413 beyond); per account, all its keys together, {} writes a \
         minute and {} AI requests an hour (429 with `Retry-After`; every counted answer carries `RateLimit` and \
         `RateLimit-Policy`); per language at most {} ingredients and {} steps, and a title of at most {} \
         characters. A recipe's `course` is one of {}; `difficulty` is 1 to {}. The server makes the slug: \
         `^[a-z0-9]+(-[a-z0-9]+)*$`, {} to {} characters, from the English title, else the Portuguese or the \
         transliterated Hebrew one, with `-2`, `-3`… when taken; it never changes.\n",
        routes.join(", "),
        domain::recipes::write::MAX_BODY_BYTES / 1024,
        limits::WRITES.quota,
        limits::AI.quota,
        recipe::MAX_INGREDIENTS,
        recipe::MAX_STEPS,
        recipe::MAX_TITLE_CHARS,
        courses.join(", "),
        recipe::MAX_DIFFICULTY,
        domain::recipes::slug::MIN_LEN,
        domain::recipes::slug::MAX_LEN,
    )
}

/// `llms-full.txt`: `llms.txt` followed by every route with an example and every tool with its schemas.
pub fn llms_full(llms: &str) -> String {
    let mut text = llms.trim_end().to_string();
    text.push_str(
        "\n\n## HTTP API in full\n\nReplace `{base}` with this site's address and `$KEY` with an API key. \
         Errors are application/problem+json (RFC 9457) with `type`, `title`, `status`, `detail`, `instance` \
         and, for validation, `errors: [{field, reason}]`. Public reads send `Access-Control-Allow-Origin: *`.\n",
    );
    // The API routes, each with an example; the kitchen's forms and the built files are described in
    // openapi.json and llms.txt.
    for route in ROUTES.iter().filter(|route| !route.example.is_empty()) {
        text.push_str(&format!(
            "\n### {} {}\n\n{}.{}\n",
            route.method.name(),
            route.path,
            route.summary,
            if route.key { " Needs `Authorization: Bearer <key>`." } else { "" }
        ));
        let query: Vec<Value> =
            parameters(route).into_iter().filter(|parameter| parameter["in"] == "query").collect();
        if !query.is_empty() {
            text.push_str("\nParameters:\n");
            for parameter in query {
                let required = if parameter["required"] == true { " (required)" } else { "" };
                let description = parameter["description"].as_str().map(one_line).unwrap_or_default();
                text.push_str(&format!(
                    "- `{}`{required}: {description}\n",
                    parameter["name"].as_str().unwrap_or("")
                ));
            }
        }
        text.push_str(&format!("\n```sh\n{}\n```\n", route.example));
    }
    text.push_str("\n## MCP tools in full\n\nPOST JSON-RPC to `/mcp`. Call a tool with `tools/call` and `{\"name\": …, \"arguments\": {…}}`.\n");
    for tool in mcp::TOOLS {
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

    /// `llms.txt` named no route that writes, no way to get a key and no limit.
    #[test]
    fn llms_txt_tells_a_writer_the_routes_the_key_and_the_limits() {
        let about = llms_part().about;
        for needle in [
            "`POST /api/recipes` (create a recipe)",
            "`PUT /api/r/{slug}`",
            "`POST /api/r/{slug}/fork`",
            "`POST /api/ai/write`",
            "`POST /api/r/{slug}/variant/{kind}`",
            "[the kitchen page](/kitchen)",
            "`Authorization: Bearer <key>`",
            "at most 256 KiB",
            "60 writes a minute",
            "20 AI requests an hour",
            "100 ingredients and 60 steps",
            "title of at most 200 characters",
            "`difficulty` is 1 to 3",
            "breakfast, starter, soup",
            "`^[a-z0-9]+(-[a-z0-9]+)*$`, 3 to 80 characters",
        ] {
            assert!(about.contains(needle), "llms.txt does not say {needle}: {about}");
        }
        assert!(!about.contains("`GET "), "only routes that write: {about}");
    }

    /// `llms-full.txt` and the tool schemas cited "the API contract", which the site does not serve, and
    /// `llms-full.txt` put `$KEY` in single quotes, where a shell leaves it unexpanded.
    #[test]
    fn agents_text_cites_no_design_md_and_never_single_quotes_the_key() {
        let full = llms_full("# Commonplace\n");
        let openapi = serde_json::to_string(&openapi()).expect("JSON serialises");
        for (name, text) in
            [("llms-full.txt", &full), ("tools.json", &tools_json()), ("openapi.json", &openapi)]
        {
            assert!(!text.contains("DESIGN.md"), "{name} cites DESIGN.md");
        }
        for route in ROUTES.iter().filter(|route| route.example.contains("$KEY")) {
            let (mut single, mut double) = (false, false);
            for (at, c) in route.example.char_indices() {
                match c {
                    '\'' if !double => single = !single,
                    '"' if !single => double = !double,
                    '$' if single => panic!("{}: `{}` is in single quotes", route.path, &route.example[at..]),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn every_tool_has_object_schemas_and_every_route_an_operation_id() {
        for tool in mcp::TOOLS {
            let (input, output) = tool_schemas(tool.name);
            assert_eq!(input["type"], "object", "{}", tool.name);
            assert_eq!(output["type"], "object", "{}", tool.name);
        }
        let ids: std::collections::BTreeSet<String> = ROUTES.iter().map(operation_id).collect();
        assert_eq!(ids.len(), ROUTES.len(), "operation ids are unique");
    }
}
