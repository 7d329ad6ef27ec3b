//! A scripted OpenAI-compatible chat service for the site's AI: a tiny HTTP/1.1 server on loopback
//! that speaks `POST /v1/chat/completions` as OpenAI does (bearer key, `model`, `messages`,
//! `response_format` with a JSON schema; answers with `choices[0].message.content` or `.refusal`, and
//! errors in OpenAI's error shape). What it answers is scripted per test: a rule matches requests
//! whose first user message contains a needle, and hands out its replies in order (the last one
//! repeats). Every call is counted, so a test can say how often the Worker asked.
//! Point the Worker's `AI_BASE_URL` at [`ScriptedAi::base`], `AI_API_KEY` at [`API_KEY`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::net::TcpStream;

use crate::scripted::{self, Listener, listen};

pub const API_KEY: &str = "sk-scripted-test-key";
pub const MODEL: &str = "scripted-chef-1";

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A message whose content is this JSON document.
    Json(Value),
    /// A message whose content is this text as is (not JSON, prose around JSON…).
    Text(String),
    /// The model declines (`message.refusal`).
    Refusal(String),
    /// An HTTP error status with an OpenAI error body.
    Status(u16),
    /// Answers nothing for this long, then closes the connection.
    Hang(Duration),
    /// Waits, then gives the inner reply.
    Slow(Duration, Box<Reply>),
}

#[derive(Debug)]
struct Rule {
    needle: String,
    replies: Vec<Reply>,
    calls: usize,
}

#[derive(Debug, Default)]
struct Shared {
    rules: Vec<Rule>,
    /// Every request body, in arrival order.
    requests: Vec<Value>,
}

/// A running scripted chat service; stops when dropped.
#[derive(Debug)]
pub struct ScriptedAi {
    /// `http://127.0.0.1:PORT/v1`, what `AI_BASE_URL` takes.
    pub base: String,
    shared: Arc<Mutex<Shared>>,
    _server: Listener,
}

impl ScriptedAi {
    pub async fn start() -> Result<ScriptedAi> {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let state = shared.clone();
        let server = listen(move |stream| {
            let state = state.clone();
            async move {
                let _ = serve(stream, state).await;
            }
        })
        .await?;
        Ok(ScriptedAi { base: format!("http://{}/v1", server.addr), shared, _server: server })
    }

    /// The Worker's variables that point its AI at this service, then `more`.
    pub fn worker_vars(&self, more: &[(&str, &str)]) -> Vec<(String, String)> {
        let ai = [("AI_BASE_URL", self.base.as_str()), ("AI_MODEL", MODEL), ("AI_API_KEY", API_KEY)];
        ai.iter().chain(more).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Requests whose first user message contains `needle` get `replies`, one per call, the last
    /// repeating.
    pub fn on(&self, needle: &str, replies: Vec<Reply>) {
        self.shared.lock().unwrap().rules.push(Rule { needle: needle.to_string(), replies, calls: 0 });
    }

    /// How many calls the rule for `needle` answered.
    pub fn calls(&self, needle: &str) -> usize {
        self.shared.lock().unwrap().rules.iter().filter(|r| r.needle == needle).map(|r| r.calls).sum()
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().unwrap().requests.clone()
    }
}

/// The OpenAI chat-completions answer carrying `message`.
fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 100, "total_tokens": 200}
    })
}

fn error_body(message: &str, kind: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
}

async fn respond(stream: &mut BufReader<TcpStream>, status: u16, body: &str) -> Result<()> {
    let status = match status {
        200 => "200 OK",
        400 => "400 Bad Request",
        401 => "401 Unauthorized",
        404 => "404 Not Found",
        429 => "429 Too Many Requests",
        _ => "500 Internal Server Error",
    };
    scripted::respond(stream, status, &[("Content-Type", "application/json")], body).await
}

async fn serve(stream: TcpStream, shared: Arc<Mutex<Shared>>) -> Result<()> {
    let mut stream = BufReader::new(stream);
    let Some(request) = scripted::read_request(&mut stream).await? else { return Ok(()) };
    let (method, path, body) = (request.method.as_str(), request.path.as_str(), &request.body);
    let authorization = request.headers.get("authorization").map(String::as_str).unwrap_or_default();
    if (method, path) != ("POST", "/v1/chat/completions") {
        return respond(&mut stream, 404, &error_body("Unknown request URL", "invalid_request_error")).await;
    }
    if authorization != format!("Bearer {API_KEY}") {
        return respond(&mut stream, 401, &error_body("Incorrect API key provided", "invalid_request_error"))
            .await;
    }
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return respond(
            &mut stream,
            400,
            &error_body("We could not parse the JSON body", "invalid_request_error"),
        )
        .await;
    };
    let well_formed = request["model"].is_string()
        && request["messages"].as_array().is_some_and(|m| !m.is_empty())
        && request["response_format"]["type"] == "json_schema"
        && request["response_format"]["json_schema"]["schema"].is_object();
    if !well_formed {
        return respond(
            &mut stream,
            400,
            &error_body(
                "model, messages and a json_schema response_format are required",
                "invalid_request_error",
            ),
        )
        .await;
    }
    let first_user = request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let reply = {
        let mut shared = shared.lock().unwrap();
        shared.requests.push(request);
        shared.rules.iter_mut().find(|rule| first_user.contains(&rule.needle)).map(|rule| {
            let reply = rule.replies[rule.calls.min(rule.replies.len() - 1)].clone();
            rule.calls += 1;
            reply
        })
    };
    let Some(mut reply) = reply else {
        return respond(
            &mut stream,
            400,
            &error_body("no scripted reply for this request", "invalid_request_error"),
        )
        .await;
    };
    loop {
        match reply {
            Reply::Slow(wait, inner) => {
                tokio::time::sleep(wait).await;
                reply = *inner;
            }
            Reply::Hang(wait) => {
                tokio::time::sleep(wait).await;
                return Ok(());
            }
            Reply::Status(status) => {
                return respond(&mut stream, status, &error_body("The server had an error", "server_error"))
                    .await;
            }
            Reply::Refusal(why) => {
                let message = json!({"role": "assistant", "content": null, "refusal": why});
                return respond(&mut stream, 200, &completion(message, "stop").to_string()).await;
            }
            Reply::Json(doc) => {
                let message = json!({"role": "assistant", "content": doc.to_string(), "refusal": null});
                return respond(&mut stream, 200, &completion(message, "stop").to_string()).await;
            }
            Reply::Text(text) => {
                let message = json!({"role": "assistant", "content": text, "refusal": null});
                return respond(&mut stream, 200, &completion(message, "stop").to_string()).await;
            }
        }
    }
}
