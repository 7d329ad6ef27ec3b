//! The read views of the quote service: a transcript narrowed by speaker and time window, speaker
//! statistics, and paged episode lists. Pure functions of the canonical transcript and the parameters.

use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::paging::{self, PAGE_BYTES};
use crate::quotes::transcript::{Canonical, EpisodeRef, NameState, Segment, round_ms, rounded};

/// `speaker`, `from`, `to` as sent, echoed in the answer so a slice is never mistaken for the whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Filters {
    pub speaker: Option<String>,
    pub from: Option<f64>,
    pub to: Option<f64>,
}

/// One segment as an answer shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SegmentView {
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    pub start_s: f64,
    pub end_s: f64,
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub start_estimated: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_estimated: bool,
    /// The turn was cut to the window; its text holds the words inside it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clipped: bool,
}

/// The version of the whole transcript as the build stores it; it changes whenever the answer does,
/// so a Worker never serves a stored answer its own code would not make. The unit test
/// `built_transcript_views_are_this_versions` holds a sample's hash to it: when it fails, change this
/// number with the expectation.
pub const VIEW_VERSION: u32 = 1;

/// Where the build stores an episode's whole transcript as `GET /api/episodes/:id/transcript` answers
/// it without filters, with the names it resolved.
pub fn built_view_path(episode_id: &str) -> String {
    format!("episodes/{episode_id}/view.v{VIEW_VERSION}.json")
}

/// The whole transcript as the build stores it and the route answers it: through a JSON value, so
/// its keys are in order.
pub fn whole_transcript_json(canonical: &Canonical) -> String {
    serde_json::to_value(transcript(canonical, &Filters::default()))
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// `GET /api/episodes/:id/transcript`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TranscriptView {
    pub episode: EpisodeRef,
    pub pipeline: String,
    pub filters: Filters,
    pub segments: Vec<SegmentView>,
}

/// Whether `speaker` (a person's name, or a label) names this label.
fn speaker_matches(canonical: &Canonical, label: &str, speaker: &str) -> bool {
    if label == speaker {
        return true;
    }
    let wanted = fold_name(speaker);
    canonical.speaker(label).name.is_some_and(|name| fold_name(&name) == wanted)
}

/// Names compare without regard to case, accents or spacing.
pub fn fold_name(name: &str) -> String {
    crate::text::fold(name).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a segment overlaps the window `[from, to]` (seed: turns *overlapping* it). A turn that
/// only touches an edge (ends at `from`, starts at `to`) shares no time with it and is not in it. An
/// instant (a turn of no length, or a window of no length) is in when it falls inside the other, its
/// start counting and its end not, so a turn is in exactly one of two windows that meet.
fn overlaps(segment: &Segment, from: f64, to: f64) -> bool {
    let (start, end) = (segment.start_s, segment.end_s);
    if from == to {
        start <= from && (from < end || start == end)
    } else if start == end {
        from <= start && start < to
    } else {
        start < to && from < end
    }
}

/// The part of a segment inside `[from, to]`, or `None` when it lies outside.
fn clip(segment: &Segment, from: f64, to: f64) -> Option<(f64, f64, String, bool)> {
    if !overlaps(segment, from, to) {
        return None;
    }
    let start = segment.start_s.max(from);
    let end = segment.end_s.min(to);
    if start == segment.start_s && end == segment.end_s {
        return Some((start, end, segment.text.clone(), false));
    }
    // Keep the words whose middle lies inside the window: by word times, else by character position.
    let words: Vec<(&str, f64)> = match &segment.words {
        Some(words) if !words.is_empty() => {
            words.iter().map(|w| (w.w.as_str(), (w.start_s + w.end_s) / 2.0)).collect()
        }
        _ => {
            let n_chars = segment.text.chars().count().max(1) as f64;
            let span = segment.end_s - segment.start_s;
            let mut out = Vec::new();
            let mut chars_before = 0usize;
            for word in segment.text.split(' ') {
                let len = word.chars().count();
                let middle = segment.start_s + span * (chars_before as f64 + len as f64 / 2.0) / n_chars;
                if !word.is_empty() {
                    out.push((word, middle));
                }
                chars_before += len + 1;
            }
            out
        }
    };
    let text: Vec<&str> = words.iter().filter(|(_, t)| *t >= start && *t <= end).map(|(w, _)| *w).collect();
    Some((start, end, text.join(" "), true))
}

/// The canonical transcript narrowed by the filters.
pub fn transcript(canonical: &Canonical, filters: &Filters) -> TranscriptView {
    let from = filters.from.unwrap_or(0.0);
    let to = filters.to.unwrap_or(f64::INFINITY);
    let segments = canonical
        .segments
        .iter()
        .filter(|segment| {
            filters
                .speaker
                .as_deref()
                .is_none_or(|speaker| speaker_matches(canonical, &segment.speaker, speaker))
        })
        .filter_map(|segment| {
            let (start_s, end_s, text, clipped) = clip(segment, from, to)?;
            let resolved = canonical.speaker(&segment.speaker);
            Some(SegmentView {
                speaker: segment.speaker.clone(),
                name: resolved.name,
                name_state: resolved.name_state,
                start_s: round_ms(start_s),
                end_s: round_ms(end_s),
                text,
                start_estimated: segment.start_estimated && start_s == segment.start_s,
                end_estimated: segment.end_estimated && end_s == segment.end_s,
                clipped,
            })
        })
        .collect();
    TranscriptView {
        episode: canonical.episode.clone(),
        pipeline: canonical.pipeline.clone(),
        filters: filters.clone(),
        segments,
    }
}

/// The turns from `start_s` to `end_s` (those overlapping it, or the one it falls in), with `turns`
/// more on each side, whole: a found quote in its context.
pub fn around(canonical: &Canonical, start_s: f64, end_s: f64, turns: usize) -> Vec<SegmentView> {
    let segments = &canonical.segments;
    let first = segments.iter().position(|s| s.end_s > start_s).unwrap_or(segments.len().saturating_sub(1));
    let last = segments.iter().rposition(|s| s.start_s <= end_s).unwrap_or(first).max(first);
    let (from, to) = (first.saturating_sub(turns), (last + turns + 1).min(segments.len()));
    segments[from..to]
        .iter()
        .map(|segment| {
            let resolved = canonical.speaker(&segment.speaker);
            SegmentView {
                speaker: segment.speaker.clone(),
                name: resolved.name,
                name_state: resolved.name_state,
                start_s: round_ms(segment.start_s),
                end_s: round_ms(segment.end_s),
                text: segment.text.clone(),
                start_estimated: segment.start_estimated,
                end_estimated: segment.end_estimated,
                clipped: false,
            }
        })
        .collect()
}

/// One speaker's statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpeakerStats {
    pub speaker: String,
    pub name: Option<String>,
    pub name_state: NameState,
    pub seconds: f64,
    /// A fraction of speech time (all speakers' seconds), not of the window.
    pub share: f64,
    pub segments: usize,
    pub first_s: f64,
    pub last_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Window {
    pub from: Option<f64>,
    pub to: Option<f64>,
}

/// `GET /api/episodes/:id/speakers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpeakersView {
    pub episode: EpisodeRef,
    pub window: Window,
    /// The sum of every speaker's seconds inside the window; silence is not in it.
    pub speech_s: f64,
    pub speakers: Vec<SpeakerStats>,
}

/// Seconds, share, segment count and first and last appearance per speaker label, inside the window.
/// Speakers are listed by seconds spoken, most first.
pub fn speakers(canonical: &Canonical, filters: &Filters) -> SpeakersView {
    let from = filters.from.unwrap_or(0.0);
    let to = filters.to.unwrap_or(f64::INFINITY);
    let mut stats: Vec<SpeakerStats> = Vec::new();
    for segment in &canonical.segments {
        let Some((start, end, _, _)) = clip(segment, from, to) else { continue };
        let entry = match stats.iter_mut().position(|s| s.speaker == segment.speaker) {
            Some(idx) => &mut stats[idx],
            None => {
                let resolved = canonical.speaker(&segment.speaker);
                stats.push(SpeakerStats {
                    speaker: segment.speaker.clone(),
                    name: resolved.name,
                    name_state: resolved.name_state,
                    seconds: 0.0,
                    share: 0.0,
                    segments: 0,
                    first_s: start,
                    last_s: end,
                });
                stats.last_mut().expect("just pushed")
            }
        };
        entry.seconds += end - start;
        entry.segments += 1;
        entry.first_s = entry.first_s.min(start);
        entry.last_s = entry.last_s.max(end);
    }
    // Not `.sum()`: an empty `f64` sum is `-0.0`.
    let speech_s = stats.iter().fold(0.0, |sum, s| sum + s.seconds);
    for entry in &mut stats {
        entry.share = if speech_s > 0.0 { rounded(entry.seconds / speech_s, 10_000.0) } else { 0.0 };
        entry.seconds = round_ms(entry.seconds);
        entry.first_s = round_ms(entry.first_s);
        entry.last_s = round_ms(entry.last_s);
    }
    stats.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| a.speaker.cmp(&b.speaker)));
    SpeakersView {
        episode: canonical.episode.clone(),
        window: Window { from: filters.from, to: filters.to },
        speech_s: round_ms(speech_s),
        speakers: stats,
    }
}

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;

/// `limit` and `cursor`, shared by the list and search calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Default for Page {
    fn default() -> Self {
        Page { offset: 0, limit: DEFAULT_LIMIT }
    }
}

impl Page {
    /// Reads `limit` or `cursor`; returns false when the key is neither.
    pub fn read(&mut self, key: &str, value: &str, problems: &mut Vec<Diagnostic>) -> bool {
        match key {
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => self.limit = n,
                _ => problems
                    .push(Diagnostic::new("limit", format!("must be a whole number from 1 to {MAX_LIMIT}"))),
            },
            "cursor" => match crate::paging::decode_cursor(value) {
                Some(offset) => self.offset = offset,
                None => problems.push(Diagnostic::new("cursor", "is not a cursor this API gave out")),
            },
            _ => return false,
        }
        true
    }

    /// The items of this page by count alone, and the next cursor.
    pub fn slice<'a, T>(&self, items: &'a [T]) -> (&'a [T], Option<String>) {
        let start = self.offset.min(items.len());
        let end = (start + self.limit).min(items.len());
        (&items[start..end], self.next_cursor(end - start, items.len()))
    }

    /// The items of this page, by count and by [`PAGE_BYTES`] of JSON (`crate::paging`), and the next
    /// cursor.
    pub fn slice_within<'a, T: Serialize>(&self, items: &'a [T]) -> (&'a [T], Option<String>) {
        let (page, _) = self.slice(items);
        let kept = paging::fitting(page.iter().map(paging::json_len), PAGE_BYTES);
        (&page[..kept], self.next_cursor(kept, items.len()))
    }

    /// The cursor of what follows the first `kept` items of this page, of `total`; `None` at the end.
    pub fn next_cursor(&self, kept: usize, total: usize) -> Option<String> {
        let end = self.offset.min(total) + kept;
        (end < total).then(|| crate::paging::encode_cursor(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::quote::fixtures::{check_answer, segment, sourdough};
    use crate::quotes::transcript::{RunKind, Speaker};
    use expect_test::{Expect, expect};
    use std::collections::BTreeMap;

    /// The answer a stored one of this version holds: a change here is a change of [`VIEW_VERSION`].
    #[test]
    fn built_transcript_views_are_this_versions() {
        use sha2::{Digest, Sha256};
        let json = whole_transcript_json(&crate::quotes::quote::tests::canonical());
        let hash: String =
            Sha256::digest(json.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect();
        expect_test::expect!["v1: 93ce94b6b0b01aec"].assert_eq(&format!("v{VIEW_VERSION}: {hash}"));
    }

    fn canonical() -> Canonical {
        let mut speakers = BTreeMap::new();
        speakers.insert(
            "A".to_string(),
            Speaker { name: Some("Ana Lima".into()), name_state: NameState::Confident },
        );
        speakers.insert("B".to_string(), Speaker { name: None, name_state: NameState::Withheld });
        Canonical {
            episode: EpisodeRef { title: "t".into(), show: "s".into(), ..sourdough() },
            pipeline: "p".into(),
            kind: RunKind::Asr,
            speakers,
            segments: vec![
                segment("A", 0.0, 10.0, "one two three four five six seven eight nine ten"),
                segment("B", 12.0, 16.0, "yes indeed"),
                segment("A", 20.0, 30.0, "and that is the whole story"),
            ],
        }
    }

    fn check_transcript(query: &[(&str, &str)], expect: Expect) {
        let params = [("episode_id", "ep_test")].into_iter().chain(query.iter().copied());
        let render = |filters: Filters| {
            let view = transcript(&canonical(), &filters);
            let mut out = format!("{:?}\n", view.filters);
            for s in view.segments {
                out.push_str(&format!(
                    "{} {:?} {}-{} {:?}{}\n",
                    s.speaker,
                    s.name,
                    s.start_s,
                    s.end_s,
                    s.text,
                    if s.clipped { " clipped" } else { "" }
                ));
            }
            out
        };
        let asked = crate::api::from_query::<crate::api::TranscriptQuery>(params).map(|asked| asked.filters);
        check_answer(asked, render, expect);
    }

    #[test]
    fn transcript_filters_by_name_and_clips_to_the_window() {
        check_transcript(
            &[("speaker", "ana lima"), ("from", "5"), ("to", "25")],
            expect![[r#"
                Filters { speaker: Some("ana lima"), from: Some(5.0), to: Some(25.0) }
                A Some("Ana Lima") 5-10 "six seven eight nine ten" clipped
                A Some("Ana Lima") 20-25 "and that is the" clipped
            "#]],
        );
        check_transcript(
            &[("speaker", "Nobody")],
            expect![[r#"
                Filters { speaker: Some("Nobody"), from: None, to: None }
            "#]],
        );
        check_transcript(
            &[("from", "9"), ("to", "3"), ("x", "1")],
            expect![[r#"
                from: must not be after `to`
                x: unknown parameter
            "#]],
        );
    }

    #[test]
    fn speaker_share_is_of_speech_time_not_of_the_window() {
        let view = speakers(&canonical(), &Filters { speaker: None, from: Some(0.0), to: Some(100.0) });
        let lines: Vec<String> = view
            .speakers
            .iter()
            .map(|s| {
                format!("{} {} {} {} {}-{}", s.speaker, s.seconds, s.share, s.segments, s.first_s, s.last_s)
            })
            .collect();
        assert_eq!(view.speech_s, 24.0);
        expect![[r#"
            [
                "A 20 0.8333 2 0-30",
                "B 4 0.1667 1 12-16",
            ]
        "#]]
        .assert_debug_eq(&lines);
    }

    /// `from=5&to=20` once answered an empty clipped turn 20–20 (the turn that starts at `to`), and the
    /// speakers call counted its speaker with 0 s and 1 segment: a turn that only touches the window
    /// does not overlap it.
    #[test]
    fn a_turn_that_only_touches_the_window_is_not_in_it() {
        check_transcript(
            &[("from", "10"), ("to", "20")],
            expect![[r#"
                Filters { speaker: None, from: Some(10.0), to: Some(20.0) }
                B None 12-16 "yes indeed"
            "#]],
        );
        let view = speakers(&canonical(), &Filters { speaker: None, from: Some(10.0), to: Some(20.0) });
        let counted: Vec<(&str, f64, usize)> =
            view.speakers.iter().map(|s| (s.speaker.as_str(), s.seconds, s.segments)).collect();
        assert_eq!(counted, [("B", 4.0, 1)]);
        // A window of no length takes the turn it falls in, and at a boundary the turn that starts there.
        check_transcript(
            &[("from", "12"), ("to", "12")],
            expect![[r#"
                Filters { speaker: None, from: Some(12.0), to: Some(12.0) }
                B None 12-12 "" clipped
            "#]],
        );
    }

    /// A window without speech once answered `"speech_s": -0.0` (an empty `f64` sum is `-0.0`).
    #[test]
    fn an_empty_window_has_no_negative_zero() {
        let view = speakers(&canonical(), &Filters { speaker: None, from: Some(100.0), to: Some(200.0) });
        let json = serde_json::to_value(&view).unwrap();
        let answer = serde_json::json!({
            "window": json["window"],
            "speech_s": json["speech_s"],
            "speakers": json["speakers"],
        });
        expect![[r#"{"speakers":[],"speech_s":0.0,"window":{"from":100.0,"to":200.0}}"#]]
            .assert_eq(&answer.to_string());
        assert!(!serde_json::to_string(&view).unwrap().contains("-0"));
    }

    #[test]
    fn a_list_page_stops_at_the_byte_budget_and_its_cursor_goes_on() {
        // Five items of 400 KiB: a page of twenty holds two of them, and the cursors walk all five once.
        let items: Vec<String> = (0..5).map(|n| n.to_string().repeat(400 * 1024)).collect();
        let mut page = Page { offset: 0, limit: 20 };
        let mut seen = Vec::new();
        loop {
            let (got, next) = page.slice_within(&items);
            assert!(!got.is_empty() && got.len() <= 2, "{}", got.len());
            seen.extend(got.iter().map(|item| &item[..1]));
            match next {
                Some(cursor) => page.offset = crate::paging::decode_cursor(&cursor).unwrap(),
                None => break,
            }
        }
        assert_eq!(seen, ["0", "1", "2", "3", "4"]);
        let (small, next) = Page { offset: 1, limit: 2 }.slice_within(&["a", "b", "c", "d"]);
        assert_eq!((small, next.and_then(|c| crate::paging::decode_cursor(&c))), (&["b", "c"][..], Some(3)));
    }
}
