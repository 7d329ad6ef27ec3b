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

/// Listens like [`listen`] and hands every request that arrives, with the stream to answer it on and
/// a clone of `state`, to `handler`; a connection that sends no request is closed unanswered.
pub async fn serve_requests<S, F, Fut>(state: S, handler: F) -> Result<Listener>
where
    S: Clone + Send + Sync + 'static,
    F: Fn(S, Request, BufReader<TcpStream>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let handler = std::sync::Arc::new(handler);
    listen(move |stream| {
        let (state, handler) = (state.clone(), handler.clone());
        async move {
            let mut stream = BufReader::new(stream);
            let Ok(Some(request)) = read_request(&mut stream).await else { return };
            handler(state, request, stream).await;
        }
    })
    .await
}

/// A podcast's RSS feed with the Podcasting 2.0 namespace (and `namespaces` besides, each with its
/// leading space) around `channel`: the channel's own elements and its items.
pub fn podcast_feed(namespaces: &str, channel: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\" \
         xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"{namespaces}><channel>{channel}</channel></rss>"
    )
}

/// An episode's page on a publisher's site, titled `title`, that names the show's feed (`/feed.xml`).
pub fn page_naming_feed(title: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title>\
         <link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\"></head></html>"
    )
}

/// One HTTP/1.1 request as a scripted service reads it: header names in lower case.
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    /// The `Host` header: the address the request was sent to, empty when it names none.
    pub fn host(&self) -> String {
        self.headers.get("host").cloned().unwrap_or_default()
    }
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
    respond_bytes(stream, status, headers, body.as_bytes()).await
}

/// [`respond`] with a body of bytes.
pub async fn respond_bytes(
    stream: &mut BufReader<TcpStream>,
    status: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<()> {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.get_mut().write_all(head.as_bytes()).await?;
    stream.get_mut().write_all(body).await?;
    stream.get_mut().flush().await?;
    Ok(())
}
/// The entity tag of [`podcast_host`]'s own feed (`/self/feed.xml`).
pub const FEED_ETAG: &str = "\"ledger-v1\"";

/// A running [`podcast_host`]: its address, and how many conditional reads of its own feed it
/// answered with 304.
pub struct PodcastHost {
    pub addr: SocketAddr,
    not_modified: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    _listener: Listener,
}

impl PodcastHost {
    /// How many conditional reads of `/self/feed.xml` this host answered with 304 so far.
    pub fn feed_not_modified(&self) -> usize {
        self.not_modified.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The episodes of [`podcast_host`]'s feed without transcripts (`/tx/feed.xml`): each one's name, as
/// its page (`/tx/episodes/<name>`, also reached by the share link `/tx/share/<name>`) and its audio (`/audio/<name>-<seconds>.wav`) say it, and its
/// length in minutes. The name tells the scripted transcription services
/// (`tests::transcribers`) how to behave: `twice` calls back twice, `quiet` never calls back,
/// `early` calls back before it answers the submission, `stall`'s submission is answered four seconds
/// late (AssemblyAI), `gone`'s audio answers 404, `liar`'s audio (a
/// WAV) and `boxed`'s (an M4A with its index at its end, served by range) are longer than their feed says.
pub const UNTRANSCRIBED: [(&str, u32); 11] = [
    ("clean", 10),
    ("twice", 10),
    ("quiet", 10),
    ("gone", 10),
    ("long", 180),
    ("big", 40),
    ("fill", 30),
    ("early", 10),
    ("liar", 10),
    ("boxed", 10),
    ("stall", 10),
];

/// How many times longer an episode's audio is than its feed claims: `liar`'s and `boxed`'s files
/// last two and a half hours where their feed says ten minutes.
fn truly_longer(name: &str) -> u32 {
    if matches!(name, "liar" | "boxed") { 15 } else { 1 }
}

/// The bytes `range` (`bytes=a-b`) asks for of an M4A file that lasts `seconds`, its index (`moov`)
/// after its media (`mdat`, 16,000 bytes a second of zeros, never held whole), with the whole file's
/// size.
pub fn m4a_range(seconds: u32, range: Option<&str>) -> (Vec<u8>, u64, u64) {
    let media = u64::from(seconds) * 16_000;
    let mut head = b"\0\0\0\x18ftypM4A \0\0\0\0M4A mp42\0\0\0\x01mdat".to_vec();
    head.extend_from_slice(&(16 + media).to_be_bytes());
    let mut index = b"\0\0\0\x6cmoov\0\0\0\x64mvhd\0\0\0\0\0\0\0\0\0\0\0\0".to_vec();
    index.extend_from_slice(&1000u32.to_be_bytes());
    index.extend_from_slice(&(seconds * 1000).to_be_bytes());
    index.resize(108, 0);
    let (index_at, total) = (head.len() as u64 + media, head.len() as u64 + media + index.len() as u64);
    let (from, to) = range
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?.min(total - 1))))
        .unwrap_or((0, (total - 1).min(65_535)));
    let byte = |at: u64| match at {
        at if at < head.len() as u64 => head[at as usize],
        at if at >= index_at => index[(at - index_at) as usize],
        _ => 0,
    };
    ((from..=to).map(byte).collect(), from, total)
}

/// The feed of [`UNTRANSCRIBED`] on `host`: the show's people, its licence, and no transcripts.
fn untranscribed_feed(host: &str) -> String {
    let items: String = UNTRANSCRIBED
        .iter()
        .enumerate()
        .map(|(n, (name, minutes))| {
            format!(
                "<item><title>Harbour diary: {name}</title><link>http://{host}/tx/episodes/{name}</link>\
                 <guid isPermaLink=\"false\">diary-{name}</guid>\
                 <pubDate>Mon, {day:02} Nov 2026 06:00:00 +0000</pubDate>\
                 <itunes:duration>{hh:02}:{mm:02}:00</itunes:duration>\
                 <enclosure url=\"http://{host}/audio/{name}-{seconds}.{ext}\" length=\"{bytes}\" type=\"audio/wav\"/>\
                 <podcast:person role=\"guest\">Ines Varga</podcast:person></item>",
                day = n + 1,
                hh = minutes / 60,
                mm = minutes % 60,
                seconds = minutes * 60,
                bytes = 44 + minutes * 60 * 8000,
                ext = if *name == "boxed" { "m4a" } else { "wav" },
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\" \
         xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"><channel>\
         <title>Harbour Diary</title><link>http://{host}/tx/</link>\
         <podcast:license>CC-BY-4.0</podcast:license>\
         <podcast:person role=\"host\">Rosa Quint</podcast:person>{items}</channel></rss>"
    )
}

/// A WAV file (8 kHz, 8-bit, mono) whose header says it lasts `seconds`, with at most its first two
/// seconds of a 440 Hz tone: what a service reads the length of, without a long download.
pub fn wav(seconds: u32) -> Vec<u8> {
    let rate = 8000u32;
    let declared = seconds * rate;
    let samples = seconds.min(2) * rate;
    let mut out = Vec::with_capacity(44 + samples as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + declared).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes()); // bytes a second
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&8u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&declared.to_le_bytes());
    for n in 0..samples {
        let phase = f64::from(n) * 440.0 * std::f64::consts::TAU / f64::from(rate);
        out.push((128.0 + 60.0 * phase.sin()) as u8);
    }
    out
}

/// A DNS-over-HTTPS resolver as Cloudflare's and Google's answer (`GET ?name=…&type=A|AAAA`,
/// `Accept: application/dns-json`), holding the zone `records` (name, address): a name it holds gets
/// its addresses of the asked family, any other name NXDOMAIN (`Status: 3`). It answers as a public
/// resolver would for a public name whose records point inside a network.
pub async fn resolver(records: Vec<(String, std::net::IpAddr)>) -> Result<Listener> {
    let records = std::sync::Arc::new(records);
    serve_requests(records, |records, request, mut stream| async move {
        let name = request.query.get("name").cloned().unwrap_or_default();
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let (kind, code) = match request.query.get("type").map(String::as_str) {
            Some("AAAA") => ("AAAA", 28),
            _ => ("A", 1),
        };
        let held: Vec<&std::net::IpAddr> =
            records.iter().filter(|(held, _)| *held == name).map(|(_, ip)| ip).collect();
        let answers: Vec<serde_json::Value> = held
            .iter()
            .filter(|ip| ip.is_ipv6() == (kind == "AAAA"))
            .map(|ip| serde_json::json!({"name": format!("{name}."), "type": code, "TTL": 60, "data": ip.to_string()}))
            .collect();
        let status = if held.is_empty() { 3 } else { 0 };
        let body = serde_json::json!({
            "Status": status, "TC": false, "RD": true, "RA": true, "AD": false, "CD": false,
            "Question": [{"name": format!("{name}."), "type": code}], "Answer": answers,
        });
        let _ = respond(&mut stream, "200 OK", &[("Content-Type", "application/dns-json")], &body.to_string()).await;
    })
    .await
}

/// A host that must never be reached: it counts every request it is sent.
pub async fn trap() -> Result<(Listener, std::sync::Arc<std::sync::atomic::AtomicUsize>)> {
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    let listener = listen(move |stream| {
        let hits = counted.clone();
        async move {
            let mut stream = tokio::io::BufReader::new(stream);
            if let Ok(Some(_)) = read_request(&mut stream).await {
                hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let _ = respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], "trapped").await;
        }
    })
    .await?;
    Ok((listener, hits))
}

/// A scripted feed host on loopback: the feed behind a redirect, a WebVTT and an SRT transcript, and
/// one transcript address that redirects to the cloud metadata address; and a show whose episodes
/// have no transcript ([`UNTRANSCRIBED`]), with their pages and audio.
pub async fn podcast_host() -> Result<PodcastHost> {
    let feed = std::fs::read_to_string(crate::root().join("tests/data/feeds/newsroom.xml")).unwrap();
    let page = r#"<!doctype html><html><head><title>Budget day</title>
        <link rel="alternate" type="application/rss+xml" href="/self/feed.xml"></head><body></body></html>"#;
    let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:06.000\n<v Rosa Quint>Good morning, this is the Morning Ledger.\n\n\
               00:00:06.500 --> 00:00:12.000\n<v Ines Varga>The harbour vote was never about the harbour.\n";
    let srt = "1\n00:00:01,000 --> 00:00:05,000\nThe trains stood still for a second day.\n\n\
               2\n00:00:05,500 --> 00:00:09,000\nNobody expected the union to hold.\n";
    let not_modified = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let state = (feed, vtt.to_string(), srt.to_string(), not_modified.clone());
    let listener = serve_requests(state, move |(feed, vtt, srt, not_modified), request, mut stream| async move {
        // The same feed with its episodes' pages on this host, for asking by a page.
        let host = request.host();
        let own_feed = feed
            .replace("https://ledger.example.org/episodes/", &format!("http://{host}/self/episodes/"));
        let _ = match request.path.as_str() {
            // A conditional GET that names this version is answered 304 (and counted).
            "/self/feed.xml"
                if request.headers.get("if-none-match").map(String::as_str) == Some(FEED_ETAG) =>
            {
                not_modified.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                respond(&mut stream, "304 Not Modified", &[("ETag", FEED_ETAG)], "").await
            }
            "/self/feed.xml" => {
                let headers = [("Content-Type", "application/rss+xml"), ("ETag", FEED_ETAG)];
                respond(&mut stream, "200 OK", &headers, &own_feed).await
            }
            path if path.starts_with("/self/episodes/") => {
                respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], page).await
            }
            // A show with no episodes yet.
            "/quiet/feed.xml" => {
                let body = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Quiet hour</title>\
                            <link>https://quiet.example.org/</link><description>Soon.</description></channel></rss>";
                let headers = [("Content-Type", "application/rss+xml"), ("ETag", "\"quiet\"")];
                respond(&mut stream, "200 OK", &headers, body).await
            }
            // The same show as `/self/`, its licence written in lower case as some feeds write it,
            // and its WebVTT without voice tags: every voice under one label.
            "/mono/feed.xml" => {
                let body = feed
                    .replace("https://ledger.example.org/episodes/", &format!("http://{host}/mono/episodes/"))
                    .replace("<podcast:license>CC-BY-4.0</podcast:license>", "<podcast:license>cc-by-4.0</podcast:license>")
                    .replace("/t/42.vtt", "/t/mono.vtt");
                respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &body).await
            }
            path if path.starts_with("/mono/episodes/") => {
                let page = r#"<!doctype html><html><head><title>Budget day</title>
                        <link rel="alternate" type="application/rss+xml" href="/mono/feed.xml"></head></html>"#;
                respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], page).await
            }
            "/t/mono.vtt" => {
                let untagged = vtt.replace("<v Rosa Quint>", "").replace("<v Ines Varga>", "");
                respond(&mut stream, "200 OK", &[("Content-Type", "text/vtt")], &untagged).await
            }
            // A show whose feed grants no licence this site publishes under, its episode without a
            // transcript: nothing may be bought for it.
            "/closed/feed.xml" => {
                let body = format!(
                    "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Closed Circle</title>\
                     <link>http://{host}/closed/</link><copyright>All rights reserved</copyright>\
                     <item><title>Behind closed doors</title><link>http://{host}/closed/episodes/doors</link>\
                     <guid>closed-1</guid><pubDate>Mon, 02 Nov 2026 06:00:00 +0000</pubDate>\
                     <enclosure url=\"http://{host}/audio/doors-600.wav\" length=\"4800044\" type=\"audio/wav\"/>\
                     </item></channel></rss>"
                );
                respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &body).await
            }
            path if path.starts_with("/closed/episodes/") => {
                let page = r#"<!doctype html><html><head><title>Closed</title>
                        <link rel="alternate" type="application/rss+xml" href="/closed/feed.xml"></head></html>"#;
                respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], page).await
            }
            // A redirect to the address the test names (`?to=`), for a target that must be checked.
            "/redirect" => {
                let to = request.query.get("to").cloned().unwrap_or_default();
                respond(&mut stream, "302 Found", &[("Location", to.as_str())], "").await
            }
            "/tx/feed.xml" => {
                let body = untranscribed_feed(&host);
                respond(&mut stream, "200 OK", &[("Content-Type", "application/rss+xml")], &body).await
            }
            path if path.starts_with("/tx/episodes/") => {
                let page = r#"<!doctype html><html><head><title>Harbour diary</title>
                        <link rel="alternate" type="application/rss+xml" href="/tx/feed.xml"></head></html>"#;
                respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], page).await
            }
            path if path.starts_with("/audio/") && path.ends_with(".wav") && !path.contains("gone") => {
                let (name, seconds) = path["/audio/".len()..].trim_end_matches(".wav").rsplit_once('-').unzip();
                let seconds: Option<u32> = seconds.and_then(|s| s.parse().ok());
                let body = wav(seconds.unwrap_or(3) * truly_longer(name.unwrap_or_default()));
                respond_bytes(&mut stream, "200 OK", &[("Content-Type", "audio/wav")], &body).await
            }
            path if path.starts_with("/audio/") && path.ends_with(".m4a") => {
                let (name, seconds) = path["/audio/".len()..].trim_end_matches(".m4a").rsplit_once('-').unzip();
                let seconds = seconds.and_then(|s| s.parse::<u32>().ok()).unwrap_or(3);
                let seconds = seconds * truly_longer(name.unwrap_or_default());
                let (body, from, total) = m4a_range(seconds, request.headers.get("range").map(String::as_str));
                let range = format!("bytes {from}-{}/{total}", from + body.len() as u64 - 1);
                let headers = [("Content-Type", "audio/mp4"), ("Content-Range", range.as_str())];
                respond_bytes(&mut stream, "206 Partial Content", &headers, &body).await
            }
            "/audio/99.mp3" => {
                respond(&mut stream, "200 OK", &[("Content-Type", "audio/mpeg")], "ID3").await
            }
            // A page over the 2 MiB a page may be.
            "/big" => {
                let big = "<p>a</p>".repeat(300_000);
                respond(&mut stream, "200 OK", &[("Content-Type", "text/html")], &big).await
            }
            // A share link to an episode's page, as newsletters and apps give them.
            path if path.starts_with("/tx/share/") => {
                let to = format!("/tx/episodes/{}", &path["/tx/share/".len()..]);
                respond(&mut stream, "302 Found", &[("Location", to.as_str())], "").await
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
    })
    .await?;
    Ok(PodcastHost { addr: listener.addr, not_modified, _listener: listener })
}
