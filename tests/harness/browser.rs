//! A real headless Chromium driven over the W3C WebDriver protocol (Debian's `chromium` and
//! `chromium-driver`). The few commands the tests need are plain HTTP calls to chromedriver, so no
//! WebDriver client crate is compiled for them. [`Browser`] stops chromedriver (and with it Chromium)
//! when dropped.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The W3C name of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

#[derive(Debug)]
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    client: reqwest::Client,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // chromedriver runs in a process group of its own with the Chromium it started: stop them all.
        crate::stop_group(&mut self.driver);
    }
}

impl Browser {
    /// Starts chromedriver on a free loopback port and opens a headless Chromium session.
    pub async fn start() -> Result<Browser> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let driver_bin = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let driver = Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {driver_bin} (apt-get install chromium-driver)"))?;
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(answer) = client.get(format!("{base}/status")).send().await
                && answer.status().is_success()
            {
                break;
            }
            if Instant::now() > deadline {
                bail!("chromedriver did not start");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let chrome = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chrome,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                         "--disable-dev-shm-usage", "--window-size=412,915"],
            },
        }}});
        let mut browser = Browser { driver, base, session: String::new(), client };
        let answer = browser.call("POST", "/session", Some(caps)).await?;
        browser.session = answer["sessionId"].as_str().context("no session id")?.to_string();
        Ok(browser)
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.client.get(&url),
            "DELETE" => self.client.delete(&url),
            _ => self.client.post(&url).json(&body.unwrap_or_else(|| json!({}))),
        };
        let answer: Value = request.send().await?.json().await?;
        if let Some(error) = answer["value"]["error"].as_str() {
            bail!("webdriver {method} {path}: {error}: {}", answer["value"]["message"]);
        }
        Ok(answer["value"].clone())
    }

    fn at(&self, path: &str) -> String {
        format!("/session/{}{path}", self.session)
    }

    pub async fn goto(&self, url: &str) -> Result<()> {
        self.call("POST", &self.at("/url"), Some(json!({"url": url}))).await.map(drop)
    }

    pub async fn current_url(&self) -> Result<String> {
        Ok(self.call("GET", &self.at("/url"), None).await?.as_str().unwrap_or_default().to_string())
    }

    pub async fn source(&self) -> Result<String> {
        Ok(self.call("GET", &self.at("/source"), None).await?.as_str().unwrap_or_default().to_string())
    }

    /// The element a CSS selector finds, or an error naming the selector.
    pub async fn find(&self, css: &str) -> Result<String> {
        let found = self
            .call("POST", &self.at("/element"), Some(json!({"using": "css selector", "value": css})))
            .await
            .with_context(|| format!("finding {css}"))?;
        Ok(found[ELEMENT]
            .as_str()
            .with_context(|| format!("no element reference for {css}: {found}"))?
            .to_string())
    }

    /// Whether a CSS selector finds anything on the page.
    pub async fn exists(&self, css: &str) -> Result<bool> {
        let found = self
            .call("POST", &self.at("/elements"), Some(json!({"using": "css selector", "value": css})))
            .await?;
        Ok(found.as_array().is_some_and(|all| !all.is_empty()))
    }

    /// Waits (up to ten seconds) until a CSS selector finds something: a click that submits a form
    /// can return before the next page has arrived.
    pub async fn wait_for(&self, css: &str) -> Result<()> {
        for _ in 0..100 {
            if self.exists(css).await.unwrap_or(false) {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        anyhow::bail!("{css} did not appear within ten seconds")
    }

    pub async fn click(&self, css: &str) -> Result<()> {
        let element = self.find(css).await?;
        self.call("POST", &self.at(&format!("/element/{element}/click")), None).await.map(drop)
    }

    pub async fn type_into(&self, css: &str, text: &str) -> Result<()> {
        let element = self.find(css).await?;
        self.call("POST", &self.at(&format!("/element/{element}/value")), Some(json!({"text": text})))
            .await
            .map(drop)
    }

    pub async fn text(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(self
            .call("GET", &self.at(&format!("/element/{element}/text")), None)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// Every cookie the browser holds for the current page, as WebDriver describes them.
    pub async fn cookies(&self) -> Result<Vec<Value>> {
        Ok(self.call("GET", &self.at("/cookie"), None).await?.as_array().cloned().unwrap_or_default())
    }

    /// Runs a script in the page and returns its value (`return …;` in the script).
    pub async fn execute(&self, script: &str) -> Result<Value> {
        self.call("POST", &self.at("/execute/sync"), Some(json!({"script": script, "args": []}))).await
    }

    /// Runs a script that ends by calling its last argument (`arguments[arguments.length - 1]`) with
    /// its value, and returns that value.
    pub async fn execute_async(&self, script: &str) -> Result<Value> {
        self.call("POST", &self.at("/execute/async"), Some(json!({"script": script, "args": []}))).await
    }

    /// The axe-core violations of the page as it stands (WCAG 2.x A and AA and axe's best
    /// practices), each as `rule: target…`. axe-core comes from `tests/validators` (npm); WebDriver
    /// runs it outside the page's `Content-Security-Policy`.
    pub async fn axe_violations(&self) -> Result<Vec<String>> {
        let axe = crate::root().join("tests/validators/node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(&axe)
            .with_context(|| format!("reading {} (bash scripts/setup.sh --test)", axe.display()))?;
        self.execute(&format!("{source}\nreturn typeof axe;")).await?;
        let found = self
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {resultTypes: ['violations']})
                    .then((r) => done(r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', '))))
                    .catch((e) => done(['axe failed: ' + e]));",
            )
            .await?;
        Ok(found.as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect())
    }

    /// Sets a cookie for the current page's site (a page of the site must be open).
    pub async fn add_cookie(&self, name: &str, value: &str) -> Result<()> {
        self.call(
            "POST",
            &self.at("/cookie"),
            Some(json!({"cookie": {"name": name, "value": value, "path": "/"}})),
        )
        .await
        .map(drop)
    }

    /// Sets the window size, as a phone's screen would be.
    pub async fn resize(&self, width: u32, height: u32) -> Result<()> {
        self.call("POST", &self.at("/window/rect"), Some(json!({"width": width, "height": height})))
            .await
            .map(drop)
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>> {
        let b64 = self.call("GET", &self.at("/screenshot"), None).await?;
        Ok(data_encoding::BASE64.decode(b64.as_str().unwrap_or_default().as_bytes())?)
    }
}
