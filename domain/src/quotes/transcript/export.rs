//! Downloads of a canonical transcript: WebVTT with voice tags and Podcasting 2.0 JSON. Both carry the
//! episode's licence and credit, since a transcript file travels without its episode record.

use serde_json::json;

use crate::quotes::transcript::Canonical;

fn vtt_time(seconds: f64) -> String {
    let total_ms = (seconds.max(0.0) * 1000.0).round() as u64;
    let (h, rest) = (total_ms / 3_600_000, total_ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    format!("{h:02}:{m:02}:{:02}.{:03}", rest / 1000, rest % 1000)
}

/// The name a download shows for a label: the name when there is one, else the label.
fn voice(canonical: &Canonical, label: &str) -> String {
    canonical.speaker(label).name.unwrap_or_else(|| label.to_string())
}

/// WebVTT, one cue per segment, `<v Name>` for the voice.
pub fn to_webvtt(canonical: &Canonical) -> String {
    let episode = &canonical.episode;
    let mut out = format!(
        "WEBVTT\n\nNOTE\n{}\n{}\nLicence: {}{}\nPipeline: {}\n",
        episode.title.replace("-->", "->"),
        episode.source_url,
        episode.licence,
        episode.attribution.as_deref().map(|a| format!(", {a}")).unwrap_or_default(),
        canonical.pipeline
    );
    for (idx, segment) in canonical.segments.iter().enumerate() {
        let name = voice(canonical, &segment.speaker).replace(['<', '>'], "");
        let text = segment.text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        out.push_str(&format!(
            "\n{}\n{} --> {}\n<v {name}>{text}\n",
            idx + 1,
            vtt_time(segment.start_s),
            vtt_time(segment.end_s.max(segment.start_s + 0.001))
        ));
    }
    out
}

/// Podcasting 2.0 transcript JSON (`version` 1.0.0), one entry per segment.
pub fn to_podcasting20(canonical: &Canonical) -> serde_json::Value {
    let segments: Vec<serde_json::Value> = canonical
        .segments
        .iter()
        .map(|segment| {
            json!({
                "speaker": voice(canonical, &segment.speaker),
                "startTime": segment.start_s,
                "endTime": segment.end_s,
                "body": segment.text,
            })
        })
        .collect();
    json!({
        "version": "1.0.0",
        "title": canonical.episode.title,
        "source": canonical.episode.source_url,
        "licence": canonical.episode.licence,
        "attribution": canonical.episode.attribution,
        "segments": segments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::transcript::import::{Format, import};
    use crate::quotes::transcript::{EpisodeRef, RunKind};

    #[test]
    fn webvtt_round_trips_through_the_importer() {
        let text = "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\n<v Ana>Hello & welcome.\n\n00:01:02.000 --> 01:00:00.000\n<v Ben>Thanks!\n";
        let segments = import(Format::Webvtt, text, None).unwrap();
        let canonical = Canonical {
            episode: EpisodeRef {
                id: "ep_aaaaaaaaaa".into(),
                title: "T".into(),
                source_url: "https://ex.com/1".into(),
                show: "s".into(),
                licence: "CC-BY-SA-4.0".into(),
                attribution: Some("© Someone".into()),
                show_title: None,
                published: None,
                audio_url: None,
            },
            pipeline: "webvtt".into(),
            kind: RunKind::Asr,
            speakers: Default::default(),
            segments: segments.clone(),
        };
        let exported = to_webvtt(&canonical);
        expect_test::expect![[r#"
            WEBVTT

            NOTE
            T
            https://ex.com/1
            Licence: CC-BY-SA-4.0, © Someone
            Pipeline: webvtt

            1
            00:00:01.000 --> 00:00:02.500
            <v Ana>Hello &amp; welcome.

            2
            00:01:02.000 --> 01:00:00.000
            <v Ben>Thanks!
        "#]]
        .assert_eq(&exported);
        let again = import(Format::Webvtt, &exported, None).unwrap();
        assert_eq!(again, segments);
        let p20 = to_podcasting20(&canonical);
        let back = import(Format::Podcasting20, &p20.to_string(), None).unwrap();
        assert_eq!(back.iter().map(|s| &s.text).collect::<Vec<_>>(), ["Hello & welcome.", "Thanks!"]);
    }
}
