//! Source URLs and episode ids: any spelling of an episode's address finds the same episode.
//!
//! Normalising (DESIGN.md §3): lower-case scheme and host, no `www.`, no fragment, no `utm_*`
//! parameters, no trailing slash. We also treat `http` as `https` and a missing scheme as `https`,
//! since a person pasting an address means the same page either way. The id is `ep_` plus the first
//! ten lower-case base32 characters of the SHA-256 of the normalised URL, so the Worker can find an
//! episode's files from any spelling of its URL without an index lookup.
//!
//! Parsing is the `url` crate's (the WHATWG URL standard, what browsers do): it maps a Unicode host to
//! its IDNA (punycode) form, lower-cases and percent-decodes hosts, drops default ports, resolves `.`
//! and `..` segments and escapes what an address may not hold raw. On top of that we decode escaped
//! unreserved characters (RFC 3986 §6.2.2.2) and write the remaining escapes in upper case
//! (§6.2.2.1), which WHATWG leaves as typed. A hand-written parser did all this before issue 18 and
//! missed the last two and IDNA; every id it published is unchanged (tests in `builder`).

use std::fmt::Write;

use sha2::{Digest, Sha256};
use url::Url;

/// The normalised form of an episode's source URL, or `None` when it is not an http(s) URL with a host.
pub fn normalise_source_url(url: &str) -> Option<String> {
    let url = url.trim();
    let parsed =
        if has_scheme(url) { Url::parse(url) } else { Url::parse(&format!("https://{url}")) }.ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?;
    let host = host.strip_prefix("www.").unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    let mut normalised = format!("https://{host}");
    // 80 and 443 both go, whichever scheme was written: http becomes https.
    if let Some(port) = parsed.port().filter(|port| !matches!(port, 80 | 443)) {
        write!(normalised, ":{port}").expect("writing to a String");
    }
    normalised.push_str(decode_unreserved(parsed.path()).trim_end_matches('/'));
    let params: Vec<String> = parsed
        .query()
        .into_iter()
        .flat_map(|query| query.split('&'))
        .map(decode_unreserved)
        .filter(|param| !param.is_empty() && !param.to_ascii_lowercase().starts_with("utm_"))
        .collect();
    if !params.is_empty() {
        normalised.push('?');
        normalised.push_str(&params.join("&"));
    }
    Some(normalised)
}

/// Whether `url` starts with `scheme://`. Without one it is a bare address such as
/// `changelog.com/gotime/52` (which the URL standard would read as the scheme `changelog.com` when a
/// port follows), so it gets `https://`.
fn has_scheme(url: &str) -> bool {
    url.split_once("://").is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Escaped unreserved characters (ALPHA / DIGIT / `-` `.` `_` `~`, RFC 3986 §2.3) decoded, since `%67`
/// and `g` are the same address; every other escape kept, with upper-case hex digits, since `%2F` is
/// not `/`. `percent-encoding` decodes every escape or none, so this one walk stays ours.
fn decode_unreserved(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 1..at + 3).filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(hex) = hex else {
            // A lone `%` (the URL standard lets it through): kept as it is.
            out.push('%');
            rest = &rest[at + 1..];
            continue;
        };
        let byte = u8::from_str_radix(hex, 16).expect("two hex digits");
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push_str(&hex.to_ascii_uppercase());
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

/// `ep_` + 10 lower-case base32 characters of SHA-256 of the normalised URL.
pub fn episode_id(normalised_url: &str) -> String {
    let digest = Sha256::digest(normalised_url.as_bytes());
    let code = data_encoding::BASE32_NOPAD.encode(&digest).to_ascii_lowercase();
    format!("ep_{}", &code[..10])
}

/// Whether `id` has the form of an episode id (it may still name no episode).
pub fn is_episode_id(id: &str) -> bool {
    id.strip_prefix("ep_").is_some_and(|code| {
        code.len() == 10 && code.chars().all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    /// Each spelling with what it normalises to; one line per spelling, so a table reads as a list of
    /// addresses that are the same (or not) and the regression is in the line that changed.
    fn check(spellings: &[&str], expect: Expect) {
        let lines: Vec<String> = spellings
            .iter()
            .map(|spelling| {
                let normalised = normalise_source_url(spelling);
                format!("{spelling:?} -> {}", normalised.as_deref().unwrap_or("(not an episode address)"))
            })
            .collect();
        expect.assert_eq(&(lines.join("\n") + "\n"));
    }

    #[test]
    fn spellings_of_one_url_normalise_alike() {
        check(
            &[
                "https://changelog.com/gotime/52",
                "HTTPS://WWW.Changelog.com/gotime/52/",
                "http://changelog.com/gotime/52#transcript",
                "https://changelog.com/gotime/52?utm_source=x&utm_medium=y",
                "https://changelog.com/gotime/52?UTM_Campaign=z&",
                "changelog.com/gotime/52",
                " https://changelog.com:443/gotime/52 ",
                "http://changelog.com:80/gotime/52//",
                "https://someone@changelog.com/gotime/52",
                "https://changelog.com/gotime/./episodes/../52",
                "https:///changelog.com/gotime/52",
            ],
            expect![[r#"
                "https://changelog.com/gotime/52" -> https://changelog.com/gotime/52
                "HTTPS://WWW.Changelog.com/gotime/52/" -> https://changelog.com/gotime/52
                "http://changelog.com/gotime/52#transcript" -> https://changelog.com/gotime/52
                "https://changelog.com/gotime/52?utm_source=x&utm_medium=y" -> https://changelog.com/gotime/52
                "https://changelog.com/gotime/52?UTM_Campaign=z&" -> https://changelog.com/gotime/52
                "changelog.com/gotime/52" -> https://changelog.com/gotime/52
                " https://changelog.com:443/gotime/52 " -> https://changelog.com/gotime/52
                "http://changelog.com:80/gotime/52//" -> https://changelog.com/gotime/52
                "https://someone@changelog.com/gotime/52" -> https://changelog.com/gotime/52
                "https://changelog.com/gotime/./episodes/../52" -> https://changelog.com/gotime/52
                "https:///changelog.com/gotime/52" -> https://changelog.com/gotime/52
            "#]],
        );
        check(
            &["https://ex.com/ep?id=4&utm_campaign=z", "https://ex.com:8080/ep"],
            expect![[r#"
                "https://ex.com/ep?id=4&utm_campaign=z" -> https://ex.com/ep?id=4
                "https://ex.com:8080/ep" -> https://ex.com:8080/ep
            "#]],
        );
    }

    /// RFC 3986 §6.2.2.2: an escaped unreserved character (ALPHA / DIGIT / - . _ ~) is that character.
    #[test]
    fn percent_encoded_unreserved_characters_are_the_plain_ones() {
        check(
            &[
                "https://changelog.com/%67otime/52",
                "https://changelog.com/gotime/%35%32",
                "https://changelog.com/%67%6F%74%69%6D%65/52",
                "https://changelog.com/%67%6f%74%69%6d%65/52",
                "https://ch%61ngelog.com/gotime/52",
                "https://changelog.com/gotime/52?%75tm_source=x",
            ],
            expect![[r#"
                "https://changelog.com/%67otime/52" -> https://changelog.com/gotime/52
                "https://changelog.com/gotime/%35%32" -> https://changelog.com/gotime/52
                "https://changelog.com/%67%6F%74%69%6D%65/52" -> https://changelog.com/gotime/52
                "https://changelog.com/%67%6f%74%69%6d%65/52" -> https://changelog.com/gotime/52
                "https://ch%61ngelog.com/gotime/52" -> https://changelog.com/gotime/52
                "https://changelog.com/gotime/52?%75tm_source=x" -> https://changelog.com/gotime/52
            "#]],
        );
        check(
            &[
                "https://commonplace.example/shows/kitchen%2Dtable/1-sourdough-slowly",
                "https://commonplace.example/shows/kitchen-table/1%2dsourdough%2Dslowly",
            ],
            expect![[r#"
                "https://commonplace.example/shows/kitchen%2Dtable/1-sourdough-slowly" -> https://commonplace.example/shows/kitchen-table/1-sourdough-slowly
                "https://commonplace.example/shows/kitchen-table/1%2dsourdough%2Dslowly" -> https://commonplace.example/shows/kitchen-table/1-sourdough-slowly
            "#]],
        );
        check(
            &["https://ex.com/a%5Fb%2Ec%7Ed?k%3Dv=%61"],
            expect![[r#"
                "https://ex.com/a%5Fb%2Ec%7Ed?k%3Dv=%61" -> https://ex.com/a_b.c~d?k%3Dv=a
            "#]],
        );
    }

    /// RFC 3986 §6.2.2.1: other escapes stay escaped (`%2F` is not `/`), with upper-case hex digits;
    /// characters a URL may not hold raw are escaped the way browsers escape them.
    #[test]
    fn reserved_escapes_are_kept_in_upper_case() {
        check(
            &[
                "https://ex.com/a%2fb",
                "https://ex.com/a%2Fb",
                "https://ex.com/a/b",
                "https://ex.com/ep?q=a%26b&r=%3d",
                "https://ex.com/caf%c3%a9",
                "https://ex.com/café",
                "https://ex.com/a b",
                "https://ex.com/100%",
            ],
            expect![[r#"
                "https://ex.com/a%2fb" -> https://ex.com/a%2Fb
                "https://ex.com/a%2Fb" -> https://ex.com/a%2Fb
                "https://ex.com/a/b" -> https://ex.com/a/b
                "https://ex.com/ep?q=a%26b&r=%3d" -> https://ex.com/ep?q=a%26b&r=%3D
                "https://ex.com/caf%c3%a9" -> https://ex.com/caf%C3%A9
                "https://ex.com/café" -> https://ex.com/caf%C3%A9
                "https://ex.com/a b" -> https://ex.com/a%20b
                "https://ex.com/100%" -> https://ex.com/100%
            "#]],
        );
    }

    /// A host in Unicode and its IDNA (punycode) form are one host, as browsers treat them.
    #[test]
    fn unicode_and_punycode_hosts_are_one_host() {
        check(
            &[
                "https://bücher.example/folge/1",
                "https://BÜCHER.example/folge/1",
                "https://www.bücher.example/folge/1/",
                "https://xn--bcher-kva.example/folge/1",
                "https://XN--BCHER-KVA.example/folge/1",
            ],
            expect![[r#"
                "https://bücher.example/folge/1" -> https://xn--bcher-kva.example/folge/1
                "https://BÜCHER.example/folge/1" -> https://xn--bcher-kva.example/folge/1
                "https://www.bücher.example/folge/1/" -> https://xn--bcher-kva.example/folge/1
                "https://xn--bcher-kva.example/folge/1" -> https://xn--bcher-kva.example/folge/1
                "https://XN--BCHER-KVA.example/folge/1" -> https://xn--bcher-kva.example/folge/1
            "#]],
        );
        check(
            &["https://מתכונים.example/פרק/3", "https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3"],
            expect![[r#"
                "https://מתכונים.example/פרק/3" -> https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3
                "https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3" -> https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3
            "#]],
        );
    }

    #[test]
    fn other_addresses_stay_apart_or_are_refused() {
        check(
            &[
                "https://changelog.com/GoTime/52",
                "https://changelog.com/gotime/52?b=2&a=1",
                "ftp://ex.com/x",
                "https://",
                "https://www./x",
                "not an address",
                "",
            ],
            expect![[r#"
                "https://changelog.com/GoTime/52" -> https://changelog.com/GoTime/52
                "https://changelog.com/gotime/52?b=2&a=1" -> https://changelog.com/gotime/52?b=2&a=1
                "ftp://ex.com/x" -> (not an episode address)
                "https://" -> (not an episode address)
                "https://www./x" -> (not an episode address)
                "not an address" -> (not an episode address)
                "" -> (not an episode address)
            "#]],
        );
    }

    #[test]
    fn episode_id_is_stable() {
        let id = episode_id("https://changelog.com/jsparty/299");
        expect!["ep_ordsen2nfy"].assert_eq(&id);
        assert!(is_episode_id(&id));
        assert!(!is_episode_id("ep_XK6WYH2YLA"));
        assert!(!is_episode_id("ep_short"));
    }
}
