//! `builder identify` over a small content folder, with a scripted local server speaking the
//! OpenAI chat-completions protocol in place of the language model: a valid answer, an answer that is
//! not JSON, and one whose evidence is invented.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::*;

/// One request the scripted server saw.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: String,
    body: Value,
}

/// A chat-completions server on a free local port; `answer` maps the user message to the reply text.
fn scripted_llm(answer: fn(&str) -> String) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let (mut length, mut authorization) = (0, String::new());
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap_or((line, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "authorization" => authorization = value.trim().to_string(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap_or_default().to_string();
            let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
            log.lock().unwrap().push(Seen { path, authorization, body });
            let reply = json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": "test-model",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": answer(&user)}}],
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (base, seen)
}

/// Episode 2 is answered properly except for an invented quote; episode 3 gets prose, not JSON.
fn answer(user: &str) -> String {
    if user.contains("I'm Ana Lima") {
        json!({
            "SPEAKER_00": {"name": "Ana Lima", "evidence": "I'm Ana Lima"},
            "SPEAKER_01": {"name": "Ben Okafor", "evidence": "Ben, as you told me last week"},
        })
        .to_string()
    } else {
        "I think SPEAKER_00 is Ben.".to_string()
    }
}

fn segment(speaker: &str, start_s: f64, text: &str) -> Value {
    json!({"speaker": speaker, "start_s": start_s, "end_s": start_s + 2.0, "text": text})
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Three episodes of one show, oldest first: the first confirms Ana (a person's decision) and Ben
/// (WebVTT plus elimination), so their voices are on file for the later two.
fn content(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cp-identify-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let show = dir.join("shows/kt");
    write(&show.join("show.json"), &json!({"title": "KT", "licence": "CC0-1.0"}));
    let roster = json!([{"name": "Ana Lima", "role": "host"}, {"name": "Ben Okafor", "role": "guest"}]);
    let episode = |n: u32| {
        json!({"title": format!("Episode {n}"), "source_url": format!("https://example.com/kt/{n}"),
               "published": format!("2025-0{n}-01"), "roster": roster})
    };
    let run = |pipeline: &str, format: &str, segments: Vec<Value>, embeddings: Value| {
        json!({"pipeline": pipeline, "kind": "asr", "created": "2025-01-01", "imported_from": format,
               "segments": segments, "speaker_embeddings": {"model": "wespeaker-test", "labels": embeddings}})
    };
    write(&show.join("one/episode.json"), &episode(1));
    write(
        &show.join("one/runs/webvtt.json"),
        &run(
            "webvtt",
            "webvtt",
            vec![segment("Ana Lima", 0.0, "Good morning everyone."), segment("Ben Okafor", 3.0, "Morning.")],
            json!({"Ana Lima": [1.0, 0.0, 0.0, 0.0], "Ben Okafor": [0.0, 1.0, 0.0, 0.0]}),
        ),
    );
    write(
        &show.join("one/names.json"),
        &json!({"labels": {"Ana Lima": {"votes": [], "human": {"name": "Ana Lima", "by": "ed"}}}}),
    );
    write(&show.join("two/episode.json"), &episode(2));
    write(
        &show.join("two/runs/whisperx.json"),
        &run(
            "whisperx",
            "whisperx",
            vec![
                segment("SPEAKER_00", 0.0, "Welcome to the show. I'm Ana Lima."),
                segment("SPEAKER_01", 3.0, "Glad to be here."),
                segment("SPEAKER_00", 6.0, "So how did it start?"),
            ],
            // Ana's voice, and a voice nobody has on file.
            json!({"SPEAKER_00": [0.95, 0.05, 0.0, 0.1], "SPEAKER_01": [0.1, 0.2, 0.9, 0.3]}),
        ),
    );
    write(&show.join("three/episode.json"), &episode(3));
    write(
        &show.join("three/runs/whisperx.json"),
        &run(
            "whisperx",
            "whisperx",
            vec![segment("SPEAKER_00", 0.0, "Hello again."), segment("SPEAKER_01", 3.0, "Hi.")],
            json!({"SPEAKER_00": [0.05, 0.98, 0.0, 0.0], "SPEAKER_01": [0.7, 0.0, 0.7, 0.0]}),
        ),
    );
    write(
        &show.join("three/names.json"),
        &json!({"labels": {"SPEAKER_01": {"votes": [], "human": {"name": "Cy Doe", "by": "ed", "note": "a visitor"}}}}),
    );
    dir
}

fn config(base: &str) -> AiConfig {
    AiConfig { base_url: base.into(), model: "test-model".into(), api_key: Some("test-key".into()) }
}

fn show(outcomes: &[Outcome], dir: &Path, expect: Expect) {
    let mut text = String::new();
    for outcome in outcomes {
        text.push_str(&format!("{} changed={}\n", outcome.folder, outcome.changed));
        let names: Names = read_json(&dir.join("shows").join(&outcome.folder).join("names.json")).unwrap();
        for (label, (state, name)) in &outcome.states {
            text.push_str(&format!("  {label}: {} {}\n", state_code(*state), name.as_deref().unwrap_or("-")));
            for vote in names.labels.get(label).map(|e| e.votes.as_slice()).unwrap_or_default() {
                text.push_str(&format!(
                    "    {:?} {} | {}\n",
                    vote.source,
                    vote.name.as_deref().unwrap_or("-"),
                    vote.evidence
                ));
            }
            if let Some(human) = names.labels.get(label).and_then(|e| e.human.as_ref()) {
                text.push_str(&format!("    human {} by {}\n", human.name, human.by));
            }
        }
    }
    expect.assert_eq(&text);
}

#[test]
fn identify_votes_with_every_source_and_a_rerun_changes_nothing() {
    let (base, seen) = scripted_llm(answer);
    let dir = content("all");
    let outcomes = identify(&dir, &Which::All, Some(&config(&base))).unwrap();
    show(
        &outcomes,
        &dir,
        expect![[r#"
        kt/one changed=true
          Ana Lima: human Ana Lima
            Asr Ana Lima | voice tag in the imported WebVTT file
            LanguageModel - | no turn introduces or addresses anyone
            VoiceMatch - | no confirmed voice of model wespeaker-test on an earlier episode
            human Ana Lima by ed
          Ben Okafor: confident Ben Okafor
            Asr Ben Okafor | voice tag in the imported WebVTT file
            LanguageModel - | no turn introduces or addresses anyone
            VoiceMatch - | no confirmed voice of model wespeaker-test on an earlier episode
        kt/two changed=true
          SPEAKER_00: confident Ana Lima
            Asr - | whisperx gives diarization labels, not names
            LanguageModel Ana Lima | "I'm Ana Lima"
            VoiceMatch Ana Lima | cosine 0.99 to Ana Lima's voiceprint from 1 episode(s); runner-up Ben Okafor 0.05
          SPEAKER_01: tentative Ben Okafor
            Asr - | whisperx gives diarization labels, not names
            LanguageModel - | named `Ben Okafor` on evidence that is not in the transcript (`Ben, as you told me last week`); discarded
            VoiceMatch - | unknown voice: best Ben Okafor 0.21 is below 0.60; runner-up Ana Lima 0.10
        kt/three changed=true
          SPEAKER_00: tentative Ben Okafor
            Asr - | whisperx gives diarization labels, not names
            LanguageModel - | the model's answer is not strict JSON (expected value at line 1 column 1)
            VoiceMatch Ben Okafor | cosine 1.00 to Ben Okafor's voiceprint from 1 episode(s); runner-up Ana Lima 0.08
          SPEAKER_01: human Cy Doe
            Asr - | whisperx gives diarization labels, not names
            LanguageModel - | the model's answer is not strict JSON (expected value at line 1 column 1)
            VoiceMatch Ana Lima | cosine 0.71 to Ana Lima's voiceprint from 2 episode(s); runner-up Ben Okafor 0.00
            human Cy Doe by ed
    "#]],
    );

    let requests = seen.lock().unwrap().clone();
    // Episode one has no turn that introduces anyone: the model is not asked about it.
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.authorization, "Bearer test-key");
        assert_eq!(request.body["model"], "test-model");
        assert!(request.body["messages"][1]["content"].as_str().unwrap().contains("- Ana Lima (host)"));
    }

    // Idempotent: the same questions are not asked again and no file changes.
    let files = |dir: &Path| -> Vec<String> {
        ["one", "two", "three"]
            .iter()
            .map(|e| std::fs::read_to_string(dir.join(format!("shows/kt/{e}/names.json"))).unwrap())
            .collect()
    };
    let before = files(&dir);
    let again = identify(&dir, &Which::All, Some(&config(&base))).unwrap();
    let changed: Vec<&str> = again.iter().filter(|o| o.changed).map(|o| o.folder.as_str()).collect();
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(files(&dir), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_episode_without_a_model_keeps_the_model_votes_and_human_decisions() {
    let dir = content("one");
    let outcomes = identify(&dir, &Which::One("kt/three".into()), None).unwrap();
    show(
        &outcomes,
        &dir,
        expect![[r#"
        kt/three changed=true
          SPEAKER_00: unknown -
            Asr - | whisperx gives diarization labels, not names
            VoiceMatch - | unknown voice: best Ana Lima 0.05 is below 0.60
          SPEAKER_01: human Cy Doe
            Asr - | whisperx gives diarization labels, not names
            VoiceMatch Ana Lima | cosine 0.71 to Ana Lima's voiceprint from 1 episode(s)
            human Cy Doe by ed
    "#]],
    );
    assert!(identify(&dir, &Which::One("kt/nope".into()), None).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Each label (`<show>/<episode> <label>`) with its state and name.
type States = BTreeMap<String, (NameState, Option<String>)>;

/// Every label's state and name, and every hand-written vote, of the episodes under `dir`.
fn names_of(dir: &Path) -> (States, Vec<String>) {
    let mut states = BTreeMap::new();
    let mut hand_written = Vec::new();
    for loaded in load_all(dir).unwrap() {
        let reports = resolve_all(&loaded.names, &label_groups(&loaded.runs), &loaded.episode.roster);
        for (label, report) in reports {
            states.insert(format!("{} {label}", loaded.folder), (report.name_state, report.name));
        }
        for (label, entry) in &loaded.names.labels {
            for vote in entry.votes.iter().filter(|vote| vote.model.is_none()) {
                hand_written.push(format!("{} {label} {vote:?}", loaded.folder));
            }
        }
    }
    // Merging keeps votes in source order, so a hand-written file may come back in another order.
    hand_written.sort();
    (states, hand_written)
}

/// re-running `builder identify` on the sample replaced hand-written votes (they carry no
/// `model`) with its own, and a confident name fell to tentative. Every label keeps its state and name,
/// every hand-written vote stays, and a second run changes nothing.
#[test]
fn a_rerun_on_the_sample_keeps_every_name_and_every_hand_written_vote() {
    let dir = std::env::temp_dir().join(format!("cp-identify-{}-sample", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/shows"), &dir.join("shows"));
    let (states, hand_written) = names_of(&dir);
    assert!(
        states.values().any(|(state, _)| *state == NameState::Confident) && !hand_written.is_empty(),
        "the sample has confident names and hand-written votes"
    );
    identify(&dir, &Which::All, None).unwrap();
    let (states_after, hand_written_after) = names_of(&dir);
    for (label, before) in &states {
        assert_eq!(states_after.get(label), Some(before), "{label} changed");
    }
    assert_eq!(hand_written_after, hand_written, "a hand-written vote was replaced");
    let again = identify(&dir, &Which::All, None).unwrap();
    assert!(again.iter().all(|outcome| !outcome.changed), "a second run rewrote names.json");
    let _ = std::fs::remove_dir_all(&dir);
}
