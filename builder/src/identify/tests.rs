//! `builder identify` over a small content folder, with a scripted local server speaking the
//! OpenAI chat-completions protocol in place of the language model: a valid answer, an answer that is
//! not JSON, and one whose evidence is invented.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::*;
use domain::site::outbound::Allowance;

/// One request the scripted server saw.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: String,
    body: Value,
}

/// One request a local server read: its path, `Authorization` header and body.
struct Request {
    path: String,
    authorization: String,
    body: Vec<u8>,
}

/// An HTTP/1.1 server on a free loopback port answering each request with `answer`'s status line,
/// content type and body; its `host:port`.
fn local_server(
    answer: impl Fn(Request) -> (&'static str, &'static str, Vec<u8>) + Send + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let host = listener.local_addr().unwrap().to_string();
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
            let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
            let (status, content_type, reply) = answer(Request { path, authorization, body });
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                reply.len()
            );
            let _ = stream.write_all(&reply);
        }
    });
    host
}

/// A chat-completions server on a free local port; `answer` maps the user message to the reply text.
fn scripted_llm(answer: fn(&str) -> String) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let host = local_server(move |request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or_default().to_string();
        log.lock().unwrap().push(Seen { path: request.path, authorization: request.authorization, body });
        let reply = json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer(&user)}}],
        });
        ("200 OK", "application/json", reply.to_string().into_bytes())
    });
    (format!("http://{host}/v1"), seen)
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

/// Episode `n` of the show at `example.com/kt`, published on the first of month `n`, with `roster`.
fn episode(n: u32, roster: &Value) -> Value {
    json!({"title": format!("Episode {n}"), "source_url": format!("https://example.com/kt/{n}"),
           "published": format!("2025-0{n}-01"), "roster": roster})
}

/// Three episodes of one show, oldest first: the first confirms Ana (a person's decision) and Ben
/// (WebVTT plus elimination), so their voices are on file for the later two.
fn content(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cp-identify-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let show = dir.join("shows/kt");
    write(&show.join("show.json"), &json!({"title": "KT", "licence": "CC0-1.0"}));
    let roster = json!([{"name": "Ana Lima", "role": "host"}, {"name": "Ben Okafor", "role": "guest"}]);
    // Each episode's folder, the pipeline of its one run (imported from the format of that name), the
    // run's segments and the voiceprint of each of its labels.
    let episodes = [
        (
            "one",
            "webvtt",
            vec![segment("Ana Lima", 0.0, "Good morning everyone."), segment("Ben Okafor", 3.0, "Morning.")],
            json!({"Ana Lima": [1.0, 0.0, 0.0, 0.0], "Ben Okafor": [0.0, 1.0, 0.0, 0.0]}),
        ),
        (
            "two",
            "whisperx",
            vec![
                segment("SPEAKER_00", 0.0, "Welcome to the show. I'm Ana Lima."),
                segment("SPEAKER_01", 3.0, "Glad to be here."),
                segment("SPEAKER_00", 6.0, "So how did it start?"),
            ],
            // Ana's voice, and a voice nobody has on file.
            json!({"SPEAKER_00": [0.95, 0.05, 0.0, 0.1], "SPEAKER_01": [0.1, 0.2, 0.9, 0.3]}),
        ),
        (
            "three",
            "whisperx",
            vec![segment("SPEAKER_00", 0.0, "Hello again."), segment("SPEAKER_01", 3.0, "Hi.")],
            json!({"SPEAKER_00": [0.05, 0.98, 0.0, 0.0], "SPEAKER_01": [0.7, 0.0, 0.7, 0.0]}),
        ),
    ];
    for (n, (folder, pipeline, segments, embeddings)) in (1..).zip(episodes) {
        write(&show.join(folder).join("episode.json"), &episode(n, &roster));
        write(
            &show.join(folder).join(format!("runs/{pipeline}.json")),
            &json!({"pipeline": pipeline, "kind": "asr", "created": "2025-01-01", "imported_from": pipeline,
                    "segments": segments,
                    "speaker_embeddings": {"model": "wespeaker-test", "labels": embeddings}}),
        );
    }
    write(
        &show.join("one/names.json"),
        &json!({"labels": {"Ana Lima": {"votes": [], "human": {"name": "Ana Lima", "by": "ed"}}}}),
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
    let outcomes = identify(&dir, &Which::All, Some(&config(&base)), None).unwrap();
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
                VoiceMatch - | unknown voice: best Ben Okafor 0.21 is below 0.93; runner-up Ana Lima 0.10
            kt/three changed=true
              SPEAKER_00: tentative Ben Okafor
                Asr - | whisperx gives diarization labels, not names
                LanguageModel - | the model's answer is not strict JSON (expected value at line 1 column 1)
                VoiceMatch Ben Okafor | cosine 1.00 to Ben Okafor's voiceprint from 1 episode(s); runner-up Ana Lima 0.08
              SPEAKER_01: human Cy Doe
                Asr - | whisperx gives diarization labels, not names
                LanguageModel - | the model's answer is not strict JSON (expected value at line 1 column 1)
                VoiceMatch - | unknown voice: best Ana Lima 0.71 is below 0.93; runner-up Ben Okafor 0.00
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
    let again = identify(&dir, &Which::All, Some(&config(&base)), None).unwrap();
    let changed: Vec<&str> = again.iter().filter(|o| o.changed).map(|o| o.folder.as_str()).collect();
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(files(&dir), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_episode_without_a_model_keeps_the_model_votes_and_human_decisions() {
    let dir = content("one");
    let outcomes = identify(&dir, &Which::One("kt/three".into()), None, None).unwrap();
    show(
        &outcomes,
        &dir,
        expect![[r#"
            kt/three changed=true
              SPEAKER_00: unknown -
                Asr - | whisperx gives diarization labels, not names
                VoiceMatch - | unknown voice: best Ana Lima 0.05 is below 0.93
              SPEAKER_01: human Cy Doe
                Asr - | whisperx gives diarization labels, not names
                VoiceMatch - | unknown voice: best Ana Lima 0.71 is below 0.93
                human Cy Doe by ed
        "#]],
    );
    assert!(identify(&dir, &Which::One("kt/nope".into()), None, None).is_err());
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
    identify(&dir, &Which::All, None, None).unwrap();
    let (states_after, hand_written_after) = names_of(&dir);
    for (label, before) in &states {
        assert_eq!(states_after.get(label), Some(before), "{label} changed");
    }
    assert_eq!(hand_written_after, hand_written, "a hand-written vote was replaced");
    let again = identify(&dir, &Which::All, None, None).unwrap();
    assert!(again.iter().all(|outcome| !outcome.changed), "a second run rewrote names.json");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A WAV of `text` spoken by a festival voice (`voice_kal_diphone`, …) or an espeak-ng one
/// (`espeak:en-us+f3`), at 16 kHz mono, and its length in seconds.
fn spoken(dir: &Path, name: &str, voice: &str, text: &str) -> (PathBuf, f64) {
    use std::process::Command;
    let raw = dir.join(format!("{name}.raw.wav"));
    let made = match voice.strip_prefix("espeak:") {
        Some(espeak) => Command::new("espeak-ng").args(["-v", espeak, "-w"]).arg(&raw).arg(text).status(),
        None => {
            let mut child = Command::new("text2wave")
                .args(["-eval", &format!("({voice})"), "-o"])
                .arg(&raw)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("festival's text2wave: scripts/setup.sh --test installs it");
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
            child.wait()
        }
    };
    assert!(made.expect("espeak-ng: scripts/setup.sh --test installs it").success());
    let wav = dir.join(format!("{name}.wav"));
    let status =
        Command::new("sox").arg(&raw).args(["-r", "16000", "-c", "1", "-b", "16"]).arg(&wav).status();
    assert!(status.expect("sox: scripts/setup.sh --test installs it").success());
    let seconds = (std::fs::metadata(&wav).unwrap().len() - 44) as f64 / 32_000.0;
    (wav, seconds)
}

/// The turns of an episode made of spoken passages, one after another with half a second between,
/// written as one WAV at `path`: its run's segments.
fn episode_audio(dir: &Path, path: &Path, turns: &[(&str, &str, &str)]) -> Vec<Value> {
    let (mut samples, mut segments) = (Vec::<u8>::new(), Vec::new());
    for (idx, (label, voice, text)) in turns.iter().enumerate() {
        let (wav, seconds) =
            spoken(dir, &format!("part-{}-{idx}", path.file_stem().unwrap().to_string_lossy()), voice, text);
        let start = samples.len() as f64 / 32_000.0;
        segments.push(json!({"speaker": label, "start_s": start, "end_s": start + seconds, "text": text}));
        samples.extend_from_slice(&std::fs::read(&wav).unwrap()[44..]);
        samples.extend(std::iter::repeat_n(0u8, 16_000));
    }
    let mut file = Vec::new();
    for part in [&b"RIFF"[..], &(36 + samples.len() as u32).to_le_bytes(), b"WAVEfmt ", &16u32.to_le_bytes()]
    {
        file.extend_from_slice(part);
    }
    for part in
        [&1u16.to_le_bytes()[..], &1u16.to_le_bytes(), &16_000u32.to_le_bytes(), &32_000u32.to_le_bytes()]
    {
        file.extend_from_slice(part);
    }
    for part in
        [&2u16.to_le_bytes()[..], &16u16.to_le_bytes(), b"data", &(samples.len() as u32).to_le_bytes()]
    {
        file.extend_from_slice(part);
    }
    file.extend_from_slice(&samples);
    std::fs::write(path, file).unwrap();
    segments
}

/// Serves the files of `dir` over HTTP on a free loopback port, logging each path asked for; a file
/// that is not there answers 404.
fn audio_host(dir: PathBuf) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let host = local_server(move |request| {
        log.lock().unwrap().push(request.path.clone());
        match std::fs::read(dir.join(request.path.trim_start_matches('/'))) {
            Ok(body) => ("200 OK", "audio/wav", body),
            Err(_) => ("404 Not Found", "text/plain", Vec::new()),
        }
    });
    (host, seen)
}

const PASSAGES: [&str; 6] = [
    "When we started the project we had no idea how many people would read the transcripts. The first month was quiet, and then a newsroom wrote to us.",
    "I think the hardest part of building a search engine is deciding what not to index. Every word you keep costs memory.",
    "My grandmother cooked without recipes. She measured flour with a teacup and salt with her palm, and the bread told her the rest.",
    "The river was higher than anyone could remember, so the bridge was closed for a week and we walked the long way round.",
    "Thank you for having me. I have listened to this show for years, and I never thought I would be sitting on this side of the microphone.",
    "We should talk about what happens when the build fails halfway. Nobody wants to wake up to a site that serves half of yesterday.",
];

#[test]
fn a_voice_confirmed_on_one_episode_is_named_by_its_voice_on_the_next_and_a_stranger_is_not() {
    let dir = std::env::temp_dir().join(format!("cp-identify-{}-voices", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (audio, show) = (dir.join("audio"), dir.join("shows/kt"));
    std::fs::create_dir_all(&audio).unwrap();
    let kal = "voice_kal_diphone";
    let slt = "voice_cmu_us_slt_arctic_hts";
    let ked = "voice_ked_diphone";
    // Episode 1: Ana (kal) is named by an editor; the guest (slt) is never confirmed.
    let one = episode_audio(
        &dir,
        &audio.join("one.wav"),
        &[("A", kal, PASSAGES[0]), ("B", slt, PASSAGES[4]), ("A", kal, PASSAGES[1])],
    );
    // Episode 2: Ana again, saying other things; a stranger of the same sex and accent (ked); the
    // guest of episode 1, whom nobody confirmed.
    let two = episode_audio(
        &dir,
        &audio.join("two.wav"),
        &[
            ("S1", kal, PASSAGES[2]),
            ("S2", ked, PASSAGES[5]),
            ("S3", slt, PASSAGES[3]),
            ("S1", kal, PASSAGES[3]),
        ],
    );
    // Episode 4: the publisher's transcript separates no voices: Ana and the guest take turns under
    // one label. Episode 5: the publisher's transcript names Ana.
    let sentences = |passage: &'static str| passage.split_inclusive(". ").collect::<Vec<_>>();
    let mut turns = Vec::new();
    for (a, b) in sentences(PASSAGES[0]).into_iter().zip(sentences(PASSAGES[4])) {
        turns.push(("UNKNOWN", kal, a));
        turns.push(("UNKNOWN", slt, b));
    }
    turns.push(("UNKNOWN", kal, PASSAGES[5]));
    let four = episode_audio(&dir, &audio.join("four.wav"), &turns);
    let five = episode_audio(
        &dir,
        &audio.join("five.wav"),
        &[("Ana Lima", kal, PASSAGES[4]), ("Guest", slt, PASSAGES[1]), ("Ana Lima", kal, PASSAGES[0])],
    );
    let (host, seen) = audio_host(audio);
    write(&show.join("show.json"), &json!({"title": "KT", "licence": "CC0-1.0"}));
    let roster = json!([{"name": "Ana Lima", "role": "host"}]);
    for (folder, n, segments, audio_url) in [
        ("one", 1, one, format!("http://{host}/one.wav")),
        ("two", 2, two, format!("http://{host}/two.wav")),
        (
            "three",
            3,
            vec![json!({"speaker": "S1", "start_s": 0.0, "end_s": 10.0, "text": "Hello, and welcome."})],
            format!("http://{host}/gone.mp3"),
        ),
        ("four", 4, four, format!("http://{host}/four.wav")),
        ("five", 5, five, format!("http://{host}/five.wav")),
    ] {
        let mut document = episode(n, &roster);
        document["audio_url"] = json!(audio_url);
        write(&show.join(folder).join("episode.json"), &document);
        write(
            &show.join(folder).join("runs/svc.json"),
            &json!({"pipeline": "svc", "kind": "asr", "created": "2025-01-01", "imported_from": "webvtt",
                    "segments": segments}),
        );
    }
    write(
        &show.join("one/names.json"),
        &json!({"labels": {"A": {"votes": [], "human": {"name": "Ana Lima", "by": "ed"}}}}),
    );

    let voices = voices::Voices::new(Allowance::parse(&host).unwrap()).unwrap();
    let outcomes = identify(&dir, &Which::All, None, Some(&voices)).unwrap();
    let run: Run = read_json(&show.join("two/runs/svc.json")).unwrap();
    let embeddings = run.speaker_embeddings.expect("episode 2's labels embedded");
    assert_eq!(embeddings.model, crate::voice::MODEL);
    assert_eq!(embeddings.labels.keys().collect::<Vec<_>>(), ["S1", "S2", "S3"]);
    assert!(embeddings.seconds["S1"] > 10.0, "{:?}", embeddings.seconds);
    let names: Names = read_json(&show.join("two/names.json")).unwrap();
    let voice = |label: &str| {
        let votes = &names.labels[label].votes;
        votes.iter().find(|vote| vote.source == VoteSource::VoiceMatch).cloned().expect("a voice vote")
    };
    assert_eq!(voice("S1").name.as_deref(), Some("Ana Lima"), "{:?}", voice("S1"));
    assert_eq!(voice("S2").name, None, "a stranger of the same sex and accent: {:?}", voice("S2"));
    assert_eq!(voice("S3").name, None, "a voice nobody confirmed: {:?}", voice("S3"));
    // Audio that is not there: the source abstains saying why, and identify does not fail.
    let names: Names = read_json(&show.join("three/names.json")).unwrap();
    let gone = names.labels["S1"].votes.iter().find(|v| v.source == VoteSource::VoiceMatch).unwrap();
    assert!(gone.evidence.contains("404"), "{}", gone.evidence);
    assert!(outcomes.iter().all(|outcome| outcome.warnings.is_empty()));

    // Episode 4's voices separated into a run of their own; the original run untouched.
    let original: Run = read_json(&show.join("four/runs/svc.json")).unwrap();
    assert!(
        original.segments.iter().all(|s| s.speaker == "UNKNOWN") && original.speaker_embeddings.is_none()
    );
    let separated: Run = read_json(&show.join("four/runs/svc+voices.json")).unwrap();
    let labels: Vec<&str> = separated.segments.iter().map(|s| s.speaker.as_str()).collect();
    let (ana_voice, guest_voice) = (labels[0], labels[1]);
    assert_ne!(ana_voice, guest_voice);
    let expected: Vec<&str> =
        turns.iter().map(|(_, voice, _)| if *voice == kal { ana_voice } else { guest_voice }).collect();
    assert_eq!(labels, expected, "each turn under the voice that spoke it");
    let names: Names = read_json(&show.join("four/names.json")).unwrap();
    let voice_vote = |label: &str| {
        names.labels[label].votes.iter().find(|v| v.source == VoteSource::VoiceMatch).cloned().unwrap()
    };
    assert_eq!(voice_vote(ana_voice).name.as_deref(), Some("Ana Lima"), "{:?}", voice_vote(ana_voice));
    assert_eq!(voice_vote(guest_voice).name, None);
    let four = outcomes.iter().find(|o| o.folder == "kt/four").unwrap();
    assert_eq!(four.states[ana_voice], (NameState::Tentative, Some("Ana Lima".to_string())));
    // Episode 5: the publisher's tag and the voice agree, so the name is confident (answers under it
    // are `trust: high`).
    let five = outcomes.iter().find(|o| o.folder == "kt/five").unwrap();
    assert_eq!(five.states["Ana Lima"], (NameState::Confident, Some("Ana Lima".to_string())));
    let published = |folder: &str| {
        let episode_dir = show.join(folder);
        let runs = std::fs::read_dir(episode_dir.join("runs"))
            .unwrap()
            .map(|entry| read_json::<Run>(&entry.unwrap().path()).unwrap())
            .collect();
        let built = domain::quotes::transcript::publish::publish(
            "kt",
            &read_json(&show.join("show.json")).unwrap(),
            read_json(&episode_dir.join("episode.json")).unwrap(),
            read_json(&episode_dir.join("names.json")).unwrap(),
            runs,
        );
        built.unwrap().canonical
    };
    let asked = |canonical: &domain::quotes::transcript::Canonical, quote: &str| {
        let prepared = domain::quotes::quote::Prepared::new(&canonical.segments);
        let answer = domain::quotes::quote::attribute(canonical, &prepared, quote);
        serde_json::to_value(answer).unwrap()
    };
    let answer =
        asked(&published("five"), "I never thought I would be sitting on this side of the microphone");
    assert_eq!((&answer["name"], &answer["trust"]), (&json!("Ana Lima"), &json!("high")), "{answer}");
    // Episode 4's transcript is answered from its separated run: the quote has a voice, named by one
    // source only, so it is for review, never high.
    let four = published("four");
    assert_eq!(four.pipeline, "svc+voices");
    let answer = asked(&four, "I never thought I would be sitting on this side of the microphone");
    assert_eq!((&answer["speaker"], &answer["trust"]), (&json!(guest_voice), &json!("review")), "{answer}");

    // A re-run fetches nothing and changes nothing.
    let fetched = seen.lock().unwrap().len();
    let again = identify(&dir, &Which::All, None, Some(&voices)).unwrap();
    assert!(again.iter().all(|outcome| !outcome.changed), "{again:?}");
    assert_eq!(seen.lock().unwrap().len(), fetched + 1, "only the missing file is asked for again");
    let _ = std::fs::remove_dir_all(&dir);
}
