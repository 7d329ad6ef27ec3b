//! What the quote module's tests share: a one-speaker turn, the small episode they are from, and how
//! an answer to query parameters is checked.

use expect_test::Expect;

use crate::Diagnostic;
use crate::quotes::transcript::{EpisodeRef, Segment};

/// A turn with exact times and no words.
pub fn segment(speaker: &str, start_s: f64, end_s: f64, text: &str) -> Segment {
    Segment {
        speaker: speaker.into(),
        start_s,
        end_s,
        text: text.into(),
        start_estimated: false,
        end_estimated: false,
        words: None,
    }
}

/// The episode "Sourdough" of the show `kitchen-table`, with nothing optional known.
pub fn sourdough() -> EpisodeRef {
    EpisodeRef {
        id: "ep_aaaaaaaaaa".into(),
        title: "Sourdough".into(),
        source_url: "https://ex.com/1".into(),
        show: "kitchen-table".into(),
        licence: "CC0-1.0".into(),
        attribution: None,
        show_title: None,
        published: None,
        audio_url: None,
    }
}

/// Checks what a call given query parameters answered: the answer as `render` writes it, or, when the
/// parameters were refused, each problem on a line of its own.
pub fn check_answer<T>(answer: Result<T, Vec<Diagnostic>>, render: impl FnOnce(T) -> String, expect: Expect) {
    let rendered = match answer {
        Ok(value) => render(value),
        Err(problems) => problems.iter().map(|p| format!("{p}\n")).collect(),
    };
    expect.assert_eq(&rendered);
}
