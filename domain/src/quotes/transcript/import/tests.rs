//! Each importer on its fixture in `tests/data/transcripts/`, rendered one segment a line and compared
//! with `tests/data/transcripts/expected/<fixture>.txt` (refresh with `UPDATE_EXPECT=1`).

use super::*;
use expect_test::expect_file;

// A test reads its fixture from disk; the rule against IO is for the library (domain/clippy.toml).
#[allow(clippy::disallowed_methods)]
fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/data/transcripts/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

fn render(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        let mark = |estimated: bool| if estimated { "~" } else { "" };
        out.push_str(&format!(
            "{} [{}{}-{}{}] {}",
            s.speaker,
            mark(s.start_estimated),
            s.start_s,
            mark(s.end_estimated),
            s.end_s,
            s.text
        ));
        if let Some(words) = &s.words {
            let estimated: Vec<&str> = words.iter().filter(|w| w.estimated).map(|w| w.w.as_str()).collect();
            out.push_str(&format!(" | {} words", words.len()));
            if !estimated.is_empty() {
                out.push_str(&format!(", estimated: {}", estimated.join(" ")));
            }
        }
        out.push('\n');
    }
    out
}

fn check(format: Format, name: &str, companion: Option<&str>) {
    let companion = companion.map(fixture);
    let segments = import(format, &fixture(name), companion.as_deref()).unwrap();
    let stem = name.split('.').next().unwrap();
    expect_file![format!("../../../../../tests/data/transcripts/expected/{stem}.txt")]
        .assert_eq(&render(&segments));
}

/// Every importer on its fixture; what each fixture shows is said beside it. A failure names the
/// fixture in its diff, and `UPDATE_EXPECT=1` refreshes them all.
#[test]
fn each_importer_reads_its_fixture() {
    for (format, name, companion) in [
        // WhisperX leaves numerals without word times: theirs are interpolated.
        (Format::Whisperx, "whisperx.json", None),
        // AssemblyAI's times are milliseconds.
        (Format::Assemblyai, "assemblyai.json", None),
        // Deepgram's utterances become segments.
        (Format::Deepgram, "deepgram.json", None),
        // Podcasting 2.0 pieces, often a word each, are grouped into one segment a speaker turn.
        (Format::Podcasting20, "podcasting20.json", None),
        // A WebVTT cue of several voices is split, each line's share of its time by its length.
        (Format::Webvtt, "webvtt.vtt", None),
        // RTTM turns give the cues of the companion subtitles the speaker who overlaps them most.
        (Format::Rttm, "pyannote.rttm", Some("pyannote.srt")),
        // Changelog's time anchors are measured times; the rest are estimated.
        (Format::ChangelogMd, "changelog.md", None),
    ] {
        check(format, name, companion);
    }
}

#[test]
fn deepgram_words_without_utterances_group_into_turns() {
    let text = r#"{"results":{"channels":[{"alternatives":[{"words":[
        {"word":"hi","punctuated_word":"Hi,","start":0.1,"end":0.3,"speaker":0},
        {"word":"there","punctuated_word":"there.","start":0.3,"end":0.6,"speaker":0},
        {"word":"hello","punctuated_word":"Hello!","start":1.0,"end":1.4,"speaker":1}]}]}]}}"#;
    expect_test::expect![[r#"
        speaker_0 [0.1-0.6] Hi, there. | 2 words
        speaker_1 [1-1.4] Hello! | 1 words
    "#]]
    .assert_eq(&render(&parse_deepgram(text).unwrap()));
}

#[test]
fn broken_input_is_an_error_not_a_panic() {
    assert!(import(Format::Whisperx, "{", None).unwrap_err().starts_with("not JSON"));
    assert_eq!(import(Format::Deepgram, "{}", None).unwrap_err(), "no `results` object");
    assert_eq!(import(Format::Webvtt, "hello", None).unwrap_err(), "a WebVTT file starts with `WEBVTT`");
    assert!(import(Format::Rttm, "SPEAKER x 1 0 1 <NA> <NA> S0 <NA> <NA>", None).is_err());
    assert_eq!(
        import(Format::ChangelogMd, "no speakers here", None).unwrap_err(),
        "the file holds no speech"
    );
}

#[test]
fn changelog_file_names_map_to_episode_pages() {
    assert_eq!(
        changelog_source_url("podcast/the-changelog-500.md", Some("the-changelog")).as_deref(),
        Some("https://changelog.com/podcast/500")
    );
    assert_eq!(
        changelog_source_url("rfc/request-for-commits-13.md", None).as_deref(),
        Some("https://changelog.com/rfc/13")
    );
    assert_eq!(
        changelog_source_url("jsparty/js-party-meet-rachel-white.md", Some("js-party")).as_deref(),
        Some("https://changelog.com/jsparty/meet-rachel-white")
    );
}

#[test]
fn changelog_control_characters_separate_words_and_never_reach_the_text() {
    let segments = parse_changelog("**Ana:** \\[00:01\\] Hello\u{1d}there, \u{1d}friend.\n");
    let texts: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["Hello there, friend."]);
}

/// A transcriber's mark with a time (`\[unintelligible 00:57:17.06\]`, 8,976 of them in the Changelog
/// corpus) stayed in the text with its digits, and the words after it were timed by interpolation, 15 s
/// off in one sampled quote: the mark's time is an anchor, and its word stays in the text.
#[test]
fn a_changelog_mark_with_a_time_is_an_anchor_and_keeps_its_word() {
    let markdown = "**Ana:** \\[00:00:10\\] Hello there, and welcome to the show.\n\n\
                    **Ben:** Thanks. \\[unintelligible 00:01:40.50\\] That's coming along pretty well.\n\n\
                    **Ana:** \\[laughter\\] Great.";
    expect_test::expect![[r#"
        Ana [10-~82.793] Hello there, and welcome to the show.
        Ben [~84.761-100.5] Thanks.
        Ben [100.5-~196.902] [unintelligible] That's coming along pretty well.
        Ana [~198.87-~232.315] [laughter] Great.
    "#]]
    .assert_eq(&render(&import(Format::ChangelogMd, markdown, None).unwrap()));
}
