//! Fetching the addresses a user gives, as `domain::site::outbound` rules: each redirect followed by
//! hand and checked, each name checked where it is resolved (so a rebinding name cannot pass and then
//! connect inside), each body refused past its kind's size, each fetch bounded in time. Only a
//! development run (`ENVIRONMENT=dev`) may fetch the loopback pairs of `FETCH_ALLOW_LOOPBACK`.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use domain::site::outbound::{self, Allowance, Fetched};
use reqwest::Url;

/// The loopback pairs a development run may fetch; refused outside one.
pub fn allowance() -> Result<Allowance> {
    let list = std::env::var("FETCH_ALLOW_LOOPBACK").unwrap_or_default();
    if list.trim().is_empty() {
        return Ok(Allowance::default());
    }
    if std::env::var("ENVIRONMENT").as_deref() != Ok("dev") {
        bail!("FETCH_ALLOW_LOOPBACK is honoured only in a development run (ENVIRONMENT=dev)");
    }
    Allowance::parse(&list).map_err(anyhow::Error::msg)
}

/// What a fetch answered.
#[derive(Debug)]
pub struct Response {
    /// The address that answered, after the redirects.
    pub url: Url,
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Fetches addresses a user gave.
pub struct Fetcher {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    allowance: Allowance,
}

impl Fetcher {
    pub fn new(allowance: Allowance) -> Result<Fetcher> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("commonplace-builder/", env!("CARGO_PKG_VERSION")))
            // Each redirect is checked before it is followed.
            .redirect(reqwest::redirect::Policy::none())
            // Through a proxy the proxy would resolve the names, past the check below.
            .no_proxy()
            .dns_resolver(Arc::new(CheckedResolver { allowance: allowance.clone() }))
            .build()?;
        Ok(Fetcher { runtime, client, allowance })
    }

    /// The final address and the body of `address`, within the bounds of `kind`; an answer other than
    /// 2xx is an error.
    pub fn get(&self, address: &str, kind: Fetched) -> Result<(Url, Vec<u8>)> {
        let response = self.fetch(address, kind)?;
        if !(200..300).contains(&response.status) {
            bail!("{} answered HTTP {}", response.url, response.status);
        }
        Ok((response.url, response.body))
    }

    /// What `address` answers, redirects followed, within the bounds of `kind`.
    pub fn fetch(&self, address: &str, kind: Fetched) -> Result<Response> {
        let mut body = Vec::new();
        let (url, status, content_type) = self.stream(address, kind, &mut body)?;
        Ok(Response { url, status, content_type, body })
    }

    /// `address`'s body written into `sink` as it arrives (a file: a long audio file is never held in
    /// memory), within the bounds of `kind`; the final address. An answer other than 2xx is an error.
    pub fn download(&self, address: &str, kind: Fetched, sink: &mut dyn Write) -> Result<Url> {
        let (url, status, _) = self.stream(address, kind, sink)?;
        if !(200..300).contains(&status) {
            bail!("{url} answered HTTP {status}");
        }
        Ok(url)
    }

    /// The final address, status and content type of `address`; its body goes into `sink`.
    fn stream(&self, address: &str, kind: Fetched, sink: &mut dyn Write) -> Result<(Url, u16, String)> {
        let mut url = outbound::check(address, &self.allowance)
            .map_err(|refusal| anyhow::anyhow!("{address}: {refusal}"))?;
        let limit = Duration::from_millis(kind.timeout_ms());
        self.runtime.block_on(async {
            tokio::time::timeout(limit, async {
                for followed in 0.. {
                    let response =
                        self.client.get(url.clone()).send().await.with_context(|| format!("{url}"))?;
                    if response.status().is_redirection() {
                        let location = response
                            .headers()
                            .get(reqwest::header::LOCATION)
                            .and_then(|value| value.to_str().ok())
                            .with_context(|| format!("{url} redirects nowhere"))?;
                        url = outbound::redirect(&url, location, followed, &self.allowance)
                            .map_err(|refusal| anyhow::anyhow!("{url} redirects to {location}: {refusal}"))?;
                        continue;
                    }
                    let status = response.status().as_u16();
                    let content_type = response
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    read_bounded(response, kind, &url, sink).await?;
                    return Ok((url.clone(), status, content_type));
                }
                unreachable!("the loop returns")
            })
            .await
            .map_err(|_| {
                anyhow::anyhow!("{address}: {} took longer than {} s", kind.noun(), limit.as_secs())
            })?
        })
    }
}

/// The body into `sink`, refused when it is longer than `kind` allows (told by `Content-Length` or
/// counted).
async fn read_bounded(
    mut response: reqwest::Response,
    kind: Fetched,
    url: &Url,
    sink: &mut dyn Write,
) -> Result<()> {
    let max = kind.max_bytes();
    let too_long = || anyhow::anyhow!("{url}: {} is larger than {} MiB", kind.noun(), max / (1024 * 1024));
    if response.content_length().is_some_and(|length| length > max as u64) {
        return Err(too_long());
    }
    let mut read = 0;
    while let Some(chunk) = response.chunk().await.with_context(|| format!("{url}"))? {
        read += chunk.len();
        if read > max {
            return Err(too_long());
        }
        sink.write_all(&chunk).context("writing what was fetched")?;
    }
    Ok(())
}

/// Resolves names, refusing one that resolves to an address inside a network (a name is checked where
/// it is resolved: a rebinding name cannot pass the address check and then connect inside).
struct CheckedResolver {
    allowance: Allowance,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allowed = self.allowance.names_host(&host);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allowed {
                for addr in &addrs {
                    outbound::check_ip(addr.ip())
                        .map_err(|refusal| format!("{host} resolves to {refusal}"))?;
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}
