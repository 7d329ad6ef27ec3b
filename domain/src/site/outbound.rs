//! Fetching an address a user gave us: which addresses may be fetched, how many redirects are
//! followed, and how many bytes are read of each kind of document.
//!
//! An address is untrusted: `http` or `https` only, no user name or password in it, and no host
//! that reaches inside a network — loopback, private, shared (CGNAT), link-local (with the cloud
//! metadata address 169.254.169.254), unspecified, multicast, documentation and reserved ranges, in
//! IPv4 and IPv6 alike; an IPv4 address written inside IPv6 is judged as itself behind NAT64 and 6to4,
//! and refused outright when mapped or compatible (no honest feed needs that); names that only
//! a local resolver answers (`localhost`, `*.localhost`, `*.local`, `*.internal`, names without a
//! dot). The `url` crate parses hosts as browsers do, so `http://2130706433/` and
//! `http://0x7f.1/` are the loopback address they mean. Each redirect's target is checked again,
//! at most [`MAX_REDIRECTS`] of them. A name that resolves to a forbidden address is refused where
//! the name is resolved: by the native builder's resolver, and on Cloudflare by the platform, whose
//! fetch never reaches a private network.
//!
//! A development run (and only it: a deploy refuses the setting) may name loopback `host:port`
//! pairs it is allowed to fetch ([`Allowance`]), so scripted stand-ins for feed hosts and
//! transcription services can run on this machine.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// The most redirects followed for one fetch; each target is checked as the first address was.
pub const MAX_REDIRECTS: usize = 5;

/// What is fetched, which bounds how much of it is read and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetched {
    /// An RSS feed.
    Feed,
    /// An episode's web page, read for its feed link.
    Page,
    /// A publisher's transcript (WebVTT, Podcasting 2.0 JSON, SRT).
    Transcript,
    /// The first bytes of an episode's audio, read to measure its length.
    AudioHead,
    /// An episode's whole audio, which the builder reads for its speakers' voices (three hours at
    /// 320 kbit/s fit).
    Audio,
}

impl Fetched {
    /// The most bytes read; a longer body is refused, not cut, except by [`Fetched::cuts`].
    pub fn max_bytes(self) -> usize {
        match self {
            Fetched::Feed => 10 * 1024 * 1024,
            Fetched::Page => 2 * 1024 * 1024,
            Fetched::Transcript => 20 * 1024 * 1024,
            Fetched::AudioHead => 64 * 1024,
            Fetched::Audio => 512 * 1024 * 1024,
        }
    }

    /// Whether the body is cut at [`Fetched::max_bytes`] (asked for as a `Range`) rather than refused.
    pub fn cuts(self) -> bool {
        self == Fetched::AudioHead
    }

    /// The most time one fetch (redirects included) may take, in milliseconds.
    pub fn timeout_ms(self) -> u64 {
        match self {
            Fetched::Feed | Fetched::Transcript => 20_000,
            Fetched::Page | Fetched::AudioHead => 10_000,
            Fetched::Audio => 600_000,
        }
    }

    /// What a person reads in a refusal: "the feed", "the page", "the transcript".
    pub fn noun(self) -> &'static str {
        match self {
            Fetched::Feed => "the feed",
            Fetched::Page => "the page",
            Fetched::Transcript => "the transcript",
            Fetched::AudioHead | Fetched::Audio => "the audio",
        }
    }
}

/// The loopback `host:port` pairs a development run may fetch (`FETCH_ALLOW_LOOPBACK`); empty in
/// every deploy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowance {
    pairs: Vec<(String, u16)>,
}

impl Allowance {
    /// From a comma-separated list of `host:port` (`127.0.0.1:9001,localhost:9002`); an entry that is
    /// not a loopback host with a port is named in the error.
    pub fn parse(list: &str) -> Result<Allowance, String> {
        let mut pairs = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
            let url = Url::parse(&format!("http://{entry}/"))
                .map_err(|_| format!("FETCH_ALLOW_LOOPBACK: `{entry}` is not host:port"))?;
            // `url` drops a scheme's default port: read the port as written.
            let port = entry.rsplit_once(':').and_then(|(_, port)| port.parse::<u16>().ok());
            let (Some(host), Some(port)) = (url.host(), port) else {
                return Err(format!("FETCH_ALLOW_LOOPBACK: `{entry}` needs a port"));
            };
            if !is_loopback_host(&host) {
                return Err(format!("FETCH_ALLOW_LOOPBACK: `{entry}` is not a loopback address"));
            }
            pairs.push((host.to_string(), port));
        }
        Ok(Allowance { pairs })
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Whether a pair names `host` (with any port): a resolver may let the name resolve to loopback,
    /// the port having been checked with the address.
    pub fn names_host(&self, host: &str) -> bool {
        self.pairs.iter().any(|(allowed, _)| allowed == host)
    }

    fn admits(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else { return false };
        self.pairs.iter().any(|(allowed, allowed_port)| allowed == host && *allowed_port == port)
    }
}

/// Why an address is not fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NotAnAddress(String),
    Scheme(String),
    Credentials,
    /// The host reaches inside a network: the host, and which range it is in.
    Inside {
        host: String,
        range: &'static str,
    },
    TooManyRedirects,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Refusal::NotAnAddress(why) => write!(f, "not a web address: {why}"),
            Refusal::Scheme(scheme) => write!(f, "only http and https addresses are fetched, not {scheme}:"),
            Refusal::Credentials => write!(f, "an address with a user name or password in it is not fetched"),
            Refusal::Inside { host, range } => {
                write!(f, "{host}: {range} address, never fetched for a user")
            }
            Refusal::TooManyRedirects => write!(f, "more than {MAX_REDIRECTS} redirects"),
        }
    }
}

/// The address as it will be fetched, or why it will not be. `allowance` is the development run's
/// loopback pairs (empty in a deploy).
pub fn check(address: &str, allowance: &Allowance) -> Result<Url, Refusal> {
    let url = Url::parse(address.trim()).map_err(|err| Refusal::NotAnAddress(err.to_string()))?;
    check_url(&url, allowance)?;
    Ok(url)
}

/// The target of a redirect from `from` (its `Location`, which may be relative), checked as a first
/// address is; `followed` counts the redirects before this one.
pub fn redirect(from: &Url, location: &str, followed: usize, allowance: &Allowance) -> Result<Url, Refusal> {
    if followed >= MAX_REDIRECTS {
        return Err(Refusal::TooManyRedirects);
    }
    let url = from.join(location.trim()).map_err(|err| Refusal::NotAnAddress(err.to_string()))?;
    check_url(&url, allowance)?;
    Ok(url)
}

fn check_url(url: &Url, allowance: &Allowance) -> Result<(), Refusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::Scheme(url.scheme().to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::Credentials);
    }
    let Some(host) = url.host() else { return Err(Refusal::NotAnAddress("it names no host".into())) };
    if allowance.admits(url) {
        return Ok(());
    }
    let inside = match &host {
        Host::Domain(name) => local_name(name),
        Host::Ipv4(ip) => v4_range(*ip),
        Host::Ipv6(ip) => v6_range(*ip),
    };
    match inside {
        Some(range) => Err(Refusal::Inside { host: host.to_string(), range }),
        None => Ok(()),
    }
}

/// Whether an IP address a name resolved to may be fetched: the native builder's resolver asks.
pub fn check_ip(ip: IpAddr) -> Result<(), Refusal> {
    let range = match ip {
        IpAddr::V4(ip) => v4_range(ip),
        IpAddr::V6(ip) => v6_range(ip),
    };
    match range {
        Some(range) => Err(Refusal::Inside { host: ip.to_string(), range }),
        None => Ok(()),
    }
}

/// The name the caller must resolve and check before fetching `url` ([`check_resolved`]): its host
/// when it is a name rather than an address, and not one of the development run's loopback pairs.
pub fn name_to_resolve<'u>(url: &'u Url, allowance: &Allowance) -> Option<&'u str> {
    match url.host() {
        Some(Host::Domain(name)) if !allowance.admits(url) => Some(name),
        _ => None,
    }
}

/// The DNS record types a name's addresses come in: A and AAAA.
pub const ADDRESS_TYPES: [(&str, u16); 2] = [("A", 1), ("AAAA", 28)];

/// What a DNS-over-HTTPS resolver answered for `host`, in the JSON form Cloudflare's and Google's
/// resolvers give (`application/dns-json`: `Status`, and `Answer` records with `type` and `data`),
/// one answer for each of [`ADDRESS_TYPES`]: `Ok` when the name has an address and every address it
/// has may be fetched; otherwise why not, in words. A name with any address inside a network is
/// refused whatever its other addresses: the connection may go to any of them.
pub fn check_resolved(host: &str, answers: &[&[u8]]) -> Result<(), String> {
    let mut n_addresses = 0;
    for body in answers {
        let answer: serde_json::Value = serde_json::from_slice(body).map_err(|_| {
            format!("where {host} leads could not be checked (the resolver's answer is not JSON)")
        })?;
        match answer.get("Status").and_then(serde_json::Value::as_u64) {
            Some(0) => {}
            // NXDOMAIN: no such name.
            Some(3) => continue,
            status => {
                return Err(format!(
                    "where {host} leads could not be checked (the resolver answered status {})",
                    status.map_or("none".to_string(), |status| status.to_string())
                ));
            }
        }
        let records =
            answer.get("Answer").and_then(serde_json::Value::as_array).map_or(&[][..], Vec::as_slice);
        for record in records {
            let kind = record.get("type").and_then(serde_json::Value::as_u64);
            if !ADDRESS_TYPES.iter().any(|(_, code)| Some(u64::from(*code)) == kind) {
                continue;
            }
            let data = record.get("data").and_then(serde_json::Value::as_str).unwrap_or_default();
            let ip: IpAddr = data.trim().parse().map_err(|_| {
                format!("where {host} leads could not be checked (`{data}` is not an address)")
            })?;
            check_ip(ip).map_err(|refusal| format!("{host} resolves to {refusal}"))?;
            n_addresses += 1;
        }
    }
    if n_addresses == 0 {
        return Err(format!(
            "{host} could not be reached: no address is known for its name; check the address"
        ));
    }
    Ok(())
}

fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => local_name(name) == Some("loopback"),
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// A name only a local resolver answers.
fn local_name(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        Some("loopback")
    } else if name.ends_with(".local") || name.ends_with(".internal") || name.ends_with(".home.arpa") {
        Some("local-network")
    } else if !name.contains('.') {
        Some("single-label (local-network)")
    } else {
        None
    }
}

/// The range of a forbidden IPv4 address (RFC 6890's special-purpose registry), or `None` for a
/// globally reachable one.
fn v4_range(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) => "unspecified (this-network)",
        (127, ..) => "loopback",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "private",
        (100, 64..=127, _) => "shared (carrier-grade NAT)",
        (169, 254, _) => "link-local (cloud metadata)",
        (192, 0, 0) => "IETF protocol",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (192, 88, 99) => "6to4 relay",
        (224..=239, ..) => "multicast",
        (240..=255, ..) => "reserved",
        _ => return None,
    })
}

/// The range of a forbidden IPv6 address, an IPv4 address inside it judged as IPv4, or `None` for
/// a global unicast one.
fn v6_range(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded_v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return v4_range(embedded_v4(s[6], s[7])).or(Some("IPv4-in-IPv6"));
    }
    // NAT64: the well-known prefix 64:ff9b::/96 translates to the IPv4 address in its last 32 bits;
    // the local-use 64:ff9b:1::/48 (RFC 8215) reaches a translator's own network, and anything else
    // under 64:ff9b::/32 is not an assigned form.
    if s[0] == 0x64 && s[1] == 0xff9b {
        if s[2..6] == [0; 4] {
            return v4_range(embedded_v4(s[6], s[7]));
        }
        return Some(if s[2] == 1 { "local-use NAT64" } else { "reserved" });
    }
    // 6to4 2002:a.b.c.d::/48 reaches the IPv4 address inside.
    if s[0] == 0x2002 {
        return v4_range(embedded_v4(s[1], s[2]));
    }
    Some(match s[0] {
        0xfc00..=0xfdff => "unique local (private)",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "site-local",
        0xff00..=0xffff => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x2001 if s[1] < 0x0200 => "IETF protocol (Teredo, benchmarking)",
        0x0100 if s[1..4] == [0, 0, 0] => "discard",
        0x2000..=0x3fff => return None,
        _ => "reserved",
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn verdicts(addresses: &[&str], allowance: &Allowance) -> String {
        addresses
            .iter()
            .map(|address| match check(address, allowance) {
                Ok(url) => format!("{address}: fetched as {url}\n"),
                Err(refusal) => format!("{address}: {refusal}\n"),
            })
            .collect()
    }

    #[test]
    fn addresses_inside_a_network_are_never_fetched_however_they_are_written() {
        let addresses = [
            "https://feeds.example.com/show.xml",
            "http://93.184.215.14/feed",
            "http://[2606:4700::6810:84e5]/feed",
            "ftp://example.com/feed",
            "file:///etc/passwd",
            "https://user:secret@example.com/feed",
            "http://localhost:8787/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://printer.local/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://intranet/",
            "http://127.0.0.1/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://0.0.0.0/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://172.31.255.255/",
            "http://172.32.0.1/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://[::1]/",
            "http://[::]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:93.184.215.14]/",
            "http://[64:ff9b::a00:1]/",
            "http://[64:ff9b::808:808]/",
            "http://[64:ff9b:1:a00:0:100:808:808]/",
            "http://[2002:c0a8:101::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[ff02::1]/",
            "http://[2001:db8::1]/",
            "not an address",
        ];
        expect![[r#"
            https://feeds.example.com/show.xml: fetched as https://feeds.example.com/show.xml
            http://93.184.215.14/feed: fetched as http://93.184.215.14/feed
            http://[2606:4700::6810:84e5]/feed: fetched as http://[2606:4700::6810:84e5]/feed
            ftp://example.com/feed: only http and https addresses are fetched, not ftp:
            file:///etc/passwd: only http and https addresses are fetched, not file:
            https://user:secret@example.com/feed: an address with a user name or password in it is not fetched
            http://localhost:8787/: localhost: loopback address, never fetched for a user
            http://LOCALHOST./: localhost.: loopback address, never fetched for a user
            http://api.localhost/: api.localhost: loopback address, never fetched for a user
            http://printer.local/: printer.local: local-network address, never fetched for a user
            http://metadata.google.internal/computeMetadata/v1/: metadata.google.internal: local-network address, never fetched for a user
            http://intranet/: intranet: single-label (local-network) address, never fetched for a user
            http://127.0.0.1/: 127.0.0.1: loopback address, never fetched for a user
            http://127.1/: 127.0.0.1: loopback address, never fetched for a user
            http://2130706433/: 127.0.0.1: loopback address, never fetched for a user
            http://0x7f000001/: 127.0.0.1: loopback address, never fetched for a user
            http://0177.0.0.1/: 127.0.0.1: loopback address, never fetched for a user
            http://0.0.0.0/: 0.0.0.0: unspecified (this-network) address, never fetched for a user
            http://10.1.2.3/: 10.1.2.3: private address, never fetched for a user
            http://172.16.0.1/: 172.16.0.1: private address, never fetched for a user
            http://172.31.255.255/: 172.31.255.255: private address, never fetched for a user
            http://172.32.0.1/: fetched as http://172.32.0.1/
            http://192.168.1.1/: 192.168.1.1: private address, never fetched for a user
            http://100.64.0.1/: 100.64.0.1: shared (carrier-grade NAT) address, never fetched for a user
            http://169.254.169.254/latest/meta-data/: 169.254.169.254: link-local (cloud metadata) address, never fetched for a user
            http://224.0.0.1/: 224.0.0.1: multicast address, never fetched for a user
            http://255.255.255.255/: 255.255.255.255: reserved address, never fetched for a user
            http://[::1]/: [::1]: loopback address, never fetched for a user
            http://[::]/: [::]: unspecified address, never fetched for a user
            http://[::ffff:127.0.0.1]/: [::ffff:7f00:1]: loopback address, never fetched for a user
            http://[::ffff:169.254.169.254]/: [::ffff:a9fe:a9fe]: link-local (cloud metadata) address, never fetched for a user
            http://[::ffff:93.184.215.14]/: [::ffff:5db8:d70e]: IPv4-in-IPv6 address, never fetched for a user
            http://[64:ff9b::a00:1]/: [64:ff9b::a00:1]: private address, never fetched for a user
            http://[64:ff9b::808:808]/: fetched as http://[64:ff9b::808:808]/
            http://[64:ff9b:1:a00:0:100:808:808]/: [64:ff9b:1:a00:0:100:808:808]: local-use NAT64 address, never fetched for a user
            http://[2002:c0a8:101::1]/: [2002:c0a8:101::1]: private address, never fetched for a user
            http://[fd00::1]/: [fd00::1]: unique local (private) address, never fetched for a user
            http://[fe80::1]/: [fe80::1]: link-local address, never fetched for a user
            http://[ff02::1]/: [ff02::1]: multicast address, never fetched for a user
            http://[2001:db8::1]/: [2001:db8::1]: documentation address, never fetched for a user
            not an address: not a web address: relative URL without a base
        "#]]
        .assert_eq(&verdicts(&addresses, &Allowance::default()));
    }

    #[test]
    fn a_development_run_may_fetch_the_loopback_pairs_it_names_and_no_others() {
        let allowance = Allowance::parse("127.0.0.1:9001, localhost:9002").unwrap();
        let addresses = [
            "http://127.0.0.1:9001/feed.xml",
            "http://localhost:9002/x",
            "http://127.0.0.1:9003/",
            "http://10.0.0.1:9001/",
        ];
        expect![[r#"
            http://127.0.0.1:9001/feed.xml: fetched as http://127.0.0.1:9001/feed.xml
            http://localhost:9002/x: fetched as http://localhost:9002/x
            http://127.0.0.1:9003/: 127.0.0.1: loopback address, never fetched for a user
            http://10.0.0.1:9001/: 10.0.0.1: private address, never fetched for a user
        "#]]
        .assert_eq(&verdicts(&addresses, &allowance));
        assert_eq!(
            Allowance::parse("10.0.0.1:80").unwrap_err(),
            "FETCH_ALLOW_LOOPBACK: `10.0.0.1:80` is not a loopback address"
        );
        assert_eq!(
            Allowance::parse("127.0.0.1").unwrap_err(),
            "FETCH_ALLOW_LOOPBACK: `127.0.0.1` needs a port"
        );
        assert!(Allowance::parse(" ").unwrap().is_empty());
    }

    #[test]
    fn each_redirect_is_checked_and_the_sixth_is_refused() {
        let none = Allowance::default();
        let from = check("https://feeds.example.com/a/show.xml", &none).unwrap();
        assert_eq!(
            redirect(&from, "../b/show.xml", 0, &none).unwrap().as_str(),
            "https://feeds.example.com/b/show.xml"
        );
        assert_eq!(
            redirect(&from, "http://169.254.169.254/", 1, &none).unwrap_err().to_string(),
            "169.254.169.254: link-local (cloud metadata) address, never fetched for a user"
        );
        assert_eq!(redirect(&from, "/c", MAX_REDIRECTS, &none), Err(Refusal::TooManyRedirects));
        assert!(check_ip("10.0.0.7".parse().unwrap()).is_err());
        assert!(check_ip("93.184.215.14".parse().unwrap()).is_ok());
    }

    /// A host name that resolves to loopback or a private address was fetched by the Worker: a name
    /// is judged by every address the resolver gives it.
    #[test]
    fn a_name_is_judged_by_every_address_it_resolves_to() {
        let a = |data: &str| {
            format!(r#"{{"Status":0,"Answer":[{{"name":"x","type":1,"TTL":60,"data":"{data}"}}]}}"#)
        };
        let aaaa = |data: &str| {
            format!(
                r#"{{"Status":0,"Answer":[{{"type":5,"data":"cdn.example."}},{{"type":28,"data":"{data}"}}]}}"#
            )
        };
        let none = r#"{"Status":0}"#.to_string();
        let nx = r#"{"Status":3}"#.to_string();
        let check = |answers: [&String; 2]| {
            check_resolved("trap.newsroom.test", &[answers[0].as_bytes(), answers[1].as_bytes()])
        };
        assert_eq!(check([&a("93.184.215.14"), &aaaa("2606:2800:21f:cb07:6820:80da:af6b:8b2c")]), Ok(()));
        assert_eq!(
            check([&a("127.0.0.1"), &none]),
            Err("trap.newsroom.test resolves to 127.0.0.1: loopback address, never fetched for a user".into())
        );
        assert_eq!(
            check([&a("93.184.215.14"), &aaaa("::ffff:10.0.0.7")]),
            Err("trap.newsroom.test resolves to ::ffff:10.0.0.7: private address, never fetched for a user"
                .into()),
            "one address inside is enough"
        );
        assert!(check([&nx, &nx]).unwrap_err().contains("no address is known"));
        assert!(check([&r#"{"Status":2}"#.to_string(), &none]).unwrap_err().contains("status 2"));
        assert!(check([&"<html>".to_string(), &none]).unwrap_err().contains("not JSON"));
        let url = Url::parse("http://trap.newsroom.test:8803/x").unwrap();
        assert_eq!(name_to_resolve(&url, &Allowance::default()), Some("trap.newsroom.test"));
        let literal = Url::parse("http://93.184.215.14/x").unwrap();
        assert_eq!(name_to_resolve(&literal, &Allowance::default()), None, "an address is judged as written");
        let allowed = Allowance::parse("localhost:8803").unwrap();
        assert_eq!(name_to_resolve(&Url::parse("http://localhost:8803/").unwrap(), &allowed), None);
    }
}
