//! Scripted AssemblyAI and Deepgram on loopback, speaking their real protocols to the Worker.
//!
//! AssemblyAI (`POST /v2/transcript`, `GET /v2/transcript/{id}`): the key in `Authorization`; a
//! submission is `queued`, then `processing`, then `completed` (or `error` when the audio cannot be
//! downloaded), by the time since it was made; when asked with `webhook_url`, the webhook is `POST`ed
//! with the `webhook_auth_header_*` pair and `{transcript_id, status}`. With `known_values`, the
//! utterances carry names where the labels were and `speech_understanding.response` gives the mapping.
//!
//! Deepgram (`POST /v1/listen?model=…&callback=…`): the key as `Authorization: Token …`; answers
//! `{request_id}` at once, or 400 when the audio cannot be read, and `POST`s the whole result to the
//! callback.
//!
//! Each fetches the audio and reads its length from its WAV header, as a service measures it. What
//! each episode does follows its audio's name ([`crate::scripted::UNTRANSCRIBED`]): `twice` calls
//! back twice, `quiet` never calls back. Every callback's answer is kept in [`Transcriber::events`].
//! A caller may script what AssemblyAI says of an audio instead ([`assemblyai_saying`], [`Said`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::net::TcpStream;

use crate::scripted::{Listener, respond, serve_requests};

/// The key the Worker is given for either service.
pub const KEY: &str = "scripted-transcription-key";

/// A scripted service and what happened to it.
pub struct Transcriber {
    pub listener: Listener,
    /// `submitted <id> <audio>`, `callback <id> <status> <body>`, `poll <id> <status>`, in order.
    pub events: Arc<Mutex<Vec<String>>>,
}

impl Transcriber {
    pub fn base(&self) -> String {
        format!("http://{}", self.listener.addr)
    }

    pub fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

/// One submission: when it was made, its audio's name and length, and what went wrong reading it.
#[derive(Clone)]
struct Job {
    at: Instant,
    name: String,
    seconds: f64,
    error: Option<String>,
    known: Vec<String>,
}

type Jobs = Arc<Mutex<Vec<(String, Job)>>>;

/// What the scripted AssemblyAI says of one audio, by the audio's name (`…/audio/<name>-<seconds>.wav`):
/// its utterances (label, start and end in seconds, text) and the name its speaker identification
/// gives each label it names (a name it was not told, `known_values`, it does not give).
#[derive(Debug, Clone, Default)]
pub struct Said {
    pub utterances: Vec<(String, f64, f64, String)>,
    pub names: BTreeMap<String, String>,
}

/// What the scripted AssemblyAI says, by audio name; an audio not named here gets [`script`].
pub type Scripts = Arc<HashMap<String, Said>>;

/// Reads the audio at `url` as a service would: its length from the WAV header, or why it cannot.
async fn measure(url: &str) -> (f64, Option<String>) {
    let answer = match reqwest::get(url).await {
        Ok(answer) => answer,
        Err(err) => return (0.0, Some(format!("Download error, unable to download {url}: {err}"))),
    };
    if !answer.status().is_success() {
        let status = answer.status().as_u16();
        return (0.0, Some(format!("Download error, unable to download {url}: HTTP {status}")));
    }
    let bytes = answer.bytes().await.unwrap_or_default();
    if bytes.len() < 44 || &bytes[..4] != b"RIFF" {
        return (0.0, Some("Transcoding failed: the file is not audio".into()));
    }
    let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (f64::from(word(40)) / f64::from(word(28).max(1)), None)
}

/// The episode's name from its audio's address (`…/audio/<name>-<seconds>.wav`).
fn name_of(url: &str) -> String {
    let file = url.rsplit('/').next().unwrap_or_default();
    file.split('-').next().unwrap_or_default().to_string()
}

/// What the scripted voices say in episode `name`: label, start and end (s), text.
fn script(name: &str) -> Vec<(&'static str, f64, f64, String)> {
    vec![
        (
            "A",
            0.5,
            4.0,
            "Good morning, I'm Rosa Quint and this is the Harbour Diary. My guest today is Ines Varga."
                .into(),
        ),
        (
            "B",
            4.5,
            9.0,
            format!("Thank you, Rosa. The harbour vote was never about the harbour, it was about {name}."),
        ),
        ("A", 9.5, 12.0, "Thank you for coming in.".to_string()),
    ]
}

/// Who each label is, when the service is told the names it may give.
fn identified(label: &str, known: &[String]) -> Option<String> {
    let name = match label {
        "A" => "Rosa Quint",
        "B" => "Ines Varga",
        _ => return None,
    };
    known.iter().any(|k| k == name).then(|| name.to_string())
}

async fn call_back(url: &str, header: Option<(&str, &str)>, body: &Value, events: &Arc<Mutex<Vec<String>>>) {
    let mut request = reqwest::Client::new().post(url).json(body);
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    let said = match request.send().await {
        Ok(answer) => format!("{} {}", answer.status().as_u16(), answer.text().await.unwrap_or_default()),
        Err(err) => format!("unreached {err}"),
    };
    let id = body.get("transcript_id").or_else(|| body.pointer("/metadata/request_id"));
    events.lock().unwrap().push(format!("callback {} {said}", id.and_then(Value::as_str).unwrap_or("?")));
}

/// What the service says of `job`'s audio: the caller's script for it, else [`script`] and
/// [`identified`].
fn said_of(job: &Job, scripts: &Scripts) -> Said {
    if let Some(said) = scripts.get(&job.name) {
        let names = said.names.iter().filter(|(_, name)| job.known.contains(name));
        return Said {
            utterances: said.utterances.clone(),
            names: names.map(|(label, name)| (label.clone(), name.clone())).collect(),
        };
    }
    Said {
        utterances: script(&job.name)
            .into_iter()
            .map(|(label, s, e, text)| (label.to_string(), s, e, text))
            .collect(),
        names: ["A", "B"].iter().filter_map(|l| Some((l.to_string(), identified(l, &job.known)?))).collect(),
    }
}

/// AssemblyAI's transcript as `GET /v2/transcript/{id}` gives it.
fn assemblyai_transcript(id: &str, job: &Job, scripts: &Scripts) -> Value {
    let status = match (job.error.as_ref(), job.at.elapsed()) {
        (Some(_), _) => "error",
        (None, age) if age < Duration::from_millis(300) => "queued",
        (None, age) if age < Duration::from_millis(800) => "processing",
        _ => "completed",
    };
    let mut transcript = json!({ "id": id, "status": status, "speech_model_used": "universal-2" });
    if let Some(error) = &job.error {
        transcript["error"] = json!(error);
        return transcript;
    }
    if status != "completed" {
        return transcript;
    }
    let said = said_of(job, scripts);
    let utterances: Vec<Value> = said
        .utterances
        .iter()
        .map(|(label, start, end, text)| {
            let speaker = said.names.get(label).cloned().unwrap_or_else(|| label.clone());
            // A word every 200 ms, or closer when the utterance is too short for that.
            let count = text.split_whitespace().count().max(1) as f64;
            let step_ms = (((end - start) * 1000.0) / count).clamp(1.0, 200.0);
            let words: Vec<Value> = text
                .split_whitespace()
                .enumerate()
                .map(|(n, w)| {
                    let at = (start * 1000.0 + n as f64 * step_ms) as u64;
                    let end = at + (step_ms * 0.9) as u64;
                    json!({ "text": w, "start": at, "end": end, "speaker": speaker, "confidence": 0.97 })
                })
                .collect();
            json!({ "speaker": speaker, "start": (start * 1000.0) as u64, "end": (end * 1000.0) as u64,
                    "text": text, "confidence": 0.96, "words": words })
        })
        .collect();
    transcript["utterances"] = json!(utterances);
    transcript["audio_duration"] = json!(job.seconds);
    if !job.known.is_empty() {
        let mapping: serde_json::Map<String, Value> =
            said.names.iter().map(|(label, name)| (label.clone(), json!(name))).collect();
        transcript["speech_understanding"] = json!({
            "request": { "speaker_identification": { "speaker_type": "name", "known_values": job.known } },
            "response": { "speaker_identification": { "status": "success", "mapping": mapping } }
        });
    }
    transcript
}

/// Answers JSON with `status`.
async fn json_answer(stream: &mut BufReader<TcpStream>, status: &str, body: &str) {
    let _ = respond(stream, status, &[("Content-Type", "application/json")], body).await;
}

/// A scripted AssemblyAI.
pub async fn assemblyai() -> Result<Transcriber> {
    assemblyai_saying(Scripts::default()).await
}

/// A scripted AssemblyAI that says what `scripts` give of the audios they name.
pub async fn assemblyai_saying(scripts: Scripts) -> Result<Transcriber> {
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let jobs: Jobs = Arc::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let log = events.clone();
    let listener = serve_requests(
        (log, jobs, counter, scripts),
        |(events, jobs, counter, scripts), request, mut stream| async move {
            if request.headers.get("authorization").map(String::as_str) != Some(KEY) {
                let body = json!({ "error": "Authentication error, API token missing/invalid" }).to_string();
                json_answer(&mut stream, "401 Unauthorized", &body).await;
                return;
            }
            if request.method == "POST" && request.path == "/v2/transcript" {
                let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
                let Some(audio) = body["audio_url"].as_str().map(String::from) else {
                    json_answer(&mut stream, "400 Bad Request", r#"{"error":"audio_url is required"}"#).await;
                    return;
                };
                let id = format!("aai-{}", counter.fetch_add(1, Ordering::SeqCst));
                let known: Vec<String> = body
                    .pointer("/speech_understanding/request/speaker_identification/known_values")
                    .and_then(Value::as_array)
                    .map(|values| values.iter().filter_map(|v| v.as_str().map(String::from)).collect())
                    .unwrap_or_default();
                let (seconds, error) = measure(&audio).await;
                let job = Job { at: Instant::now(), name: name_of(&audio), seconds, error, known };
                jobs.lock().unwrap().push((id.clone(), job.clone()));
                events.lock().unwrap().push(format!("submitted {id} {audio}"));
                if job.name == "stall" {
                    // Takes the submission, and answers it late.
                    tokio::time::sleep(Duration::from_secs(4)).await;
                }
                let queued = json!({ "id": id, "status": "queued", "audio_url": audio }).to_string();
                json_answer(&mut stream, "200 OK", &queued).await;
                let webhook = body["webhook_url"].as_str().map(String::from);
                let header = (
                    body["webhook_auth_header_name"].as_str().unwrap_or_default().to_string(),
                    body["webhook_auth_header_value"].as_str().unwrap_or_default().to_string(),
                );
                let (Some(webhook), false) = (webhook, job.name == "quiet") else { return };
                tokio::time::sleep(Duration::from_millis(900)).await;
                let status = if job.error.is_some() { "error" } else { "completed" };
                let note = json!({ "transcript_id": id, "status": status });
                let deliveries = if job.name == "twice" { 2 } else { 1 };
                for _ in 0..deliveries {
                    call_back(&webhook, Some((&header.0, &header.1)), &note, &events).await;
                }
                return;
            }
            if request.method == "GET"
                && let Some(id) = request.path.strip_prefix("/v2/transcript/")
            {
                let job =
                    jobs.lock().unwrap().iter().find(|(known, _)| known == id).map(|(_, job)| job.clone());
                let Some(job) = job else {
                    json_answer(&mut stream, "404 Not Found", r#"{"error":"Transcript not found"}"#).await;
                    return;
                };
                let transcript = assemblyai_transcript(id, &job, &scripts);
                events
                    .lock()
                    .unwrap()
                    .push(format!("poll {id} {}", transcript["status"].as_str().unwrap_or("?")));
                json_answer(&mut stream, "200 OK", &transcript.to_string()).await;
                return;
            }
            json_answer(&mut stream, "404 Not Found", r#"{"error":"Not found"}"#).await;
        },
    )
    .await?;
    Ok(Transcriber { listener, events })
}

/// Deepgram's result for episode `name`, as its callback delivers it.
fn deepgram_result(request_id: &str, name: &str, seconds: f64) -> Value {
    let speaker_of = |label: &str| if label == "A" { 0 } else { 1 };
    let utterances: Vec<Value> = script(name)
        .into_iter()
        .map(|(label, start, end, text)| {
            let words: Vec<Value> = text
                .split_whitespace()
                .enumerate()
                .map(|(n, w)| {
                    let at = start + n as f64 * 0.2;
                    json!({ "word": w.to_lowercase(), "punctuated_word": w, "start": at, "end": at + 0.18,
                            "confidence": 0.98, "speaker": speaker_of(label) })
                })
                .collect();
            json!({ "start": start, "end": end, "confidence": 0.97, "channel": 0, "transcript": text,
                    "words": words, "speaker": speaker_of(label), "id": format!("{request_id}-{start}") })
        })
        .collect();
    json!({
        "metadata": { "request_id": request_id, "duration": seconds, "channels": 1,
                      "models": ["nova-3"], "model_info": {} },
        "results": { "channels": [{ "alternatives": [{ "transcript": "", "confidence": 0.97, "words": [] }] }],
                     "utterances": utterances }
    })
}

/// A scripted Deepgram.
pub async fn deepgram() -> Result<Transcriber> {
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let log = events.clone();
    let listener = serve_requests((log, counter), |(events, counter), request, mut stream| async move {
        if request.headers.get("authorization").map(String::as_str) != Some(&format!("Token {KEY}")) {
            let body = json!({ "err_code": "INVALID_AUTH", "err_msg": "Invalid credentials." }).to_string();
            json_answer(&mut stream, "401 Unauthorized", &body).await;
            return;
        }
        if request.method != "POST" || request.path != "/v1/listen" {
            json_answer(&mut stream, "404 Not Found", r#"{"err_msg":"Not found"}"#).await;
            return;
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let audio = body["url"].as_str().unwrap_or_default().to_string();
        let (seconds, error) = measure(&audio).await;
        if let Some(error) = error {
            let body = json!({ "err_code": "REMOTE_CONTENT_ERROR", "err_msg": error }).to_string();
            json_answer(&mut stream, "400 Bad Request", &body).await;
            return;
        }
        let id = format!("dg-{}", counter.fetch_add(1, Ordering::SeqCst));
        events.lock().unwrap().push(format!("submitted {id} {audio}"));
        let name = name_of(&audio);
        // `early`: the callback comes before the submission's answer.
        if name == "early"
            && let Some(callback) = request.query.get("callback")
        {
            call_back(callback, None, &deepgram_result(&id, &name, seconds), &events).await;
        }
        json_answer(&mut stream, "200 OK", &json!({ "request_id": id }).to_string()).await;
        let quiet = matches!(name.as_str(), "quiet" | "early");
        let (Some(callback), false) = (request.query.get("callback").cloned(), quiet) else { return };
        tokio::time::sleep(Duration::from_millis(600)).await;
        let result = deepgram_result(&id, &name, seconds);
        for _ in 0..if name == "twice" { 2 } else { 1 } {
            call_back(&callback, None, &result, &events).await;
        }
    })
    .await?;
    Ok(Transcriber { listener, events })
}
