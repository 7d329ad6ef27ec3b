//! The MCP server of `/mcp` as pure functions: the JSON-RPC framing (version negotiation, errors,
//! result envelopes) here, the tool table in [`tools`], and what a refusal tells the agent in
//! [`failure`]. The edge only runs the tools.
//!
//! Both eras of the protocol are served by one stateless dispatcher: the `initialize` handshake
//! (2025-11-25 and the versions before it, what deployed clients send) and the stateless 2026-07-28
//! revision, where every request names its version and capabilities in `params._meta` and
//! `server/discover` replaces the handshake. Nothing is remembered between requests, so any isolate
//! answers any request.
//!
//! A tool's arguments deserialise straight into the input type of its operation (`crate::api`), the
//! type its HTTP route reads, and its schemas are generated from those types by the builder (feature
//! `schema`) into `mcp/tools.json`, which is compiled in: the Worker does not carry schemars. A builder
//! test fails when the file is stale (`UPDATE_EXPECT=1` rewrites it). We rejected rmcp's server runtime
//! because it needs tokio tasks a Worker lacks, and its model types because they cost wasm size for a
//! few dozen lines of framing.

use serde_json::{Map, Value, json};

use crate::Diagnostic;

mod failure;
mod tools;

pub use failure::{Refusal, ToolOutcome, failure};
#[cfg(feature = "schema")]
pub use tools::tool_schemas;
pub use tools::{Access, TOOLS, TOOLS_JSON, ToolInput, ToolSpec, tool, tool_entries};

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
    /// The typed input, or every problem with the arguments (answered as a tool error).
    pub input: Result<ToolInput, Vec<Diagnostic>>,
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
    // Duplicate keys are a parse error too (`crate::api::body`): which `id` or `arguments` was meant?
    let message: Value = match crate::api::body::parse_json(body) {
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
            let input = ToolInput::parse(name, &arguments).expect("every tool of the table has an input");
            Step::Call(Call { id, era, tool, input })
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
    // The error that refuses this request, in `era`.
    let refuse = |era: &Era, code: i64, message: String, data: Option<Value>| -> Result<Era, Box<Step>> {
        Err(Box::new(fail(id.clone(), era, code, message, data)))
    };
    let meta = params.get("_meta").and_then(Value::as_object);
    let meta_version = meta.and_then(|meta| meta.get(META_VERSION));
    let Some(meta_version) = meta_version else {
        let header = headers.protocol_version.as_deref().unwrap_or(DEFAULT_HEADER_VERSION);
        if STATELESS_VERSIONS.contains(&header) && method != "server/discover" {
            return refuse(
                &stateless,
                INVALID_PARAMS,
                format!(
                    "Invalid params: protocol {header} needs `_meta` with `{META_VERSION}` and `{META_CAPABILITIES}`"
                ),
                None,
            );
        }
        if !STATELESS_VERSIONS.contains(&header) && !HANDSHAKE_VERSIONS.contains(&header) {
            return refuse(
                &Era::Handshake,
                INVALID_REQUEST,
                format!("Unsupported MCP-Protocol-Version `{header}`"),
                Some(json!({ "supported": supported_versions() })),
            );
        }
        return Ok(Era::Handshake);
    };
    let requested = meta_version.as_str().unwrap_or_default();
    // A header that repeats the body must say what the body says.
    for (name, header, body, says) in [
        ("MCP-Protocol-Version", &headers.protocol_version, requested, "`_meta` says"),
        ("Mcp-Method", &headers.method, method, "the body's method is"),
    ] {
        if let Some(header) = header
            && header != body
        {
            let message = format!("Header mismatch: {name} is `{header}` but {says} `{body}`");
            return refuse(&stateless, HEADER_MISMATCH, message, None);
        }
    }
    if !STATELESS_VERSIONS.contains(&requested) {
        return refuse(
            &stateless,
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version `{requested}`"),
            Some(json!({ "supported": STATELESS_VERSIONS, "requested": requested })),
        );
    }
    if !meta.is_some_and(|meta| meta.get(META_CAPABILITIES).is_some_and(Value::is_object)) {
        return refuse(
            &stateless,
            INVALID_PARAMS,
            format!("Invalid params: `_meta` must carry `{META_CAPABILITIES}` (an object)"),
            None,
        );
    }
    Ok(Era::Stateless)
}

fn supported_versions() -> Vec<&'static str> {
    let mut versions: Vec<&str> = STATELESS_VERSIONS.to_vec();
    versions.extend(HANDSHAKE_VERSIONS);
    versions
}

/// The text of a message's `id` as it was sent, when the message is an object that has one: the
/// JSON between the `:` after the top-level key `"id"` and the `,` or `}` that ends its value. A key
/// spelled with escapes is not found; [`render`] then writes the `id` as it was read.
pub fn raw_id(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut key_start = None;
    let mut value_start: Option<usize> = None;
    let mut last_key: Option<&str> = None;
    for (at, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if let Some(start) = key_start.take() {
                        last_key = Some(&text[start..at]);
                    }
                }
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => {
                in_string = true;
                // A string at depth 1 that no value is waiting for is a key.
                if depth == 1 && value_start.is_none() {
                    key_start = Some(at + 1);
                }
            }
            b':' if depth == 1 => value_start = Some(at + 1),
            b'{' | b'[' => depth += 1,
            b'}' | b']' | b',' if depth == 1 => {
                if let (Some(start), Some("id")) = (value_start, last_key) {
                    return Some(text[start..at].trim().to_string());
                }
                value_start = None;
                if byte != b',' {
                    depth -= 1;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// An answer's JSON text, with a numeric `id` written as the request wrote it (`raw_id`): JSON-RPC
/// 2.0 answers with the same value, and a number past 64-bit integers or a double's 53 bits, read
/// as a double, would come back rounded. `raw_id` is used only where the answer's `id` is the value
/// it reads as, so an answer about another message (or with `id: null`) is written as it is.
pub fn render(body: &Value, raw_id: Option<&str>) -> String {
    let echoed = raw_id.filter(|raw| {
        body.get("id")
            .is_some_and(|id| id.is_number() && serde_json::from_str::<Value>(raw).ok().as_ref() == Some(id))
    });
    let (Some(raw), Some(obj)) = (echoed, body.as_object()) else { return body.to_string() };
    let mut rest = obj.clone();
    rest.remove("id");
    let rest = Value::Object(rest).to_string();
    match rest.as_str() {
        "{}" => format!("{{\"id\":{raw}}}"),
        _ => format!("{{\"id\":{raw},{}", &rest[1..]),
    }
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

#[cfg(test)]
mod tests;
