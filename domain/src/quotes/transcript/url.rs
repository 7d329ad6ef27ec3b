//! Source URLs and episode ids: any spelling of an episode's address finds the same episode.
//!
//! Normalising: lower-case scheme and host, no `www.`, no fragment, no `utm_*`
//! parameters, no trailing slash. We also treat `http` as `https` and a missing scheme as `https`,
//! since a person pasting an address means the same page either way. The id is `ep_` plus the first
//! ten lower-case base32 characters of the SHA-256 of the normalised URL, so the Worker can find an
//! episode's files from any spelling of its URL without an index lookup.
//!
//! Parsing is the `url` crate's (the WHATWG URL standard, what browsers do): it maps a Unicode host to
//! its IDNA (punycode) form, lower-cases and percent-decodes hosts, drops default ports, resolves `.`
//! and `..` segments and escapes what an address may not hold raw. On top of that we decode escaped
//! unreserved characters (RFC 3986 §6.2.2.2) and write the remaining escapes in upper case
//! (§6.2.2.1), which WHATWG leaves as typed. Every id published keeps its value (tests in `builder`).
//!
//! Known platforms spell one episode many ways, and readers paste whichever their app gave them: a
//! YouTube video is `youtu.be/ID`, `m.youtube.com/watch?v=ID&t=42s`, `youtube.com/shorts/ID`,
//! `music.youtube.com/watch?v=ID&si=…` or an embed; a Spotify episode carries `?si=…` (a share
//! tracker). Each of those is written the way the platform links the episode itself
//! ([`platform_canonical`]): `https://youtube.com/watch?v=ID`, `https://open.spotify.com/episode/ID`.
//! An episode published in that form keeps its id; what the platform means as something else (another
//! video, a playlist on its own) stays apart.

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
    if let Some(canonical) = platform_canonical(host, &parsed) {
        return Some(canonical);
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

/// The one address a known platform gives an episode that `parsed` (on `host`, without `www.`)
/// names, or `None` when the platform is not known or the address names no single episode.
///
/// YouTube: the video id of `youtu.be/ID`, `/watch?v=ID`, `/shorts/ID`, `/live/ID`, `/embed/ID` and
/// `/v/ID` on `youtube.com` and its `m.`, `music.` and `youtube-nocookie.com` hosts; every other
/// parameter (`t`, `si`, `feature`, `list`, `index`, `pp`) picks a moment, a tracker or a context of
/// the same video. Spotify: `open.spotify.com/episode/ID`, also under `/intl-xx/` or `/embed/`; its
/// parameters (`si`, `t`, `context`) likewise. A playlist, a channel or a show stays as written.
fn platform_canonical(host: &str, parsed: &Url) -> Option<String> {
    let segments: Vec<&str> = parsed.path_segments()?.filter(|s| !s.is_empty()).collect();
    match host {
        "youtu.be" => youtube_watch(segments.first()?),
        "youtube.com" | "m.youtube.com" | "music.youtube.com" | "youtube-nocookie.com" => {
            match segments.as_slice() {
                ["watch"] => youtube_watch(&parsed.query_pairs().find(|(key, _)| key == "v")?.1),
                ["shorts" | "live" | "embed" | "v", id] => youtube_watch(id),
                _ => None,
            }
        }
        "open.spotify.com" => {
            let rest = match segments.as_slice() {
                [first, rest @ ..] if first.starts_with("intl-") || *first == "embed" => rest,
                all => all,
            };
            match rest {
                ["episode", id] if is_platform_id(id) => {
                    Some(format!("https://open.spotify.com/episode/{id}"))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn youtube_watch(id: &str) -> Option<String> {
    is_platform_id(id).then(|| format!("https://youtube.com/watch?v={id}"))
}

/// A platform's episode id: letters, digits, `-` and `_` (YouTube's 11 characters, Spotify's 22).
/// Ids are case-sensitive, so they are kept as written.
fn is_platform_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `url` starts with `scheme://`. Without one it is a bare address such as
/// `changelog.com/gotime/52` (which the URL standard would read as the scheme `changelog.com` when a
/// port follows), so it gets `https://`.
pub fn has_scheme(url: &str) -> bool {
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

    /// Every spelling normalises to `canonical`: they all name one episode.
    fn same(canonical: &str, spellings: &[&str]) {
        for spelling in spellings {
            assert_eq!(normalise_source_url(spelling).as_deref(), Some(canonical), "{spelling:?}");
        }
    }

    #[test]
    fn spellings_of_one_url_normalise_alike() {
        same(
            "https://changelog.com/gotime/52",
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
        same(
            "https://changelog.com/gotime/52",
            &[
                "https://changelog.com/%67otime/52",
                "https://changelog.com/gotime/%35%32",
                "https://changelog.com/%67%6F%74%69%6D%65/52",
                "https://changelog.com/%67%6f%74%69%6d%65/52",
                "https://ch%61ngelog.com/gotime/52",
                "https://changelog.com/gotime/52?%75tm_source=x",
            ],
        );
        same(
            "https://commonplace.example/shows/kitchen-table/1-sourdough-slowly",
            &[
                "https://commonplace.example/shows/kitchen%2Dtable/1-sourdough-slowly",
                "https://commonplace.example/shows/kitchen-table/1%2dsourdough%2Dslowly",
            ],
        );
        same("https://ex.com/a_b.c~d?k%3Dv=a", &["https://ex.com/a%5Fb%2Ec%7Ed?k%3Dv=%61"]);
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
        same(
            "https://xn--bcher-kva.example/folge/1",
            &[
                "https://bücher.example/folge/1",
                "https://BÜCHER.example/folge/1",
                "https://www.bücher.example/folge/1/",
                "https://xn--bcher-kva.example/folge/1",
                "https://XN--BCHER-KVA.example/folge/1",
            ],
        );
        same(
            "https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3",
            &["https://מתכונים.example/פרק/3", "https://xn--9dbiekbo1e.example/%D7%A4%D7%A8%D7%A7/3"],
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

    /// the addresses readers paste from YouTube and Spotify (a share link, the mobile site,
    /// a moment, a tracker) were 404 for an episode published at `youtube.com/watch?v=ID`.
    #[test]
    fn pasted_youtube_and_spotify_addresses_find_the_published_episode() {
        same(
            "https://youtube.com/watch?v=Xk3a9Zq_L0w",
            &[
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w",
                "https://youtu.be/Xk3a9Zq_L0w",
                "https://youtu.be/Xk3a9Zq_L0w?si=AbCdEf123&t=42",
                "youtu.be/Xk3a9Zq_L0w",
                "https://m.youtube.com/watch?v=Xk3a9Zq_L0w",
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&t=42s",
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&t=2160s",
                "https://www.youtube.com/watch?feature=share&v=Xk3a9Zq_L0w",
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&si=AbCdEf123",
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG&index=3",
                "https://youtube.com/shorts/Xk3a9Zq_L0w?feature=share",
                "https://music.youtube.com/watch?v=Xk3a9Zq_L0w&si=AbCdEf123",
                "https://www.youtube.com/live/Xk3a9Zq_L0w?si=AbCdEf123",
                "https://www.youtube.com/embed/Xk3a9Zq_L0w?start=42",
                "https://www.youtube-nocookie.com/embed/Xk3a9Zq_L0w",
                "http://YOUTUBE.com/watch?v=Xk3a9Zq_L0w#t=42",
            ],
        );
        same(
            "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk",
            &[
                "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk",
                "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f6",
                "https://open.spotify.com/intl-de/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f6",
                "https://open.spotify.com/embed/episode/4rOoJ6Egrf8K2IrywzwOMk?utm_source=generator",
                "open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk/",
            ],
        );
    }

    /// What the platform means as something else stays apart: another video (ids are case-sensitive),
    /// a playlist or a channel on its own, another Spotify episode or a show.
    #[test]
    fn other_videos_playlists_and_shows_stay_apart() {
        check(
            &[
                "https://youtu.be/Xk3a9Zq_L0W",
                "https://www.youtube.com/watch?v=Ab3a9Zq_L0w&t=42s",
                "https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG&si=AbC",
                "https://www.youtube.com/watch?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
                "https://www.youtube.com/@changelog",
                "https://open.spotify.com/episode/7makk4oTQel546B0PZlDM5?si=a1b2",
                "https://open.spotify.com/show/2mTUnDkuKUkhiueKcVWoP0?si=a1b2",
                "https://example.com/watch?v=Xk3a9Zq_L0w&t=42s",
            ],
            expect![[r#"
                "https://youtu.be/Xk3a9Zq_L0W" -> https://youtube.com/watch?v=Xk3a9Zq_L0W
                "https://www.youtube.com/watch?v=Ab3a9Zq_L0w&t=42s" -> https://youtube.com/watch?v=Ab3a9Zq_L0w
                "https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG&si=AbC" -> https://youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG&si=AbC
                "https://www.youtube.com/watch?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG" -> https://youtube.com/watch?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG
                "https://www.youtube.com/@changelog" -> https://youtube.com/@changelog
                "https://open.spotify.com/episode/7makk4oTQel546B0PZlDM5?si=a1b2" -> https://open.spotify.com/episode/7makk4oTQel546B0PZlDM5
                "https://open.spotify.com/show/2mTUnDkuKUkhiueKcVWoP0?si=a1b2" -> https://open.spotify.com/show/2mTUnDkuKUkhiueKcVWoP0?si=a1b2
                "https://example.com/watch?v=Xk3a9Zq_L0w&t=42s" -> https://example.com/watch?v=Xk3a9Zq_L0w&t=42s
            "#]],
        );
    }

    /// The canonical form is what normalising gave before platforms were known, so an episode
    /// published at `youtube.com/watch?v=ID` (or Spotify's episode address) keeps its id.
    #[test]
    fn episodes_published_in_the_platform_form_keep_their_id() {
        for (published, id) in [
            (
                "https://www.youtube.com/watch?v=Xk3a9Zq_L0w",
                episode_id("https://youtube.com/watch?v=Xk3a9Zq_L0w"),
            ),
            (
                "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk",
                episode_id("https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk"),
            ),
        ] {
            assert_eq!(episode_id(&normalise_source_url(published).unwrap()), id, "{published}");
        }
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
