//! Safe by default: a request for a foreign host is refused before routing, the local
//! sign-in answers only on loopback, and what a deploy ships carries no development value.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use reqwest::header::{COOKIE, HOST};
use reqwest::redirect::Policy;
use serde_json::Value;
use tests::kitchen::{Kitchen, set_cookie_value};
use tests::{Config, Worker};

/// The worker's port, for `Host` values that keep it as a browser would.
fn port(w: &Worker) -> Result<u16> {
    url::Url::parse(&w.base)?.port().context("the worker's URL has a port")
}

pub async fn foreign_hosts_are_refused_before_routing(w: Arc<Worker>) -> Result<()> {
    let port = port(&w)?;
    let client = reqwest::Client::new();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    for host in
        ["evil.example.com".to_string(), format!("evil.example.com:{port}"), "127.0.0.1.nip.io".into()]
    {
        // A read, an unknown path (refused, not 404: no route runs), a preflight, and the MCP
        // conformance suite's DNS rebinding request (Origin matching the foreign Host).
        let requests = [
            client.get(w.url("/api/recipes?q=hummus")),
            client.get(w.url("/no/such/path")),
            client.request(reqwest::Method::OPTIONS, w.url("/api/recipes")),
            client
                .post(w.url("/mcp"))
                .header("Content-Type", "application/json")
                .header("Origin", format!("http://{host}"))
                .body(list),
        ];
        let name = host.split(':').next().unwrap_or_default();
        for request in requests {
            let answer = request.header(HOST, &host).send().await?;
            let status = answer.status().as_u16();
            let content_type = answer.headers().get("content-type").cloned();
            let problem: Value = answer.json().await.context("a problem body")?;
            ensure!(
                status == 421
                    && content_type.is_some_and(|t| t == "application/problem+json")
                    && problem["type"] == "/problems/misdirected"
                    && problem["detail"].as_str().is_some_and(|d| d.contains(&format!("`{name}`"))),
                "Host {host}: {status} {problem}"
            );
        }
    }
    // Loopback in every spelling is answered, MCP included.
    for host in
        [format!("localhost:{port}"), format!("127.0.0.1:{port}"), "[::1]".into(), "LOCALHOST.".into()]
    {
        let read = client.get(w.url("/api/recipes?q=hummus")).header(HOST, &host).send().await?;
        ensure!(read.status() == 200, "Host {host}: {}", read.status());
        let mcp = client
            .post(w.url("/mcp"))
            .header(HOST, &host)
            .header("Content-Type", "application/json")
            // A browser serialises an origin in lower case.
            .header("Origin", format!("http://{}", host.to_ascii_lowercase()))
            .body(list)
            .send()
            .await?;
        ensure!(mcp.status() == 200, "MCP with Host {host}: {}", mcp.status());
    }
    Ok(())
}

pub async fn local_sign_in_is_refused_on_a_site_host_that_is_not_loopback() -> Result<()> {
    // A development run (the harness's ENVIRONMENT=dev) that also answers for a LAN-ish site host.
    let site = "kitchen.example";
    let w = Worker::start_with(Config {
        vars: vec![("SITE_HOSTS".into(), format!("other.example, {site}"))],
        ..Config::default()
    })
    .await?;
    let client = reqwest::Client::builder().redirect(Policy::none()).build()?;

    let page = client.get(w.url("/kitchen")).header(HOST, site).send().await?;
    ensure!(page.status() == 200, "the site host is answered: {}", page.status());
    let csrf_cookie = set_cookie_value(&page, "cp_csrf").context("no cp_csrf cookie")?;
    let html = page.text().await?;
    ensure!(!html.contains("dev-login"), "the kitchen offers the local sign-in on {site}");
    // The form is not offered, but a hand-made one passes the CSRF check (double submit: the token is
    // the cookie's value), so only the host can be what refuses it.
    let answer = client
        .post(w.url("/kitchen/login/dev"))
        .header(HOST, site)
        .header(COOKIE, format!("cp_csrf={csrf_cookie}"))
        .form(&[("handle", "intruder"), ("csrf", &csrf_cookie)])
        .send()
        .await?;
    let status = answer.status().as_u16();
    ensure!(set_cookie_value(&answer, "cp_session").is_none(), "a session was handed out on {site}");
    let problem: Value = answer.json().await?;
    ensure!(
        status == 403 && problem["detail"].as_str().is_some_and(|d| d.contains("loopback")),
        "{status} {problem}"
    );
    let rows = w.d1_query("SELECT COUNT(*) AS n FROM accounts WHERE handle = 'intruder'")?;
    ensure!(rows.first().and_then(|row| row["n"].as_u64()) == Some(0), "an account was made: {rows:?}");

    // The same worker on loopback signs in: the host alone made the difference.
    Kitchen::sign_in(&w, "local-cook").await?;
    Ok(())
}

pub async fn deployed_configuration_carries_no_development_value() -> Result<()> {
    let root = tests::root();
    let ignored =
        Command::new("git").args(["check-ignore", "-q", ".dev.vars"]).current_dir(&root).status()?;
    ensure!(ignored.success(), ".dev.vars is not ignored by git, so local values could be committed");

    // A clean checkout's configuration: the tracked wrangler.toml and build script, and the built
    // Worker and assets (which a checkout builds itself); no .dev.vars, no .env.
    let checkout = root.join(format!("tests/.work/deploy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&checkout);
    std::fs::create_dir_all(checkout.join("scripts"))?;
    std::fs::create_dir_all(checkout.join("edge"))?;
    std::fs::copy(root.join("wrangler.toml"), checkout.join("wrangler.toml"))?;
    std::fs::copy(root.join("scripts/build.sh"), checkout.join("scripts/build.sh"))?;
    for built in ["edge/build", "dist.assets", "migrations"] {
        std::os::unix::fs::symlink(root.join(built), checkout.join(built))?;
    }
    let output = deploy_dry_run(&root, &checkout);
    let _ = std::fs::remove_dir_all(&checkout);
    let output = output?;

    // The bindings are printed (so their absence below means something) ...
    for binding in ["env.DB", "env.PACKS", "env.AI", "env.ASSETS", "env.WORKERS_AI_MODEL", "env.SITE_HOSTS"] {
        ensure!(output.contains(binding), "the dry run does not list {binding}:\n{output}");
    }
    // ... and none of them is a development one.
    for development in ["ENVIRONMENT", "\"dev\"", "localhost", "127.0.0.1"] {
        ensure!(!output.contains(development), "the deploy would ship {development}:\n{output}");
    }
    Ok(())
}

/// `wrangler deploy --dry-run` in `checkout`: everything it printed, or why it failed.
fn deploy_dry_run(root: &Path, checkout: &Path) -> Result<String> {
    let outdir = checkout.join("out");
    let output = Command::new(root.join("node_modules/.bin/wrangler"))
        .args(["deploy", "--dry-run", "--outdir"])
        .arg(&outdir)
        .current_dir(checkout)
        .env("WRANGLER_SEND_METRICS", "false")
        .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
        .env("NO_COLOR", "1")
        .env("CI", "true")
        // The harness built the Worker; the [build] command need not run again.
        .env("COMMONPLACE_PREBUILT", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .context("running wrangler deploy --dry-run")?;
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    ensure!(output.status.success(), "wrangler deploy --dry-run failed:\n{printed}");
    Ok(printed)
}
