//! A scripted GitHub for the kitchen's OAuth sign-in: a tiny HTTP/1.1 server on loopback that speaks
//! the parts of GitHub's OAuth web flow the Worker uses — the authorize page, the code-for-token
//! exchange, and `GET /user` — and checks what the Worker sends (client id and secret, code, redirect).
//! Point the Worker's `GITHUB_BASE_URL` at [`GitHub::base`] and `GITHUB_API_URL` at [`GitHub::api`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::io::BufReader;
use tokio::net::TcpStream;

use crate::scripted::{Listener, listen, parse_pairs, read_request, respond};

pub const CLIENT_ID: &str = "commonplace-test-client";
pub const CLIENT_SECRET: &str = "commonplace-test-secret";
pub const TOKEN: &str = "gho_scriptedtoken";

/// The GitHub user the scripted server signs in.
#[derive(Debug, Clone)]
pub struct User {
    pub id: i64,
    pub login: String,
    pub name: String,
}

#[derive(Debug, Default)]
struct Shared {
    /// Codes handed out and the redirect URI each was given for; a code works once.
    codes: HashMap<String, String>,
    /// Every request line seen, for assertions.
    log: Vec<String>,
}

/// A running scripted GitHub; stops when dropped.
#[derive(Debug)]
pub struct GitHub {
    pub base: String,
    shared: Arc<Mutex<Shared>>,
    _server: Listener,
}

impl GitHub {
    pub async fn start(user: User) -> Result<GitHub> {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let state = shared.clone();
        let server = listen(move |stream| {
            let (state, user) = (state.clone(), user.clone());
            async move {
                let _ = serve(stream, state, user).await;
            }
        })
        .await?;
        Ok(GitHub { base: format!("http://{}", server.addr), shared, _server: server })
    }

    pub fn api(&self) -> String {
        format!("{}/api", self.base)
    }

    /// Request lines (`METHOD path`) seen so far.
    pub fn log(&self) -> Vec<String> {
        self.shared.lock().unwrap().log.clone()
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}

async fn serve(stream: TcpStream, shared: Arc<Mutex<Shared>>, user: User) -> Result<()> {
    let mut stream = BufReader::new(stream);
    let Some(req) = read_request(&mut stream).await? else { return Ok(()) };
    shared.lock().unwrap().log.push(format!("{} {}", req.method, req.path));
    let json = [("Content-Type", "application/json; charset=utf-8")];
    match (req.method.as_str(), req.path.as_str()) {
        // The page GitHub shows the person: "Authorize <app>". Approving sends the browser back with a code.
        ("GET", "/login/oauth/authorize") => {
            let client_id = req.query.get("client_id").cloned().unwrap_or_default();
            let redirect = req.query.get("redirect_uri").cloned().unwrap_or_default();
            let state = req.query.get("state").cloned().unwrap_or_default();
            if client_id != CLIENT_ID || redirect.is_empty() || state.is_empty() {
                return respond(
                    &mut stream,
                    "400 Bad Request",
                    &[],
                    "unknown client or missing redirect/state",
                )
                .await;
            }
            let code = format!("code-{}", shared.lock().unwrap().codes.len() + 1);
            shared.lock().unwrap().codes.insert(code.clone(), redirect.clone());
            let back = format!(
                "{redirect}?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("code", &code)
                    .append_pair("state", &state)
                    .finish()
            );
            let page = format!(
                "<!doctype html><title>Authorize</title><h1>Authorize commonplace</h1>\
                 <a id=\"authorize\" href=\"{}\">Authorize</a>",
                html_escape(&back)
            );
            respond(&mut stream, "200 OK", &[("Content-Type", "text/html; charset=utf-8")], &page).await
        }
        ("POST", "/login/oauth/access_token") => {
            let form = parse_pairs(&String::from_utf8_lossy(&req.body));
            let field = |name: &str| form.get(name).cloned().unwrap_or_default();
            let redirect = shared.lock().unwrap().codes.remove(&field("code"));
            let wants_json = req.headers.get("accept").is_some_and(|a| a.contains("application/json"));
            let body = if field("client_id") != CLIENT_ID || field("client_secret") != CLIENT_SECRET {
                r#"{"error":"incorrect_client_credentials","error_description":"The client_id and/or client_secret passed are incorrect."}"#.to_string()
            } else if redirect.is_none() || redirect.as_deref() != Some(field("redirect_uri").as_str()) {
                r#"{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}"#.to_string()
            } else {
                format!(r#"{{"access_token":"{TOKEN}","token_type":"bearer","scope":"read:user"}}"#)
            };
            if !wants_json {
                return respond(&mut stream, "406 Not Acceptable", &[], "ask for application/json").await;
            }
            respond(&mut stream, "200 OK", &json, &body).await
        }
        ("GET", "/api/user") => {
            if req.headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {TOKEN}")) {
                return respond(&mut stream, "401 Unauthorized", &json, r#"{"message":"Bad credentials"}"#)
                    .await;
            }
            let body = serde_json::json!({"id": user.id, "login": user.login, "name": user.name}).to_string();
            respond(&mut stream, "200 OK", &json, &body).await
        }
        _ => respond(&mut stream, "404 Not Found", &json, r#"{"message":"Not Found"}"#).await,
    }
}
