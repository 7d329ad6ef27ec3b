//! What a journalist pastes: a plain-text citation of a found quote, and a link that plays it.
//!
//! The citation names the speaker, the episode, the show, the date and the time the quote starts
//! (`h:mm:ss`, the form podcast players show). The link opens the episode's audio at that second
//! when the content names the audio (`audio_url` in `episode.json`): a media fragment (`#t=`, which
//! browsers' players follow), or the host's own time parameter where the host ignores fragments
//! (YouTube's `t=`); without audio it is the episode's page, which has no time to go to.

use crate::quotes::transcript::EpisodeRef;

/// `h:mm:ss` of a time in seconds (whole seconds, rounded down).
pub fn clock(seconds: f64) -> String {
    let whole = seconds.max(0.0).floor() as u64;
    format!("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60)
}

/// `Ana Lima, “Sourdough”, The Kitchen Table, 2024-03-01, at 0:01:05.`, or `at about 0:01:05.` when
/// the time is `estimated` (no timed word or measured boundary is there). `voices` are the quote's
/// speakers in order, each a name (if any) and its label: a quote that crosses from one to another
/// names each (`Ana Lima, then Ben Okafor, …`), so a citation never puts words in one mouth that
/// two people said. Without a name (withheld or unknown), `Unidentified speaker`, with the label only
/// when it is a machine's (`SPEAKER_01`, `B`, `spk_2`): a label that is a person's name (a
/// transcript's voice tag) would say the very name the service withholds.
pub fn cite(episode: &EpisodeRef, voices: &[(Option<&str>, &str)], start_s: f64, estimated: bool) -> String {
    let mut who: Vec<String> = Vec::new();
    for (name, speaker) in voices {
        let one = match name {
            Some(name) => name.to_string(),
            None if is_machine_label(speaker) => format!("Unidentified speaker ({speaker})"),
            None => "Unidentified speaker".to_string(),
        };
        if who.last() != Some(&one) {
            who.push(one);
        }
    }
    let who = who.join(", then ");
    let show = episode.show_title.as_deref().unwrap_or(&episode.show);
    let date = episode.published.as_deref().map(|date| format!(", {date}")).unwrap_or_default();
    let about = if estimated { "about " } else { "" };
    format!("{who}, “{}”, {show}{date}, at {about}{}.", episode.title, clock(start_s))
}

/// A diarization label that names no one: one letter, or any label with a digit in it.
fn is_machine_label(label: &str) -> bool {
    label.chars().count() == 1 || label.chars().any(|c| c.is_ascii_digit())
}

/// Where to listen from `start_s`.
pub fn listen_url(episode: &EpisodeRef, start_s: f64) -> String {
    let Some(audio) = episode.audio_url.as_deref().and_then(|url| url::Url::parse(url).ok()) else {
        return episode.source_url.clone();
    };
    let seconds = start_s.max(0.0).floor() as u64;
    let host = audio.host_str().unwrap_or_default().trim_start_matches("www.").trim_start_matches("m.");
    let mut url = audio.clone();
    if matches!(host, "youtube.com" | "youtu.be") {
        let kept: Vec<(String, String)> = audio
            .query_pairs()
            .filter(|(key, _)| key != "t")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        url.query_pairs_mut().clear().extend_pairs(kept).append_pair("t", &format!("{seconds}s"));
    } else {
        url.set_fragment(Some(&format!("t={seconds}")));
    }
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(audio_url: Option<&str>) -> EpisodeRef {
        EpisodeRef {
            show_title: Some("The Kitchen Table".into()),
            published: Some("2024-03-01".into()),
            audio_url: audio_url.map(str::to_string),
            ..crate::quotes::quote::fixtures::sourdough()
        }
    }

    #[test]
    fn a_citation_names_speaker_episode_show_date_and_time() {
        assert_eq!(
            cite(&episode(None), &[(Some("Ana Lima"), "SPEAKER_00")], 3725.9, false),
            "Ana Lima, “Sourdough”, The Kitchen Table, 2024-03-01, at 1:02:05."
        );
        assert_eq!(
            cite(&episode(None), &[(Some("Ana Lima"), "SPEAKER_00")], 3725.9, true),
            "Ana Lima, “Sourdough”, The Kitchen Table, 2024-03-01, at about 1:02:05.",
            "a time no timed word or boundary measured is said to be a guess"
        );
        let bare = EpisodeRef { show_title: None, published: None, ..episode(None) };
        assert_eq!(
            cite(&bare, &[(None, "SPEAKER_01")], 5.0, false),
            "Unidentified speaker (SPEAKER_01), “Sourdough”, kitchen-table, at 0:00:05."
        );
    }

    /// `cite` named only the first speaker of a quote two people said, while the page's heading
    /// named both.
    #[test]
    fn a_two_speaker_quote_is_cited_as_both_speakers() {
        assert_eq!(
            cite(&episode(None), &[(Some("Mara Oyelaran"), "A"), (Some("Tomas Lindqvist"), "B")], 5.0, false),
            "Mara Oyelaran, then Tomas Lindqvist, “Sourdough”, The Kitchen Table, 2024-03-01, at 0:00:05."
        );
        assert_eq!(
            cite(
                &episode(None),
                &[(Some("Mara Oyelaran"), "A"), (None, "B"), (Some("Mara Oyelaran"), "A")],
                5.0,
                false
            ),
            "Mara Oyelaran, then Unidentified speaker (B), then Mara Oyelaran, “Sourdough”, The Kitchen Table, 2024-03-01, at 0:00:05."
        );
    }

    #[test]
    fn a_withheld_name_does_not_leak_through_a_label_that_is_a_name() {
        assert_eq!(
            cite(&episode(None), &[(None, "Peter Pezaris")], 5.0, false),
            "Unidentified speaker, “Sourdough”, The Kitchen Table, 2024-03-01, at 0:00:05."
        );
        assert_eq!(
            cite(&episode(None), &[(None, "B")], 5.0, false),
            "Unidentified speaker (B), “Sourdough”, The Kitchen Table, 2024-03-01, at 0:00:05."
        );
    }

    #[test]
    fn listening_starts_at_the_quote_when_the_audio_is_known() {
        assert_eq!(listen_url(&episode(None), 65.2), "https://ex.com/1");
        assert_eq!(
            listen_url(&episode(Some("https://cdn.ex.com/ep1.mp3#old")), 65.2),
            "https://cdn.ex.com/ep1.mp3#t=65"
        );
        assert_eq!(
            listen_url(&episode(Some("https://www.youtube.com/watch?v=abc&t=3")), 65.2),
            "https://www.youtube.com/watch?v=abc&t=65s"
        );
        assert_eq!(listen_url(&episode(Some("https://youtu.be/abc")), 7.0), "https://youtu.be/abc?t=7s");
    }
}
