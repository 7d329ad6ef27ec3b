//! Which hosts the site answers for: the configured site hosts (`SITE_HOSTS`) and loopback.
//!
//! The Worker refuses a request for any other host before routing it. Locally that is the DNS
//! rebinding defence (a page of `evil.example` whose name resolves to 127.0.0.1 reaches a loopback
//! server with `Host: evil.example`); deployed, it keeps every origin the Worker derives from the
//! request URL (same-origin checks, the OAuth callback) one the operator chose. Loopback is always
//! admitted: through Cloudflare no request can carry a loopback host, so admitting it costs nothing
//! deployed and needs no configuration locally.
//!
//! The list is comma-separated: a name (`recipes.example.org`) admits that host, and `*.` before a
//! name (`*.workers.dev`) admits every host ending in `.` and that name (not the name itself). Names
//! compare without case, port or a final dot.

use core::net::{IpAddr, Ipv6Addr};

/// The configured site hosts, parsed once per request from the `SITE_HOSTS` value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteHosts {
    /// Hosts admitted as they are.
    names: Vec<String>,
    /// Suffixes with their leading dot (`.workers.dev`): a host ending in one is admitted.
    suffixes: Vec<String>,
}

impl SiteHosts {
    /// Parses a comma-separated list; blank entries are skipped, so an empty value admits loopback only.
    pub fn parse(list: &str) -> SiteHosts {
        let mut hosts = SiteHosts::default();
        for entry in list.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
            match entry.strip_prefix("*.") {
                Some(suffix) => hosts.suffixes.push(format!(".{}", name_of(suffix))),
                None => hosts.names.push(name_of(entry)),
            }
        }
        hosts
    }

    /// Whether a request for `authority` (a `Host` header value or a URL's host, port optional) may be
    /// answered: it is loopback or one of the site hosts.
    pub fn admits(&self, authority: &str) -> bool {
        let host = name_of(authority);
        is_loopback_name(&host)
            || self.names.contains(&host)
            || self.suffixes.iter().any(|suffix| host.len() > suffix.len() && host.ends_with(suffix.as_str()))
    }
}

/// Whether `authority` names this machine: `localhost`, 127.0.0.0/8 or `::1` (also IPv4-mapped), with
/// or without a port. Only these may use what exists for development, such as the local sign-in.
pub fn is_loopback(authority: &str) -> bool {
    is_loopback_name(&name_of(authority))
}

fn is_loopback_name(host: &str) -> bool {
    if host == "localhost" {
        return true;
    }
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    match literal.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Err(_) => false,
    }
}

/// The host of an authority in one spelling: lower case, no port, no final dot; an IPv6 literal keeps
/// its brackets (`[::1]`), and a bare one (`::1`, as some callers pass it) gets them.
fn name_of(authority: &str) -> String {
    let authority = authority.trim();
    let host = if authority.starts_with('[') {
        // `[v6]` or `[v6]:port`: the literal ends at the bracket.
        authority.find(']').map_or(authority, |end| &authority[..=end])
    } else if authority.parse::<Ipv6Addr>().is_ok() {
        return format!("[{authority}]");
    } else {
        authority.rsplit_once(':').map_or(authority, |(host, _port)| host)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// Each authority, `admitted` or `refused` by `list`, with whether it is loopback.
    fn check(list: &str, authorities: &[&str], expect: Expect) {
        let hosts = SiteHosts::parse(list);
        let verdicts: Vec<String> = authorities
            .iter()
            .map(|authority| {
                let verdict = if hosts.admits(authority) { "admitted" } else { "refused" };
                let loopback = if is_loopback(authority) { " (loopback)" } else { "" };
                format!("{authority}: {verdict}{loopback}")
            })
            .collect();
        expect.assert_eq(&verdicts.join("\n"));
    }

    #[test]
    fn loopback_is_admitted_with_any_port_and_nothing_else_without_a_list() {
        check(
            "",
            &[
                "localhost",
                "LOCALHOST:8787",
                "localhost.",
                "127.0.0.1:8787",
                "127.8.9.1",
                "[::1]:8787",
                "[::1]",
                "::1",
                "[::ffff:127.0.0.1]",
                "evil.example.com",
                "evil.example.com:8787",
                "localhost.evil.example",
                "sub.localhost",
                "128.0.0.1",
                "[::2]:8787",
                "0.0.0.0",
                "",
            ],
            expect![[r#"
                localhost: admitted (loopback)
                LOCALHOST:8787: admitted (loopback)
                localhost.: admitted (loopback)
                127.0.0.1:8787: admitted (loopback)
                127.8.9.1: admitted (loopback)
                [::1]:8787: admitted (loopback)
                [::1]: admitted (loopback)
                ::1: admitted (loopback)
                [::ffff:127.0.0.1]: admitted (loopback)
                evil.example.com: refused
                evil.example.com:8787: refused
                localhost.evil.example: refused
                sub.localhost: refused
                128.0.0.1: refused
                [::2]:8787: refused
                0.0.0.0: refused
                : refused"#]],
        );
    }

    #[test]
    fn site_hosts_admit_their_names_and_wildcards_admit_subdomains_only() {
        check(
            " Recipes.Example.org , *.workers.dev,,[2001:db8::1]",
            &[
                "recipes.example.org",
                "RECIPES.example.org.:443",
                "www.recipes.example.org",
                "example.org",
                "commonplace.cook.workers.dev",
                "abc123-commonplace.cook.workers.dev",
                "workers.dev",
                "evilworkers.dev",
                "[2001:db8::1]:443",
                "2001:db8::1",
                "[2001:db8::2]",
                "localhost:8787",
            ],
            expect![[r#"
                recipes.example.org: admitted
                RECIPES.example.org.:443: admitted
                www.recipes.example.org: refused
                example.org: refused
                commonplace.cook.workers.dev: admitted
                abc123-commonplace.cook.workers.dev: admitted
                workers.dev: refused
                evilworkers.dev: refused
                [2001:db8::1]:443: admitted
                2001:db8::1: admitted
                [2001:db8::2]: refused
                localhost:8787: admitted (loopback)"#]],
        );
    }
}
