//! A transcription service, as the intake speaks to it: what to send to have an episode's audio
//! transcribed (AssemblyAI's `POST /v2/transcript`, Deepgram's `POST /v1/listen` with a callback),
//! how to ask where it stands (AssemblyAI's `GET /v2/transcript/{id}`; Deepgram answers only by
//! its callback), and what its answer becomes: a run that keeps what the service said, its
//! pipeline naming the service and its model.
//!
//! AssemblyAI names the voices itself when asked (`speech_understanding` … `speaker_identification`
//! with the names the feed and the show's roster know): it then writes names where its labels were,
//! and gives the `mapping` from label to name. The run keeps the labels (`A`, `B`) and the mapping
//! beside them ([`Run::speaker_names`]), so the service's naming is one source's vote, as every
//! service's is, and a person who corrects it corrects a label.
//!
//! Nothing here does IO: the edge sends each [`Call`] and hands back the answer.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::clean::{self, TextKind};
use crate::quotes::transcript::import::{Format, parse_assemblyai, parse_deepgram, tidy};
use crate::quotes::transcript::{Run, RunKind, Segment, names};

/// A transcription service the site may be configured with (`TRANSCRIBE_PROVIDER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    AssemblyAi,
    Deepgram,
}

/// Deepgram's model, asked for by name.
pub const DEEPGRAM_MODEL: &str = "nova-3";

impl Service {
    /// The service `TRANSCRIBE_PROVIDER` names (`assemblyai`, `deepgram`); `None` for none.
    pub fn named(setting: &str) -> Result<Option<Service>, String> {
        match setting.trim().to_ascii_lowercase().as_str() {
            "" | "none" => Ok(None),
            "assemblyai" => Ok(Some(Service::AssemblyAi)),
            "deepgram" => Ok(Some(Service::Deepgram)),
            other => {
                Err(format!("TRANSCRIBE_PROVIDER is `{other}`: it is `assemblyai`, `deepgram` or unset"))
            }
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Service::AssemblyAi => "assemblyai",
            Service::Deepgram => "deepgram",
        }
    }

    /// The service's name as a person reads it.
    pub fn name(self) -> &'static str {
        match self {
            Service::AssemblyAi => "AssemblyAI",
            Service::Deepgram => "Deepgram",
        }
    }

    /// The setting of the service's address, and its default.
    pub fn base_setting(self) -> (&'static str, &'static str) {
        match self {
            Service::AssemblyAi => ("ASSEMBLYAI_BASE_URL", "https://api.assemblyai.com"),
            Service::Deepgram => ("DEEPGRAM_BASE_URL", "https://api.deepgram.com"),
        }
    }

    /// The secret that holds the service's key.
    pub fn key_setting(self) -> &'static str {
        match self {
            Service::AssemblyAi => "ASSEMBLYAI_API_KEY",
            Service::Deepgram => "DEEPGRAM_API_KEY",
        }
    }

    /// Whether the service can be told to stop at a length (AssemblyAI's `audio_end_at`): a feed that
    /// claims a short episode then buys no more than it claimed. Deepgram cannot, so there a feed's
    /// claim is trusted until the service has measured the audio.
    pub fn can_be_held(self) -> bool {
        matches!(self, Service::AssemblyAi)
    }

    /// Whether the service can be asked where a transcription stands; one that cannot answers only
    /// by calling back, so a callback that never comes ends the job at its deadline.
    pub fn can_be_polled(self) -> bool {
        matches!(self, Service::AssemblyAi)
    }
}

/// One HTTP request to the service.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// The header AssemblyAI sends back with its webhook, carrying the job's token.
pub const WEBHOOK_HEADER: &str = "X-Commonplace-Token";

/// What to transcribe and where to call back.
#[derive(Debug, Clone, PartialEq)]
pub struct Order<'a> {
    pub audio_url: &'a str,
    /// The address the service calls when it has finished (the job's token in its query), when the
    /// site knows its own address; AssemblyAI is then polled only.
    pub callback: Option<&'a str>,
    /// The job's token, which the callback must carry.
    pub token: &'a str,
    /// The people who may speak (the show's roster, the feed's `<podcast:person>`), for a service
    /// that names voices.
    pub known_names: &'a [String],
    /// The seconds charged for it: a service that can be held to a length is held to
    /// [`cap_seconds`] of them.
    pub charged_s: i64,
}

/// The least an episode is charged before its transcription: a feed cannot claim its way under it.
pub const MIN_CHARGE_S: i64 = 300;

/// How much of the audio a service that can be held to a length transcribes, for `charged` seconds:
/// the feed's claim and a margin (a tenth, and five minutes), so an honest feed's slightly short
/// claim loses nothing and a lying one buys at most the margin more.
pub fn cap_seconds(charged: i64) -> i64 {
    charged + charged / 10 + 300
}

/// The seconds a finished transcription is charged: the length the service measured, and for a
/// service held to a length ([`Service::can_be_held`]), no more than it was held to.
pub fn settled_seconds(service: Service, charged: i64, measured: f64) -> i64 {
    let measured = measured.ceil() as i64;
    if service.can_be_held() { measured.min(cap_seconds(charged)) } else { measured }
}

/// The request that submits `order` to `service` at `base` with `key`.
pub fn submit(service: Service, base: &str, key: &str, order: &Order) -> Call {
    let base = base.trim_end_matches('/');
    match service {
        Service::AssemblyAi => {
            let mut body = json!({
                "audio_url": order.audio_url,
                "speaker_labels": true,
                "audio_end_at": cap_seconds(order.charged_s) * 1000,
            });
            if let Some(callback) = order.callback {
                body["webhook_url"] = json!(callback);
                body["webhook_auth_header_name"] = json!(WEBHOOK_HEADER);
                body["webhook_auth_header_value"] = json!(order.token);
            }
            // Each known value is at most 35 characters; longer names are left to the other sources.
            let known: Vec<&String> =
                order.known_names.iter().filter(|name| name.chars().count() <= 35).collect();
            if !known.is_empty() {
                body["speech_understanding"] = json!({
                    "request": { "speaker_identification": { "speaker_type": "name", "known_values": known } }
                });
            }
            Call {
                method: "POST",
                url: format!("{base}/v2/transcript"),
                headers: vec![
                    ("Authorization".into(), key.to_string()),
                    ("Content-Type".into(), "application/json".into()),
                ],
                body: Some(body.to_string()),
            }
        }
        Service::Deepgram => {
            let mut url = url::Url::parse(&format!("{base}/v1/listen")).expect("a base address");
            url.query_pairs_mut()
                .append_pair("model", DEEPGRAM_MODEL)
                .append_pair("diarize_model", "latest")
                .append_pair("utterances", "true")
                .append_pair("smart_format", "true");
            if let Some(callback) = order.callback {
                url.query_pairs_mut().append_pair("callback", callback);
            }
            Call {
                method: "POST",
                url: url.to_string(),
                headers: vec![
                    ("Authorization".into(), format!("Token {key}")),
                    ("Content-Type".into(), "application/json".into()),
                ],
                body: Some(json!({ "url": order.audio_url }).to_string()),
            }
        }
    }
}

/// The service's id of the transcription `submit` started, from its answer; `Err` says why none
/// was started, in words an operator can act on.
pub fn submitted(service: Service, status: u16, body: &[u8]) -> Result<String, String> {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return Err(refusal(service, status, &value));
    }
    let key = match service {
        Service::AssemblyAi => "id",
        Service::Deepgram => "request_id",
    };
    match value.get(key).and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(id.to_string()),
        _ => Err(format!("{} accepted the audio but gave no `{key}`", service.name())),
    }
}

fn refusal(service: Service, status: u16, value: &Value) -> String {
    let said = ["error", "err_msg", "message"].iter().find_map(|key| value.get(key).and_then(Value::as_str));
    let why = match status {
        401 | 403 => format!("refused the site's key ({})", service.key_setting()),
        402 => "says the account has no credit left".to_string(),
        429 => "is busy (HTTP 429); the job can be asked for again later".to_string(),
        _ => format!("answered HTTP {status}"),
    };
    match said {
        Some(said) => format!("{} {why}: {said}", service.name()),
        None => format!("{} {why}", service.name()),
    }
}

/// The request that asks where transcription `id` stands; `None` for a service that cannot be asked.
pub fn poll(service: Service, base: &str, key: &str, id: &str) -> Option<Call> {
    match service {
        Service::AssemblyAi => Some(Call {
            method: "GET",
            url: format!("{}/v2/transcript/{id}", base.trim_end_matches('/')),
            headers: vec![("Authorization".into(), key.to_string())],
            body: None,
        }),
        Service::Deepgram => None,
    }
}

/// Where a transcription stands, from the service's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Queued or processing.
    Waiting,
    /// Finished: the answer is the transcript.
    Done,
    /// The service could not transcribe it: why, in its words.
    Failed(String),
}

/// Where a transcription stands, from a poll's answer or a callback's body.
pub fn progress(service: Service, status: u16, body: &[u8]) -> Progress {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return match status {
            // A passing failure: asked again at the next poll.
            429 | 500..=599 => Progress::Waiting,
            _ => Progress::Failed(refusal(service, status, &value)),
        };
    }
    match service {
        Service::AssemblyAi => match value.get("status").and_then(Value::as_str) {
            Some("completed") => Progress::Done,
            Some("error") => Progress::Failed(format!(
                "AssemblyAI could not transcribe it: {}",
                value.get("error").and_then(Value::as_str).unwrap_or("it gave no reason")
            )),
            _ => Progress::Waiting,
        },
        Service::Deepgram => match (value.get("results"), value.get("err_msg").and_then(Value::as_str)) {
            (Some(_), _) => Progress::Done,
            (None, Some(said)) => Progress::Failed(format!("Deepgram could not transcribe it: {said}")),
            (None, None) => Progress::Failed("Deepgram's callback held no results".into()),
        },
    }
}

/// Which transcription a callback is about (AssemblyAI's `transcript_id`, Deepgram's
/// `metadata.request_id`), and whether it says the work finished.
pub fn callback_names(service: Service, body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let id = match service {
        Service::AssemblyAi => value.get("transcript_id"),
        Service::Deepgram => value.pointer("/metadata/request_id").or_else(|| value.get("request_id")),
    };
    id.and_then(Value::as_str).map(String::from)
}

/// A finished transcription: the run, and the audio's length the service measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcribed {
    pub run: Run,
    pub duration_s: Option<f64>,
}

/// The run of a finished transcription (`body` is the service's whole answer), made on `created`.
pub fn transcribed(service: Service, body: &[u8], created: &str) -> Result<Transcribed, String> {
    let text = std::str::from_utf8(body).map_err(|_| format!("{}'s answer is not UTF-8", service.name()))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|err| format!("{}'s answer is not JSON: {err}", service.name()))?;
    let (format, model, segments, duration_s, speaker_names) = match service {
        Service::AssemblyAi => {
            let segments =
                tidy(parse_assemblyai(text).map_err(|err| format!("AssemblyAI's transcript: {err}"))?);
            let mapping: BTreeMap<String, String> = value
                .pointer("/speech_understanding/response/speaker_identification/mapping")
                .and_then(Value::as_object)
                .map(|map| {
                    map.iter()
                        .filter_map(|(label, name)| {
                            Some((
                                label.clone(),
                                clean::tidied(name.as_str()?, TextKind::Line).trim().to_string(),
                            ))
                        })
                        .filter(|(_, name)| !name.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            let model = ["speech_model_used", "speech_model"]
                .iter()
                .find_map(|key| value.get(key).and_then(Value::as_str))
                .unwrap_or("universal")
                .to_string();
            let duration = value.get("audio_duration").and_then(Value::as_f64);
            let (segments, names) = labels_back(segments, &mapping);
            (Format::Assemblyai, model, segments, duration, names)
        }
        Service::Deepgram => {
            let segments = tidy(parse_deepgram(text).map_err(|err| format!("Deepgram's transcript: {err}"))?);
            let duration = value.pointer("/metadata/duration").and_then(Value::as_f64);
            (Format::Deepgram, DEEPGRAM_MODEL.to_string(), segments, duration, None)
        }
    };
    if segments.is_empty() {
        return Err(format!("{} heard no speech in the audio", service.name()));
    }
    let run = Run {
        pipeline: format!("{}-{}", service.code(), slug(&model)),
        kind: RunKind::Asr,
        created: created.to_string(),
        imported_from: Some(format.code().to_string()),
        segments,
        speaker_embeddings: None,
        speaker_names,
    };
    Ok(Transcribed { run, duration_s })
}

/// The segments with the service's labels where it wrote names, and the names by label (`None`
/// when the service named nobody).
///
/// A name the service gave to several of its labels cannot be taken back to one of them: those
/// turns go under one label of several voices (`A+B`, [`names::merged_label`]), whose vote the
/// service's name is, and which is never confident.
fn labels_back(
    mut segments: Vec<Segment>,
    mapping: &BTreeMap<String, String>,
) -> (Vec<Segment>, Option<BTreeMap<String, String>>) {
    if mapping.is_empty() {
        return (segments, None);
    }
    let mut labels_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (label, name) in mapping {
        labels_of.entry(name.as_str()).or_default().push(label.as_str());
    }
    let label_of: BTreeMap<&str, String> =
        labels_of.iter().map(|(name, labels)| (*name, names::merged_label(labels))).collect();
    for segment in &mut segments {
        if let Some(label) = label_of.get(segment.speaker.trim()) {
            segment.speaker.clone_from(label);
        }
    }
    let named = label_of.into_iter().map(|(name, label)| (label, name.to_string())).collect();
    (segments, Some(named))
}

/// A model's name as a pipeline id's part: lower case, letters, digits and dashes.
fn slug(model: &str) -> String {
    let slug: String = model
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' })
        .collect();
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() { "default".into() } else { slug }
}

/// The hours an episode is charged before its transcription: its feed's `itunes:duration`, else
/// its enclosure's length at 64 kbit/s (a low bitrate, so the guess errs long), else an hour. The
/// charge is settled to the length the service measured once it has finished.
pub fn estimated_hours(duration_s: Option<u32>, audio_bytes: Option<u64>) -> f64 {
    match (duration_s, audio_bytes) {
        (Some(seconds), _) if seconds > 0 => f64::from(seconds) / 3600.0,
        (_, Some(bytes)) if bytes > 0 => bytes as f64 / 8_000.0 / 3600.0,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASSEMBLYAI_DONE: &str = r#"{
        "id": "t-1", "status": "completed", "audio_duration": 12.5, "speech_model_used": "universal-2",
        "utterances": [
            {"speaker": "Rosa Quint", "start": 1000, "end": 4000, "text": "Good morning."},
            {"speaker": "B", "start": 4500, "end": 9000, "text": "The vote was never about the harbour."}
        ],
        "speech_understanding": {"request": {}, "response": {"speaker_identification": {
            "status": "success", "mapping": {"A": "Rosa Quint", "B": ""}}}}
    }"#;

    #[test]
    fn assemblyai_keeps_its_labels_and_its_names_beside_them() {
        let done = transcribed(Service::AssemblyAi, ASSEMBLYAI_DONE.as_bytes(), "2026-11-26").unwrap();
        let labels: Vec<&str> = done.run.segments.iter().map(|s| s.speaker.as_str()).collect();
        assert_eq!(labels, ["A", "B"]);
        let names = done.run.speaker_names.unwrap();
        assert_eq!(names.get("A").map(String::as_str), Some("Rosa Quint"));
        assert!(!names.contains_key("B"), "an empty name is no name");
        assert_eq!(done.run.pipeline, "assemblyai-universal-2");
        assert_eq!(done.duration_s, Some(12.5));
    }

    #[test]
    fn invisible_characters_in_the_services_words_are_left_out() {
        let done = ASSEMBLYAI_DONE.replace(
            r#""text": "Good morning."}"#,
            r#""text": "Good mor\u00adning.", "words": [{"text": "Good", "start": 1000, "end": 1500}, {"text": "mor\u00adning.", "start": 1500, "end": 4000}, {"text": "\u200b", "start": 3900, "end": 4000}]}"#,
        );
        let done = transcribed(Service::AssemblyAi, done.as_bytes(), "2026-11-26").unwrap();
        let first = &done.run.segments[0];
        assert_eq!(first.text, "Good mor\u{00AD}ning.", "prose may hold a soft hyphen");
        let words: Vec<&str> = first.words.iter().flatten().map(|w| w.w.as_str()).collect();
        assert_eq!(words, ["Good", "morning."], "a word is one visible line");
        assert!(crate::quotes::transcript::validate_run(&done.run).is_empty());
    }

    #[test]
    fn a_name_given_to_two_voices_keeps_their_turns_under_one_label_of_both() {
        let done = ASSEMBLYAI_DONE
            .replace(r#""speaker": "B""#, r#""speaker": "Rosa Quint""#)
            .replace(r#""B": """#, r#""B": "Rosa Quint", "C": "Ana Lima""#);
        let done = transcribed(Service::AssemblyAi, done.as_bytes(), "2026-11-26").unwrap();
        let labels: Vec<&str> = done.run.segments.iter().map(|s| s.speaker.as_str()).collect();
        assert_eq!(labels, ["A+B", "A+B"], "neither voice is taken for the other");
        let names = done.run.speaker_names.unwrap();
        assert_eq!(names.get("A+B").map(String::as_str), Some("Rosa Quint"));
        assert_eq!(names.get("C").map(String::as_str), Some("Ana Lima"));
        assert!(!names.contains_key("A") && !names.contains_key("B"));
    }

    #[test]
    fn a_submission_carries_the_callback_and_its_token_and_the_known_names() {
        let names = vec!["Rosa Quint".to_string(), "A name far longer than thirty-five characters".into()];
        let order = Order {
            audio_url: "https://cdn.example.org/1.mp3",
            callback: Some("https://site.example/api/intake/in_1/transcribed?token=t"),
            token: "t",
            known_names: &names,
            charged_s: 600,
        };
        let call = submit(Service::AssemblyAi, "https://api.assemblyai.com/", "k", &order);
        assert_eq!(call.url, "https://api.assemblyai.com/v2/transcript");
        let body: Value = serde_json::from_str(call.body.as_deref().unwrap()).unwrap();
        assert_eq!(body["webhook_auth_header_value"], "t");
        assert_eq!(body["audio_end_at"], 960_000, "held to the charge and its margin");
        assert_eq!(settled_seconds(Service::AssemblyAi, 1, 7200.0), 301, "a lying feed buys the margin");
        assert_eq!(settled_seconds(Service::Deepgram, 1, 7200.0), 7200);
        assert_eq!(
            body["speech_understanding"]["request"]["speaker_identification"]["known_values"],
            json!(["Rosa Quint"])
        );
        let call = submit(Service::Deepgram, "https://api.deepgram.com", "k", &order);
        assert!(call.url.starts_with("https://api.deepgram.com/v1/listen?model=nova-3&diarize_model=latest"));
        assert!(call.url.contains("callback=https%3A%2F%2Fsite.example"), "{}", call.url);
        assert_eq!(call.headers[0].1, "Token k");
    }

    #[test]
    fn the_services_answers_say_where_the_work_stands() {
        assert_eq!(progress(Service::AssemblyAi, 200, br#"{"status":"processing"}"#), Progress::Waiting);
        assert_eq!(progress(Service::AssemblyAi, 200, br#"{"status":"completed"}"#), Progress::Done);
        assert_eq!(progress(Service::AssemblyAi, 503, b""), Progress::Waiting);
        let Progress::Failed(why) =
            progress(Service::AssemblyAi, 200, br#"{"status":"error","error":"Download error"}"#)
        else {
            panic!("an error is a failure")
        };
        assert!(why.contains("Download error"), "{why}");
        let Err(why) = submitted(Service::Deepgram, 401, br#"{"err_msg":"Invalid credentials."}"#) else {
            panic!("a refused key starts nothing")
        };
        assert!(why.contains("DEEPGRAM_API_KEY") && why.contains("Invalid credentials"), "{why}");
        assert_eq!(submitted(Service::Deepgram, 200, br#"{"request_id":"r-1"}"#).unwrap(), "r-1");
        assert_eq!(
            callback_names(Service::Deepgram, br#"{"metadata":{"request_id":"r-1"},"results":{}}"#),
            Some("r-1".into())
        );
    }

    #[test]
    fn an_episode_is_charged_by_its_length_else_its_size_else_an_hour() {
        assert_eq!(estimated_hours(Some(1800), Some(1)), 0.5);
        assert_eq!(estimated_hours(None, Some(28_800_000)), 1.0);
        assert_eq!(estimated_hours(None, None), 1.0);
    }
}
