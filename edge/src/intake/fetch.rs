//! Fetching the addresses users name, the Worker's side: `domain::site::outbound` checks each address
//! and each redirect (followed here by hand), and each answer is bounded in bytes and time by its
//! kind. Names are resolved by a DNS-over-HTTPS resolver before every fetch ([`Outbound`]); Cloudflare's
//! network does not route to private addresses besides. Loopback `host:port` pairs are allowed only
//! in a development run (`ENVIRONMENT=dev`, `FETCH_ALLOW_LOOPBACK`), which is how the tests reach their
//! scripted hosts.

use std::time::Duration;

use domain::quotes::intake::Answer;
use domain::site::outbound::{self, Allowance, Fetched};
use futures::StreamExt;
use futures::future::{Either, select};
use worker::{AbortController, Delay, Env, Fetch, Headers, Method, Request, RequestInit, RequestRedirect};

use crate::store::FeedValidators;

/// The loopback pairs a development run may fetch; none outside one.
pub fn allowance(env: &Env) -> Allowance {
    let dev = env.var("ENVIRONMENT").is_ok_and(|value| value.to_string() == "dev");
    let list = env.var("FETCH_ALLOW_LOOPBACK").map(|value| value.to_string()).unwrap_or_default();
    if !dev || list.trim().is_empty() {
        return Allowance::default();
    }
    Allowance::parse(&list).unwrap_or_default()
}

/// How the Worker fetches the addresses users give: the loopback pairs a development run may fetch,
/// and the DNS-over-HTTPS resolver every name is checked with before it is fetched.
pub struct Outbound {
    pub allowance: Allowance,
    /// `FETCH_RESOLVER`: a resolver that answers `application/dns-json` (Cloudflare's by default).
    resolver: String,
}

/// The resolver names are checked with when `FETCH_RESOLVER` names none.
pub const DEFAULT_RESOLVER: &str = "https://cloudflare-dns.com/dns-query";

/// How this Worker fetches users' addresses.
pub fn outbound(env: &Env) -> Outbound {
    let resolver = env.var("FETCH_RESOLVER").map(|value| value.to_string()).unwrap_or_default();
    let resolver = if resolver.trim().is_empty() { DEFAULT_RESOLVER.to_string() } else { resolver };
    Outbound { allowance: allowance(env), resolver }
}

impl Outbound {
    /// Refuses `url` when its host is a name that resolves, for any of its addresses, inside a
    /// network (`domain::site::outbound::check_resolved`): asked of the resolver before every fetch
    /// and every redirect. The platform then resolves the name again to connect; what it guarantees
    /// of that is in docs/deploy.md.
    pub async fn check_name(&self, url: &worker::Url) -> Result<(), String> {
        let Some(host) = outbound::name_to_resolve(url, &self.allowance) else { return Ok(()) };
        let host = host.trim_end_matches('.');
        let asks = outbound::ADDRESS_TYPES.map(|(kind, _)| self.ask_resolver(host, kind));
        let [a, aaaa] = futures::future::join_all(asks).await.try_into().expect("two asks");
        let (a, aaaa) = (a?, aaaa?);
        outbound::check_resolved(host, &[&a, &aaaa])
    }

    /// The resolver's JSON answer for `host`'s records of `kind`, within five seconds.
    async fn ask_resolver(&self, host: &str, kind: &str) -> Result<Vec<u8>, String> {
        let cannot =
            |why: String| format!("where {host} leads could not be checked ({why}): ask again later");
        let mut asked = worker::Url::parse(&self.resolver)
            .map_err(|_| cannot("FETCH_RESOLVER is not an address".into()))?;
        asked.query_pairs_mut().append_pair("name", host).append_pair("type", kind);
        let headers = Headers::new();
        headers.set("Accept", "application/dns-json").ok();
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        let request = Request::new_with_init(asked.as_str(), &init).map_err(|err| cannot(err.to_string()))?;
        let controller = AbortController::default();
        let signal = controller.signal();
        let answer = async {
            let mut response = Fetch::Request(request).send_with_signal(&signal).await.map_err(|err| {
                worker::console_warn!("asking {} about {host}: {err}", self.resolver);
                cannot("the resolver did not answer".into())
            })?;
            if response.status_code() != 200 {
                return Err(cannot(format!("the resolver answered HTTP {}", response.status_code())));
            }
            response.bytes().await.map_err(|err| cannot(err.to_string()))
        };
        within(Duration::from_secs(5), answer, controller)
            .await
            .unwrap_or_else(|| Err(cannot("the resolver took longer than 5 s".into())))
    }
}

/// Fetches an address of `kind` as untrusted: each redirect checked, each name resolved and checked
/// first, the body bounded in bytes and the whole in time. `Err` is a reason a person can act on.
pub async fn fetch(address: &str, kind: Fetched, outbound: &Outbound) -> Result<Answer, String> {
    fetch_if_changed(address, kind, outbound, &FeedValidators::default(), 0).await.map(|(answer, _)| answer)
}

/// [`fetch`] of a kind that [`Fetched::cuts`], from byte `from` of the file on.
pub async fn fetch_from(
    address: &str,
    kind: Fetched,
    outbound: &Outbound,
    from: u64,
) -> Result<Answer, String> {
    fetch_if_changed(address, kind, outbound, &FeedValidators::default(), from)
        .await
        .map(|(answer, _)| answer)
}

/// [`fetch`], conditional on `known` (a 304 answers when nothing changed), with the answer's own
/// validators.
pub(super) async fn fetch_if_changed(
    address: &str,
    kind: Fetched,
    outbound: &Outbound,
    known: &FeedValidators,
    from: u64,
) -> Result<(Answer, FeedValidators), String> {
    let allowance = &outbound.allowance;
    let mut url = outbound::check(address, allowance).map_err(|refusal| format!("{address}: {refusal}"))?;
    let limit = Duration::from_millis(kind.timeout_ms());
    let controller = AbortController::default();
    let signal = controller.signal();
    let reads = async {
        for followed in 0.. {
            outbound.check_name(&url).await?;
            let mut init = RequestInit::new();
            let headers = Headers::new();
            headers.set("User-Agent", "Commonplace intake (+https://commonplace.example/docs/quotes)").ok();
            if kind.cuts() {
                let to =
                    from.checked_add(kind.max_bytes() as u64 - 1).ok_or(format!("{url}: no such range"))?;
                headers.set("Range", &format!("bytes={from}-{to}")).ok();
            } else {
                headers.set("Accept-Encoding", "gzip").ok();
            }
            if let Some(etag) = &known.etag {
                headers.set("If-None-Match", etag).ok();
            }
            if let Some(date) = &known.last_modified {
                headers.set("If-Modified-Since", date).ok();
            }
            init.with_method(Method::Get).with_headers(headers).with_redirect(RequestRedirect::Manual);
            let request =
                Request::new_with_init(url.as_str(), &init).map_err(|err| format!("{url}: {err}"))?;
            let mut response = Fetch::Request(request).send_with_signal(&signal).await.map_err(|err| {
                // The platform's own words (`internal error; reference = …`) help no reader: they
                // go to the log, and the reason says what can be done.
                worker::console_warn!("fetching {url}: {err}");
                unreachable_reason(&url)
            })?;
            let status = response.status_code();
            if (300..400).contains(&status) && status != 304 {
                let location = response.headers().get("Location").ok().flatten();
                let location = location.ok_or_else(|| format!("{url} redirects nowhere"))?;
                url = outbound::redirect(&url, &location, followed, allowance)
                    .map_err(|refusal| format!("{url} redirects to {location}: {refusal}"))?;
                continue;
            }
            let header = |name: &str| response.headers().get(name).ok().flatten();
            let validators = FeedValidators { etag: header("ETag"), last_modified: header("Last-Modified") };
            let content_type = header("Content-Type").unwrap_or_default();
            // `Content-Range: bytes 0-65535/123456` names the whole of a part (206); a host that
            // ignored the range sends the whole (200), as long as `Content-Length` says.
            let size = match status {
                206 => {
                    header("Content-Range").and_then(|range| range.rsplit('/').next()?.trim().parse().ok())
                }
                _ => header("Content-Length").and_then(|length| length.parse().ok()),
            };
            let body = read_bounded(&mut response, kind, url.as_str()).await?;
            return Ok((Answer { url: url.to_string(), status, content_type, body, size }, validators));
        }
        unreachable!("the loop returns")
    };
    within(limit, reads, controller)
        .await
        .unwrap_or_else(|| Err(format!("{address}: {} took longer than {} s", kind.noun(), limit.as_secs())))
}

/// Why an address gave no answer at all, in words a reader can act on.
fn unreachable_reason(url: &worker::Url) -> String {
    format!(
        "{} could not be reached (its name is not known, or it did not answer): check the address, and if \
         it is right, ask again later",
        url.host_str().unwrap_or(url.as_str())
    )
}

/// What `call` answers within `limit`, else `None` and the fetches `controller` signals aborted.
pub(super) async fn within<T>(
    limit: Duration,
    call: impl std::future::Future<Output = T>,
    controller: AbortController,
) -> Option<T> {
    match select(std::pin::pin!(call), Delay::from(limit)).await {
        Either::Left((answer, _)) => Some(answer),
        Either::Right(((), _)) => {
            controller.abort();
            None
        }
    }
}

/// The body, refused when it is longer than `kind` allows (told by `Content-Length` or counted), or
/// cut there when `kind` [`Fetched::cuts`].
async fn read_bounded(response: &mut worker::Response, kind: Fetched, url: &str) -> Result<Vec<u8>, String> {
    let max = kind.max_bytes();
    let too_long = || format!("{url}: {} is larger than {} MiB", kind.noun(), max / (1024 * 1024));
    let told = response.headers().get("Content-Length").ok().flatten().and_then(|n| n.parse::<u64>().ok());
    if !kind.cuts() && told.is_some_and(|length| length > max as u64) {
        return Err(too_long());
    }
    let mut stream = response.stream().map_err(|err| format!("{url}: {err}"))?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| format!("{url}: the answer broke off: {err}"))?;
        if body.len() + chunk.len() > max {
            if kind.cuts() {
                body.extend_from_slice(&chunk[..max - body.len()]);
                break;
            }
            return Err(too_long());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
