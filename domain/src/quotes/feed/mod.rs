//! A show's feed: RSS 2.0 with the `itunes` and Podcasting 2.0 (`podcast`) namespaces, read by
//! rust-syndication's `rss` crate into what intake needs of each episode — its key, title, page,
//! audio, date, duration, the publisher's transcripts, the people who speak in it and its licence.
//!
//! Feeds in the wild are loose, and the reading is forgiving where a person would be: an item
//! without a `guid` is known by its audio address (then its page); relative links are resolved
//! against the feed's address; the `podcast` namespace is found by its URI whatever prefix a feed
//! gives it; a date is read as the publisher wrote it (RFC 822, the day they name); a duration may
//! be seconds or `[H:]M:S`. An address in a feed is data, not a decision to fetch it: the caller
//! checks each with [`crate::site::outbound`].

use std::collections::BTreeMap;

use rss::extension::{Extension, ExtensionMap};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::quotes::transcript::import::Format;
use crate::quotes::transcript::normalise_source_url;

/// The Podcasting 2.0 namespace, as the spec names it, and as older feeds still declare it.
const PODCAST_NAMESPACES: [&str; 2] = [
    "https://podcastindex.org/namespace/1.0",
    "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
];

/// What a feed says of its show and its episodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feed {
    pub title: String,
    /// The show's web page.
    pub link: Option<String>,
    /// `<podcast:license>` (its text, an SPDX identifier by the spec), else `<copyright>`.
    pub licence: Option<String>,
    /// The channel's `<description>` as plain text (markup left out), at most
    /// [`MAX_DESCRIPTION_CHARS`].
    #[serde(default)]
    pub description: String,
    /// The channel's `<copyright>`, as written.
    #[serde(default)]
    pub copyright: Option<String>,
    /// The channel's `itunes:author`: who makes the show.
    #[serde(default)]
    pub author: Option<String>,
    /// The people of every episode (`<podcast:person>` on the channel): hosts, most often.
    pub persons: Vec<Person>,
    /// In the feed's order (most feeds: newest first).
    pub items: Vec<FeedItem>,
}

/// One episode of a feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedItem {
    pub guid: Option<String>,
    pub title: String,
    /// The episode's web page, absolute.
    pub link: Option<String>,
    /// The audio (`<enclosure>`), absolute.
    pub audio_url: Option<String>,
    /// The enclosure's `length` in bytes, when it is a number above zero.
    pub audio_bytes: Option<u64>,
    /// `YYYY-MM-DD`, from `pubDate` as written.
    pub published: Option<String>,
    /// `pubDate` as the feed wrote it, to say why it is not a date.
    pub pub_date: Option<String>,
    /// From `itunes:duration`.
    pub duration_s: Option<u32>,
    /// `<podcast:transcript>`, in the feed's order.
    pub transcripts: Vec<TranscriptLink>,
    /// `<podcast:person>` on the item: who speaks in this episode besides the channel's people.
    pub persons: Vec<Person>,
    /// `<podcast:license>` on the item, which overrides the channel's.
    pub licence: Option<String>,
}

/// A publisher's transcript of an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptLink {
    pub url: String,
    /// The MIME type the feed gives (`text/vtt`, `application/json`, `application/x-subrip`, …).
    pub mime: String,
    pub language: Option<String>,
    /// `captions` when the file is closed captions rather than a transcript.
    pub rel: Option<String>,
}

/// A person a feed names (`<podcast:person>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    pub name: String,
    /// `host`, `guest`, … (the spec's roles, lower case; `host` when the feed says none).
    pub role: String,
    pub href: Option<String>,
}

/// Why a feed could not be read: a person can act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedError(pub String);

impl core::fmt::Display for FeedError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

impl FeedItem {
    /// What identifies the item across reads of its feed: its `guid`, else its audio address, else
    /// its page.
    pub fn key(&self) -> Option<&str> {
        self.guid.as_deref().or(self.audio_url.as_deref()).or(self.link.as_deref())
    }

    /// Whether `address` names this item: its page, its audio or its `guid`, two addresses compared
    /// as episode addresses are (`normalise_source_url`: scheme, `www.`, tracking parameters and a
    /// trailing slash aside), a `guid` that is no address compared as written.
    pub fn is_named_by(&self, address: &str) -> bool {
        let wanted = comparable(address);
        [self.link.as_deref(), self.audio_url.as_deref(), self.guid.as_deref()]
            .into_iter()
            .flatten()
            .any(|own| comparable(own) == wanted)
    }

    /// The publisher transcript to take, and how to read it: WebVTT first (its voice tags name the
    /// speakers), then Podcasting 2.0 JSON, then SRT; HTML and plain text are not timed and are left.
    pub fn transcript_to_take(&self) -> Option<(&TranscriptLink, Format)> {
        let rank = |link: &TranscriptLink| -> Option<(u8, Format)> {
            let mime = link.mime.trim().to_ascii_lowercase();
            let mime = mime.split(';').next().unwrap_or_default().trim();
            match mime {
                "text/vtt" => Some((0, Format::Webvtt)),
                "application/json" | "application/x-podcasting20+json" => Some((1, Format::Podcasting20)),
                "application/x-subrip" | "application/srt" | "text/srt" => Some((2, Format::Srt)),
                _ => None,
            }
        };
        // Of one format, a transcript before closed captions (`rel="captions"`): captions split speech
        // for reading, not by speaker.
        self.transcripts
            .iter()
            .filter_map(|link| rank(link).map(|(order, format)| ((order, link.rel.is_some()), link, format)))
            .min_by_key(|(order, ..)| *order)
            .map(|(_, link, format)| (link, format))
    }
}

/// The feed at `feed_url`, from its bytes.
pub fn parse(bytes: &[u8], feed_url: &Url) -> Result<Feed, FeedError> {
    let channel = rss::Channel::read_from(bytes).map_err(|err| {
        FeedError(match err {
            rss::Error::InvalidStartTag => "this is not an RSS feed: its first element is not <rss>".into(),
            rss::Error::Eof => "the feed ends before its <channel> is complete".into(),
            other => format!("the feed is not well-formed XML: {other}"),
        })
    })?;
    let podcast = podcast_prefixes(channel.namespaces());
    let resolve = |address: &str| -> Option<String> {
        let address = address.trim();
        (!address.is_empty()).then(|| feed_url.join(address).ok()).flatten().map(String::from)
    };
    let items = channel
        .items()
        .iter()
        .map(|item| {
            let enclosure = item.enclosure();
            let podcast_ext = |name: &'static str| extensions(item.extensions(), &podcast, name);
            FeedItem {
                guid: item.guid().map(|guid| guid.value().trim().to_string()).filter(|guid| !guid.is_empty()),
                title: text(item.title().unwrap_or_default()),
                link: item.link().and_then(&resolve),
                audio_url: enclosure.and_then(|enclosure| resolve(enclosure.url())),
                audio_bytes: enclosure
                    .and_then(|enclosure| enclosure.length().trim().parse().ok())
                    .filter(|n| *n > 0),
                published: item.pub_date().and_then(rfc822_date),
                pub_date: item.pub_date().map(str::trim).filter(|date| !date.is_empty()).map(String::from),
                duration_s: item.itunes_ext().and_then(|itunes| itunes.duration()).and_then(duration_s),
                transcripts: podcast_ext("transcript")
                    .filter_map(|ext| {
                        Some(TranscriptLink {
                            url: resolve(ext.attrs.get("url")?)?,
                            mime: ext.attrs.get("type").cloned().unwrap_or_default(),
                            language: ext.attrs.get("language").cloned(),
                            rel: ext.attrs.get("rel").cloned(),
                        })
                    })
                    .collect(),
                persons: persons(podcast_ext("person"), &resolve),
                licence: licence(podcast_ext("license")),
            }
        })
        .collect();
    let channel_ext = |name: &'static str| extensions(channel.extensions(), &podcast, name);
    Ok(Feed {
        title: text(channel.title()),
        link: resolve(channel.link()),
        licence: licence(channel_ext("license"))
            .or_else(|| channel.copyright().map(str::trim).filter(|c| !c.is_empty()).map(String::from)),
        persons: persons(channel_ext("person"), &resolve),
        description: plain(channel.description()),
        copyright: channel.copyright().map(text).filter(|c| !c.is_empty()),
        author: channel.itunes_ext().and_then(|itunes| itunes.author()).map(text).filter(|a| !a.is_empty()),
        items,
    })
}

/// The most characters of a channel's description a show's record keeps.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;

/// A description as plain text: its markup (feeds write HTML in it) left out, entities decoded,
/// spaces joined, cut at a word before [`MAX_DESCRIPTION_CHARS`].
fn plain(raw: &str) -> String {
    let mut bare = String::with_capacity(raw.len());
    let mut in_tag = false;
    for c in html_escape::decode_html_entities(raw).chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                bare.push(' ');
            }
            _ if !in_tag => bare.push(c),
            _ => {}
        }
    }
    // A tag between a word and its punctuation (`<em>friends</em>.`) leaves no space before it.
    let mut text = text(&bare);
    for mark in [".", ",", ";", ":", "!", "?", ")"] {
        text = text.replace(&format!(" {mark}"), mark);
    }
    if text.chars().count() <= MAX_DESCRIPTION_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut}…")
}

/// Text as a person reads it: HTML entities a feed left in it decoded (once more than XML did, for
/// the feeds that escape twice), spaces joined.
fn text(raw: &str) -> String {
    let decoded = html_escape::decode_html_entities(raw);
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The prefixes a feed declares for the Podcasting 2.0 namespace; `podcast` when it declares none.
fn podcast_prefixes(namespaces: &BTreeMap<String, String>) -> Vec<String> {
    let declared: Vec<String> = namespaces
        .iter()
        .filter(|(_, uri)| {
            let uri = uri.trim().trim_end_matches('/');
            PODCAST_NAMESPACES.iter().any(|known| known.eq_ignore_ascii_case(uri))
        })
        .map(|(prefix, _)| prefix.clone())
        .collect();
    if declared.is_empty() { vec!["podcast".to_string()] } else { declared }
}

fn extensions<'a>(
    map: &'a ExtensionMap,
    prefixes: &'a [String],
    name: &'a str,
) -> impl Iterator<Item = &'a Extension> {
    prefixes.iter().filter_map(move |prefix| map.get(prefix)?.get(name)).flatten()
}

fn persons<'a>(
    found: impl Iterator<Item = &'a Extension>,
    resolve: &impl Fn(&str) -> Option<String>,
) -> Vec<Person> {
    let mut persons: Vec<Person> = Vec::new();
    for ext in found {
        let Some(name) = ext.value.as_deref().map(text).filter(|name| !name.is_empty()) else { continue };
        let person = Person {
            name,
            role: ext.attrs.get("role").map_or("host".to_string(), |role| role.trim().to_ascii_lowercase()),
            href: ext.attrs.get("href").and_then(|href| resolve(href)),
        };
        if !persons.contains(&person) {
            persons.push(person);
        }
    }
    persons
}

fn licence<'a>(mut found: impl Iterator<Item = &'a Extension>) -> Option<String> {
    found
        .find_map(|ext| ext.value.as_deref().map(str::trim).filter(|text| !text.is_empty()).map(String::from))
}

/// An address as episode addresses compare; anything else as written.
fn comparable(address: &str) -> String {
    let address = address.trim();
    normalise_source_url(address).unwrap_or_else(|| address.to_string())
}

/// `YYYY-MM-DD` of an RFC 822 date (`Tue, 05 Mar 2024 10:00:00 +0000`), the day as written; a
/// two-digit year is 19xx from 50 on, 20xx below. Also takes ISO 8601 (`2024-03-05…`), which some
/// feeds write instead.
pub fn rfc822_date(text: &str) -> Option<String> {
    let text = text.trim();
    if let Some(iso) = text.get(..10).filter(|iso| is_iso_date(iso)) {
        return Some(iso.to_string());
    }
    let after_day = text.split_once(',').map_or(text, |(_, rest)| rest);
    let mut words = after_day.split_whitespace().peekable();
    // A weekday without its comma (`Tue 05 Mar 2024`).
    if words.peek().is_some_and(|word| word.parse::<u32>().is_err()) {
        words.next();
    }
    let day: u32 = words.next()?.parse().ok()?;
    let month = month_number(words.next()?)?;
    let year: u32 = match words.next()?.parse().ok()? {
        year @ 0..=49 => 2000 + year,
        year @ 50..=99 => 1900 + year,
        year => year,
    };
    (1..=31).contains(&day).then(|| format!("{year:04}-{month:02}-{day:02}"))
}

fn is_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes.iter().enumerate().all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap_or(0);
    shaped && (1..=12).contains(&number(5..7)) && (1..=31).contains(&number(8..10))
}

fn month_number(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let word = word.to_ascii_lowercase();
    MONTHS.iter().position(|month| word.starts_with(month)).map(|idx| idx as u32 + 1)
}

/// Seconds of an `itunes:duration`: `3600`, `59:59`, `1:02:03` (a fraction of a second is dropped).
pub fn duration_s(text: &str) -> Option<u32> {
    let text = text.trim();
    let whole = text.split('.').next()?;
    let parts: Vec<u32> = whole.split(':').map(|part| part.trim().parse().ok()).collect::<Option<_>>()?;
    // A feed sets the numbers: no arithmetic on them may overflow.
    let seconds = match parts[..] {
        [s] => Some(s),
        [m, s] => m.checked_mul(60).and_then(|m| m.checked_add(s)),
        [h, m, s] => h
            .checked_mul(3600)
            .and_then(|h| h.checked_add(m.checked_mul(60)?))
            .and_then(|hm| hm.checked_add(s)),
        _ => None,
    }?;
    (seconds > 0).then_some(seconds)
}

#[cfg(test)]
mod tests;
