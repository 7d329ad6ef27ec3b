//! The `/mcp` framing: one message in, what the edge does out.

use expect_test::{Expect, expect};
use serde_json::json;

use super::*;

fn check(body: &str, headers: &Headers, expect: Expect) {
    let shown = match handle(body.as_bytes(), headers, "test") {
        Step::Reply { status, body } => {
            let mut body = body;
            // The tool list is long and has its own freshness test; show its size only.
            if let Some(tools) = body.pointer_mut("/result/tools") {
                *tools = json!(format!("{} tools", tools.as_array().map_or(0, Vec::len)));
            }
            format!("{status} {body}")
        }
        Step::Accepted => "202".to_string(),
        Step::Call(call) => format!("call {} {:?} {:?}", call.tool.name, call.era, call.input),
    };
    expect.assert_eq(&shown);
}

fn none() -> Headers {
    Headers::default()
}

fn stateless_header() -> Headers {
    Headers { protocol_version: Some("2026-07-28".into()), method: None }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn malformed_messages_are_json_rpc_errors() {
    check(
        "{not json",
        &none(),
        expect![[
            r#"400 {"error":{"code":-32700,"message":"Parse error: key must be a string at line 1 column 2"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        &none(),
        expect![[
            r#"400 {"error":{"code":-32600,"message":"Invalid request: batches are not supported; send one message"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
        &none(),
        expect![[
            r#"400 {"error":{"code":-32600,"message":"Invalid request: `jsonrpc` must be \"2.0\""},"id":7,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
        &none(),
        expect![[
            r#"200 {"error":{"code":-32601,"message":"Method not found: resources/list"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bake_cake"}}"#,
        &none(),
        expect![[
            r#"200 {"error":{"code":-32602,"message":"Invalid params: no tool `bake_cake`; see tools/list"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
}

#[test]
fn notifications_and_responses_are_accepted_without_a_body() {
    check(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &none(), expect!["202"]);
    check(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        &none(),
        expect!["202"],
    );
    check(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, &none(), expect!["202"]);
}

#[test]
fn initialize_echoes_a_version_it_speaks_and_offers_its_newest_otherwise() {
    let init = |version: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
    };
    let version_of = |body: &str| match handle(body.as_bytes(), &none(), "test") {
        Step::Reply { body, .. } => body["result"]["protocolVersion"].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(version_of(&init("2025-06-18")), json!("2025-06-18"));
    assert_eq!(version_of(&init("2024-11-05")), json!("2025-11-25"));
    assert_eq!(version_of(&init("2026-07-28")), json!("2025-11-25"));
}

#[test]
fn stateless_requests_carry_their_version_and_get_the_new_envelope() {
    check(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#),
        &stateless_header(),
        expect![[
            r#"200 {"id":1,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"commonplace","title":"Commonplace","version":"test"}},"cacheScope":"public","capabilities":{"tools":{"listChanged":false}},"instructions":"Commonplace: open recipes (en, he, pt; CC0 unless a recipe says otherwise) and quote attribution for podcast transcripts (each transcript keeps its show's licence; Changelog transcripts are CC BY-SA 4.0). Reading needs no key. Tools that write (create, fork, update, AI, diet versions) need `Authorization: Bearer <key>`; a person makes a key on /kitchen. You may change only your own recipes: fork someone else's first. Check every quote attribution whose `trust` is `review`.","resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"ttlMs":3600000}}"#
        ]],
    );
    check(
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#),
        &stateless_header(),
        expect![[
            r#"200 {"id":2,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"commonplace","title":"Commonplace","version":"test"}},"cacheScope":"public","resultType":"complete","tools":"14 tools","ttlMs":3600000}}"#
        ]],
    );
    // The handshake era gets the old shape: a 2025-11-25 client may reject fields it does not know.
    check(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        &Headers { protocol_version: Some("2025-11-25".into()), method: None },
        expect![[r#"200 {"id":2,"jsonrpc":"2.0","result":{"tools":"14 tools"}}"#]],
    );
    // `ping` and `initialize` are gone from the stateless revision.
    check(
        &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{{META}}}}}"#),
        &stateless_header(),
        expect![[
            r#"404 {"error":{"code":-32601,"message":"Method not found: ping"},"id":3,"jsonrpc":"2.0"}"#
        ]],
    );
}

#[test]
fn version_negotiation_and_header_checks() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        &none(),
        expect![[
            r#"400 {"error":{"code":-32022,"data":{"requested":"2027-01-01","supported":["2026-07-28"]},"message":"Unsupported protocol version `2027-01-01`"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
        &Headers { protocol_version: Some("2025-11-25".into()), method: None },
        expect![[
            r#"400 {"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version is `2025-11-25` but `_meta` says `2026-07-28`"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
        &Headers { protocol_version: Some("2026-07-28".into()), method: Some("tools/call".into()) },
        expect![[
            r#"400 {"error":{"code":-32020,"message":"Header mismatch: Mcp-Method is `tools/call` but the body's method is `tools/list`"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        &none(),
        expect![[
            r#"400 {"error":{"code":-32602,"message":"Invalid params: `_meta` must carry `io.modelcontextprotocol/clientCapabilities` (an object)"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        &Headers { protocol_version: Some("1999-01-01".into()), method: None },
        expect![[
            r#"400 {"error":{"code":-32600,"data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]},"message":"Unsupported MCP-Protocol-Version `1999-01-01`"},"id":1,"jsonrpc":"2.0"}"#
        ]],
    );
}

#[test]
fn tool_calls_are_typed_and_bad_arguments_become_tool_errors() {
    check(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_recipes","arguments":{"q":"soup","vegan":true,"course":"soup"}}}"#,
        &none(),
        expect![[
            r#"call search_recipes Handshake Ok(SearchRecipes(Query { q: "soup", filters: Filters { flags: ["vegan"], course: Some(Soup), max_min: None, exclude: [] }, lang: None, offset: 0, limit: 20 }))"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"make_diet_version","arguments":{"slug":"hummus","kind":"keto"}}}"#,
        &none(),
        expect![[
            r#"call make_diet_version Handshake Err([Diagnostic { field: "kind", reason: "must be gf, vegan or both" }])"#
        ]],
    );
}

#[test]
fn failures_tell_the_agent_its_next_step() {
    let update = tool("update_recipe").expect("listed");
    let detail = "`hummus` belongs to commonplace";
    let ToolOutcome::Failed { message, .. } =
        failure(update, Some("hummus"), &Refusal::NotYours, detail, json!({"status": 403}))
    else {
        panic!()
    };
    assert!(message.contains("Call fork_recipe with {\"slug\": \"hummus\"}"), "{message}");
    let create = tool("create_recipe").expect("listed");
    let detail = "send `Authorization: Bearer <key>`";
    let ToolOutcome::Failed { message, .. } =
        failure(create, None, &Refusal::NoKey, detail, json!({"status": 401}))
    else {
        panic!()
    };
    let search = tool("search_recipes").expect("listed");
    let problems = vec![Diagnostic::new("limit", "must be a whole number from 1 to 100")];
    let ToolOutcome::Failed { message: bad, .. } =
        failure(search, None, &Refusal::BadArguments(problems), "", json!({"status": 400}))
    else {
        panic!()
    };
    assert!(bad.contains("limit: must be a whole number from 1 to 100"), "{bad}");
    assert!(message.contains("/kitchen"), "{message}");
}

/// A diet version whose answer failed the gluten check was reported as "The AI provider failed".
#[test]
fn an_answer_the_checks_refused_is_not_called_a_provider_failure() {
    let diet = tool("make_diet_version").expect("listed");
    let problems =
        vec![Diagnostic::new("texts.en.ingredients[0].i", "`plain flour` contains gluten (flour)")];
    let ToolOutcome::Failed { message, .. } =
        failure(diet, Some("pancakes"), &Refusal::AiAnswerRefused(problems), "", json!({"status": 502}))
    else {
        panic!()
    };
    assert!(message.contains("the checks refused its answer"), "{message}");
    assert!(message.contains("`plain flour` contains gluten"), "{message}");
    assert!(!message.contains("provider failed"), "{message}");
}

/// The tools' descriptions state limits and the slug rule in words; these are the numbers the server
/// enforces (the descriptions are constants, so this test holds them together).
#[test]
fn tool_descriptions_state_the_limits_the_server_enforces() {
    let create = tool("create_recipe").expect("listed").description;
    for fact in [
        format!("{} writes a minute", crate::site::limits::WRITES.quota),
        format!("{}-{} characters", crate::recipes::slug::MIN_LEN, crate::recipes::slug::MAX_LEN),
        format!("{} KiB", crate::recipes::write::MAX_BODY_BYTES / 1024),
    ] {
        assert!(create.contains(&fact), "create_recipe does not say {fact}: {create}");
    }
    let ai_write = tool("ai_write_recipe").expect("listed").description;
    assert!(ai_write.contains(&format!("{} AI calls an hour", crate::site::limits::AI.quota)), "{ai_write}");
    for spec in crate::mcp::TOOLS {
        assert!(!spec.description.contains("DESIGN.md"), "{}: the site serves no DESIGN.md", spec.name);
    }
}

#[test]
fn an_id_beyond_64_bit_integers_is_echoed_as_sent() {
    let sent = br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
    let Step::Reply { body, .. } = handle(sent, &Headers::default(), "1") else { panic!("a reply") };
    let raw = raw_id(sent);
    assert_eq!(raw.as_deref(), Some("123456789012345678901234567890"));
    let text = render(&body, raw.as_deref());
    assert!(text.starts_with(r#"{"id":123456789012345678901234567890,"#), "{text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), body);
    // An answer whose id is not the message's (null, for an unreadable one) is written as it is.
    let null = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}});
    assert_eq!(render(&null, raw.as_deref()), null.to_string());
    assert_eq!(render(&json!({"id": 7}), Some("7")), r#"{"id":7}"#);
    assert_eq!(raw_id(br#"{"params":{"id":5,"s":"}\","},"id" : 12 }"#).as_deref(), Some("12"));
    assert_eq!(raw_id(br#"{"method":"id","id":"x"}"#).as_deref(), Some(r#""x""#));
    assert_eq!(raw_id(br#"{"method":"ping"}"#), None);
}

/// A tool runs its route's operation: its description names that route, and it needs a key exactly
/// when the route does.
#[test]
fn every_tool_names_the_route_whose_operation_it_runs() {
    use crate::api::routes::ROUTES;
    // Path parameters are named for a person in a description (`{id}`), for the code in the table.
    let unnamed = |text: &str| {
        text.split('{')
            .map(|part| part.split_once('}').map_or(part, |(_, rest)| rest))
            .collect::<Vec<_>>()
            .join("{}")
    };
    for spec in crate::mcp::TOOLS {
        let route =
            ROUTES.iter().find(|route| route.op == spec.op).expect("every tool's operation has a route");
        let said = format!("Same as {} {}", route.method.name(), unnamed(route.path));
        assert!(unnamed(spec.description).contains(&said), "{} does not say {said}", spec.name);
        assert_eq!(route.key, spec.access == Access::Write, "{}", spec.name);
    }
}
