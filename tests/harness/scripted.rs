//! The loopback listener behind the scripted stand-ins for outside services (GitHub OAuth, an AI
//! chat endpoint, a podcast publisher's host: [`podcast_host`]): each connection goes to the
//! service's own handler; dropping it stops accepting.
//! One reader and one writer of HTTP/1.1 serve every stand-in.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;

use anyhow::Result;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug)]
pub struct Listener {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on a free loopback port and hands every connection to `handler`, each in its own task.
pub async fn listen<F, Fut>(handler: F) -> Result<Listener>
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(handler(stream));
        }
    });
    Ok(Listener { addr, task })
}

/// One HTTP/1.1 request as a scripted service reads it: header names in lower case.
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// `a=1&b=2` (a query or a form body) as pairs, decoded.
pub fn parse_pairs(text: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(text.as_bytes()).into_owned().collect()
}

/// Reads one request (`None` when the client closed the connection first).
pub async fn read_request(stream: &mut BufReader<TcpStream>) -> Result<Option<Request>> {
    let mut line = String::new();
    if stream.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        stream.read_line(&mut header).await?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Ok(Some(Request { method, path: path.to_string(), query: parse_pairs(query), headers, body }))
}

/// Writes one answer with `status` (`"200 OK"`), `headers`, a length and `Connection: close`.
pub async fn respond(
    stream: &mut BufReader<TcpStream>,
    status: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<()> {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.get_mut().write_all(head.as_bytes()).await?;
    stream.get_mut().write_all(body.as_bytes()).await?;
    stream.get_mut().flush().await?;
    Ok(())
}
/// The entity tag of [`podcast_host`]'s own feed (`/self/feed.xml`).
pub const FEED_ETAG: &str = "\"ledger-v1\"";

/// How many conditional reads of that feed [`podcast_host`] answered with 304, in this process.
pub static FEED_NOT_MODIFIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A scripted feed host on loopback: the feed behind a redirect, a WebVTT and an SRT transcript, and
/// one transcript address that redirects to the cloud metadata address.
pub async fn podcast_host() -> Result<Listener> {
    let feed = std::fs::read_to_string(crate::root().join("tests/data/feeds/newsroom.xml")).unwrap();
    let page = r#"<!doctype html><html><head><title>Budget day</title>
        <link rel="alternate" type="application/rss+xml" href="/self/feed.xml"></head><body></body></html>"#;
    let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:06.000\n<v Rosa Quint>Good morning, this is the Morning Ledger.\n\n\
               00:00:06.500 --> 00:00:12.000\n<v Ines Varga>The harbour vote was never about the harbour.\n";
    let srt = "1\n00:00:01,000 --> 00:00:05,000\nThe trains stood still for a second day.\n\n\
               2\n00:00:05,500 --> 00:00:09,000\nNobody expected the union to hold.\n";
    listen(move |stream| {
        let (feed, vtt, srt) = (feed.clone(), vtt.to_string(), srt.to_string());
        async move {
            let mut stream = tokio::io::BufReader::new(stream);
            let Ok(Some(request)) = read_request(&mut stream).await else { return };
            // The same feed with its episodes' pages on this host, for asking by a page.
            let host = request.headers.get("host").cloned().unwrap_or_default();
            let own_feed = feed
                .replace("https://ledger.example.org/episodes/", &format!("http://{host}/self/episodes/"));
            let _ = match request.path.as_str() {
                // A conditional GET that names this version is answered 304 (and counted).
                "/self/feed.xml"
                    if request.headers.get("if-none-match").map(String::as_str) == Some(FEED_ETAG) =>
                {
                    FEED_NOT_MODIFIED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    respond(&mut stream, "304 Not Modified", &[("ETag", FEED_ETAG)], "").await
                }
                "/self/feed.xml" => {
                    let headers = [("Content-Type", "application/rss+xml"), ("ETag", FEED_ETAG)];
                    respond(&mut stream, "200 OK", &headers, &own_feed).await
                }
                path if path.starts_with("/self/episodes/") => {
                    respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], page).await
                }
                "/audio/99.mp3" => {
                    respond(&mut stream, "200 OK", &[("Content-Type", "audio/mpeg")], "ID3").await
                }
                // A page over the 2 MiB a page may be.
                "/big" => {
                    let big = "<p>a</p>".repeat(300_000);
                    respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], &big).await
                }
                // Redirects without end: /loop/1 → /loop/2 → …
                path if path.starts_with("/loop/") => {
                    let n: u32 = path["/loop/".len()..].parse().unwrap_or(0);
                    let to = format!("/loop/{}", n + 1);
                    respond(&mut stream, "302 Found", &[("Location", to.as_str())], "").await
                }
                "/show" => {
                    respond(&mut stream, "301 Moved Permanently", &[("Location", "/feed.xml")], "").await
                }
                "/feed.xml" => {
                    respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &feed).await
                }
                "/t/42.vtt" => respond(&mut stream, "200 OK", &[("Content-Type", "text/vtt")], &vtt).await,
                "/t/41.srt" => {
                    respond(&mut stream, "200 OK", &[("Content-Type", "application/x-subrip")], &srt).await
                }
                "/t/inside.vtt" => {
                    let to = [("Location", "http://169.254.169.254/latest/meta-data/")];
                    respond(&mut stream, "302 Found", &to, "").await
                }
                _ => respond(&mut stream, "404 Not Found", &[], "").await,
            };
        }
    })
    .await
}
