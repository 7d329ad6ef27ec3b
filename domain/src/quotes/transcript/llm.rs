//! Source 2, a language model reading introductions and forms of address: the pure parts.
//!
//! [`select_turns`] picks the turns worth reading (a roster name, a self-introduction, a welcome, a
//! thanks — and the reply that follows each, which is usually the person addressed); [`request_body`]
//! makes the OpenAI-compatible chat-completions request; [`votes_from_answer`] holds the model to its
//! contract. The answer must be one strict JSON object `{label: {"name": <roster name> | "abstain",
//! "evidence": <words copied from the transcript>}}`; anything else is an abstention for every label,
//! and a vote whose evidence does not occur in the transcript is discarded as an abstention — a model
//! that invents a quote must not name anyone. The builder does the HTTP.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::quotes::transcript::normalise::normalised;
use crate::quotes::transcript::{Person, Role, Run, Segment, Vote, VoteSource};

/// At most this many turns go into one prompt: introductions come early, and a long prompt costs more
/// without naming anyone better.
pub const MAX_TURNS: usize = 40;
/// A turn is cut to this many characters in the prompt.
const MAX_TURN_CHARS: usize = 400;

/// Phrases that introduce or address someone (matched on normalised text, with spaces around).
const CUES: &[&str] = &[
    " im ",
    " i am ",
    " my name is ",
    " this is ",
    " welcome ",
    " joining me ",
    " joined by ",
    " my guest ",
    " with me ",
    " thank you ",
    " thanks ",
    " hello ",
    " hi ",
    " hey ",
];

/// One turn shown to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub segment_idx: usize,
    pub speaker: String,
    pub start_s: f64,
    pub text: String,
}

/// The roster's names and first names, normalised, for spotting mentions.
fn name_forms(roster: &[Person]) -> Vec<String> {
    let mut forms: Vec<String> = Vec::new();
    for person in roster {
        let full = normalised(&person.name);
        if let Some(first) = full.split(' ').next().filter(|first| first.len() >= 2) {
            forms.push(format!(" {first} "));
        }
        forms.push(format!(" {full} "));
    }
    crate::sorted::sort(&mut forms);
    forms.dedup();
    forms
}

/// The turns that introduce or address people, each followed by the next turn of another voice.
pub fn select_turns(segments: &[Segment], roster: &[Person], max_turns: usize) -> Vec<Turn> {
    let forms = name_forms(roster);
    let mut picked: Vec<usize> = Vec::new();
    for (idx, segment) in segments.iter().enumerate() {
        let text = format!(" {} ", normalised(&segment.text));
        let cue = forms.iter().any(|form| text.contains(form.as_str()))
            || CUES.iter().any(|cue| text.contains(cue));
        if !cue {
            continue;
        }
        picked.push(idx);
        if let Some(reply) =
            segments[idx + 1..].iter().position(|next| next.speaker != segment.speaker).map(|at| idx + 1 + at)
        {
            picked.push(reply);
        }
    }
    crate::sorted::sort(&mut picked);
    picked.dedup();
    picked.truncate(max_turns);
    picked
        .into_iter()
        .map(|idx| {
            let segment = &segments[idx];
            let mut text: String = segment.text.chars().take(MAX_TURN_CHARS).collect();
            if text.len() < segment.text.len() {
                text.push('…');
            }
            Turn { segment_idx: idx, speaker: segment.speaker.clone(), start_s: segment.start_s, text }
        })
        .collect()
}

const SYSTEM: &str = "You identify the speakers of a podcast transcript. You get the roster (the people \
known to take part), the speaker labels, and the turns that introduce or address people. For every label \
answer whether the turns show who it is: a self-introduction (\"I'm Ana\"), an introduction by someone \
else (\"my guest, Ben\") followed by that label's reply, or being addressed by name in the turn just before. \
Answer with one JSON object and nothing else: each key is a label, each value is {\"name\": <a name \
exactly as on the roster, or \"abstain\">, \"evidence\": <the words that show it, copied exactly from one \
turn>}. Abstain when the turns do not show it; never guess from the roster's order.";

/// Source 2's question about one speech-recognition run: its labels, the chat messages, and the
/// `model` its votes record (the model and the prompt's fingerprint, so the same question is not
/// asked twice).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub labels: Vec<String>,
    pub messages: Vec<(String, String)>,
    pub model: String,
    /// How many turns were worth showing; with none there is nothing to ask ([`Question::unasked`]).
    pub turns: usize,
}

/// The question about `run`'s voices, for `ai_model`, given the episode's `roster`.
pub fn question(run: &Run, roster: &[Person], ai_model: &str) -> Question {
    let mut labels: Vec<String> = run.segments.iter().map(|s| s.speaker.clone()).collect();
    crate::sorted::sort(&mut labels);
    labels.dedup();
    let turns = select_turns(&run.segments, roster, MAX_TURNS);
    let messages = prompt(roster, &labels, &turns);
    let model = vote_model(ai_model, &fingerprint(ai_model, &messages));
    Question { labels, messages, model, turns: turns.len() }
}

impl Question {
    /// Every label's abstention when no turn introduces or addresses anyone: nothing is asked.
    pub fn unasked(&self) -> Option<BTreeMap<String, Vote>> {
        (self.turns == 0).then(|| self.abstentions("no turn introduces or addresses anyone"))
    }

    /// Every label's abstention, for `why`.
    pub fn abstentions(&self, why: &str) -> BTreeMap<String, Vote> {
        self.labels
            .iter()
            .map(|label| {
                (
                    label.clone(),
                    Vote::new(VoteSource::LanguageModel, None, why).with_model(self.model.clone()),
                )
            })
            .collect()
    }
}

/// The chat messages for one run: the roster, the labels and the selected turns.
pub fn prompt(roster: &[Person], labels: &[String], turns: &[Turn]) -> Vec<(String, String)> {
    let mut user = String::from("Roster:\n");
    for person in roster {
        let role = match person.role {
            Role::Host => "host",
            Role::Guest => "guest",
        };
        user.push_str(&format!("- {} ({role})\n", person.name));
    }
    user.push_str(&format!("\nLabels: {}\n\nTurns:\n", labels.join(", ")));
    for turn in turns {
        user.push_str(&format!("[{:.1} s] {}: {}\n", turn.start_s, turn.speaker, turn.text));
    }
    vec![("system".to_string(), SYSTEM.to_string()), ("user".to_string(), user)]
}

/// A short fingerprint of the prompt and model: a stored vote made from the same question is reused
/// rather than asked again, which keeps `builder identify` idempotent.
pub fn fingerprint(model: &str, messages: &[(String, String)]) -> String {
    let mut hash = Sha256::new();
    hash.update(model.as_bytes());
    for (role, content) in messages {
        hash.update([0]);
        hash.update(role.as_bytes());
        hash.update([0]);
        hash.update(content.as_bytes());
    }
    hash.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The `model` a language-model vote records: the model and the prompt's fingerprint.
pub fn vote_model(model: &str, fingerprint: &str) -> String {
    format!("{model} (prompt {fingerprint})")
}

/// The body of `POST {AI_BASE_URL}/chat/completions`.
pub fn request_body(model: &str, messages: &[(String, String)]) -> Value {
    json!({
        "model": model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": messages.iter().map(|(role, content)| json!({"role": role, "content": content})).collect::<Vec<_>>(),
    })
}

/// The assistant's text from a chat-completions answer.
pub fn completion_text(body: &str) -> Result<String, String> {
    let value: Value =
        serde_json::from_str(body).map_err(|err| format!("the service's answer is not JSON: {err}"))?;
    value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "the service's answer has no choices[0].message.content".into())
}

/// Whether `evidence` occurs in one of `texts`, word for word after normalisation (case, punctuation,
/// curly quotes and fillers do not count).
pub fn evidence_occurs(evidence: &str, texts: &[&str]) -> bool {
    let needle = normalised(evidence);
    if needle.is_empty() {
        return false;
    }
    let needle = format!(" {needle} ");
    texts.iter().any(|text| format!(" {} ", normalised(text)).contains(&needle))
}

/// The model's answer as one vote or abstention per label. `texts` is every segment text of the
/// episode: the evidence must be found there.
pub fn votes_from_answer(
    answer: &str,
    labels: &[String],
    roster: &[Person],
    texts: &[&str],
    model: &str,
) -> BTreeMap<String, Vote> {
    let vote = |name: Option<String>, evidence: String| {
        Vote::new(VoteSource::LanguageModel, name, evidence).with_model(model.to_string())
    };
    let parsed: Result<serde_json::Map<String, Value>, String> =
        match serde_json::from_str::<Value>(answer.trim()) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("the model's answer is JSON but not an object".into()),
            Err(err) => Err(format!("the model's answer is not strict JSON ({err})")),
        };
    let map = match parsed {
        Ok(map) => map,
        Err(why) => return labels.iter().map(|label| (label.clone(), vote(None, why.clone()))).collect(),
    };
    let roster_name = |name: &str| {
        let key = normalised(name);
        roster.iter().find(|person| normalised(&person.name) == key).map(|person| person.name.clone())
    };
    labels
        .iter()
        .map(|label| {
            let entry = map.get(label);
            let name = entry.and_then(|e| e.get("name")).and_then(Value::as_str).map(str::trim);
            let evidence = entry.and_then(|e| e.get("evidence")).and_then(Value::as_str).unwrap_or("").trim();
            let outcome = match name {
                None if entry.is_none() => vote(None, "the model did not answer for this label".into()),
                None => vote(None, "the model's entry has no string `name`".into()),
                Some(name) if name.eq_ignore_ascii_case("abstain") => {
                    vote(None, format!("the model abstained: {evidence}").trim_end_matches([' ', ':']).into())
                }
                Some(name) => match roster_name(name) {
                    None => vote(None, format!("named `{name}`, who is not on the roster; discarded")),
                    Some(_) if !evidence_occurs(evidence, texts) => vote(
                        None,
                        format!("named `{name}` on evidence that is not in the transcript (`{evidence}`); discarded"),
                    ),
                    Some(on_roster) => vote(Some(on_roster), format!("\"{evidence}\"")),
                },
            };
            (label.clone(), outcome)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn segment(speaker: &str, text: &str) -> Segment {
        Segment {
            speaker: speaker.into(),
            start_s: 0.0,
            end_s: 1.0,
            text: text.into(),
            start_estimated: false,
            end_estimated: false,
            words: None,
        }
    }

    fn roster() -> Vec<Person> {
        vec![
            Person { name: "Ana Lima".into(), role: Role::Host, no_voiceprint: false },
            Person { name: "Ben Okafor".into(), role: Role::Guest, no_voiceprint: false },
        ]
    }

    fn transcript() -> Vec<Segment> {
        vec![
            segment("S0", "Welcome to the Kitchen Table. I'm Ana Lima."),
            segment("S0", "Today we talk about bread."),
            segment("S1", "Glad to be here."),
            segment("S0", "So, Ben, how did you start?"),
            segment("S1", "My grandmother had a bakery."),
            segment("S1", "Flour everywhere."),
            segment("S0", "What a story."),
        ]
    }

    #[test]
    fn turns_with_names_and_cues_are_picked_with_their_replies() {
        let turns = select_turns(&transcript(), &roster(), MAX_TURNS);
        let shown: Vec<String> =
            turns.iter().map(|t| format!("{} {}: {}", t.segment_idx, t.speaker, t.text)).collect();
        expect![[r#"
            [
                "0 S0: Welcome to the Kitchen Table. I'm Ana Lima.",
                "2 S1: Glad to be here.",
                "3 S0: So, Ben, how did you start?",
                "4 S1: My grandmother had a bakery.",
            ]
        "#]]
        .assert_debug_eq(&shown);
        assert_eq!(select_turns(&transcript(), &roster(), 2).len(), 2);
    }

    #[test]
    fn the_prompt_names_roster_labels_and_turns() {
        let turns = select_turns(&transcript(), &roster(), MAX_TURNS);
        let messages = prompt(&roster(), &["S0".into(), "S1".into()], &turns);
        expect![[r#"
            Roster:
            - Ana Lima (host)
            - Ben Okafor (guest)

            Labels: S0, S1

            Turns:
            [0.0 s] S0: Welcome to the Kitchen Table. I'm Ana Lima.
            [0.0 s] S1: Glad to be here.
            [0.0 s] S0: So, Ben, how did you start?
            [0.0 s] S1: My grandmother had a bakery.
        "#]]
        .assert_eq(&messages[1].1);
        let body = request_body("m", &messages);
        assert_eq!(body["response_format"]["type"], "json_object");
        assert_eq!(fingerprint("m", &messages).len(), 12);
        assert_ne!(fingerprint("m", &messages), fingerprint("n", &messages));
    }

    fn check(answer: &str, expect: Expect) {
        let segments = transcript();
        let texts: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
        let labels = vec!["S0".to_string(), "S1".to_string()];
        let votes = votes_from_answer(answer, &labels, &roster(), &texts, "m");
        let lines: Vec<String> =
            votes.iter().map(|(label, vote)| format!("{label}: {:?} {}", vote.name, vote.evidence)).collect();
        expect.assert_eq(&lines.join("\n"));
    }

    #[test]
    fn a_valid_answer_votes_with_its_evidence() {
        check(
            r#"{"S0": {"name": "Ana Lima", "evidence": "I'm Ana Lima"},
                "S1": {"name": "ben okafor", "evidence": "So, Ben, how did you start?"}}"#,
            expect![[r#"
                S0: Some("Ana Lima") "I'm Ana Lima"
                S1: Some("Ben Okafor") "So, Ben, how did you start?""#]],
        );
    }

    #[test]
    fn abstentions_and_missing_labels_abstain() {
        check(
            r#"{"S0": {"name": "abstain", "evidence": "nobody says it"}}"#,
            expect![[r#"
                S0: None the model abstained: nobody says it
                S1: None the model did not answer for this label"#]],
        );
    }

    #[test]
    fn an_answer_that_is_not_strict_json_abstains_for_every_label() {
        check(
            "Sure! {\"S0\": {\"name\": \"Ana Lima\", \"evidence\": \"I'm Ana Lima\"}}",
            expect![[r#"
                S0: None the model's answer is not strict JSON (expected value at line 1 column 1)
                S1: None the model's answer is not strict JSON (expected value at line 1 column 1)"#]],
        );
        check(
            "[1, 2]",
            expect![[r#"
                S0: None the model's answer is JSON but not an object
                S1: None the model's answer is JSON but not an object"#]],
        );
    }

    #[test]
    fn invented_evidence_and_names_off_the_roster_are_discarded() {
        check(
            r#"{"S0": {"name": "Ana Lima", "evidence": "As Ana said on the last show"},
                "S1": {"name": "Carla Mendes", "evidence": "Glad to be here"}}"#,
            expect![[r#"
                S0: None named `Ana Lima` on evidence that is not in the transcript (`As Ana said on the last show`); discarded
                S1: None named `Carla Mendes`, who is not on the roster; discarded"#]],
        );
    }

    #[test]
    fn evidence_is_compared_after_normalisation() {
        assert!(evidence_occurs("i’m ANA lima", &["Welcome. I'm Ana Lima."]));
        assert!(!evidence_occurs("Ana Lim", &["I'm Ana Lima."]));
        assert!(!evidence_occurs("  ", &["I'm Ana Lima."]));
    }
}
