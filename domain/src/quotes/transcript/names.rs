//! Speaker names: each identification source votes or abstains; the state follows from the votes.
//!
//! The seed's rules, exactly: `confident` when two or more sources agree and none disagrees;
//! `tentative` when only one source vouches; `withheld` (name `null`) when sources disagree. A human
//! decision always wins and no source overwrites it (`human`). Scores are never averaged: a vote is a
//! name or an abstention. With no vote at all the state is `unknown` and the name `null` — a case the
//! seed leaves open.
//!
//! Elimination (source 4) is not stored: in a two-person conversation, once the other voice is
//! recognised (confident or human), elimination votes for the remaining person on the roster. It is
//! computed from the other sources only, so it cannot feed on itself.
//!
//! A label that joins labels with `+` (`A+B`) holds more than one voice: a transcription service gave
//! two of its voices one name, so their turns cannot be told apart. Whatever the sources say, its
//! name is at most `tentative` (never `confident`, so never `trust = high`) until a person decides.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::clean::{self, TextKind};
use crate::quotes::transcript::Person;

/// The four identification sources of the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum VoteSource {
    /// The transcription service's own speaker identification.
    Asr,
    /// A language model reading introductions and how people address each other.
    LanguageModel,
    /// A voice match against people heard on earlier episodes.
    VoiceMatch,
    /// In a two-person conversation, the person left once the other voice is recognised.
    Elimination,
}

/// One source's vote: a name, or `null` for an abstention, with the evidence either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Vote {
    pub source: VoteSource,
    pub name: Option<String>,
    #[serde(default)]
    pub evidence: String,
    /// What produced the vote, with its version (`assemblyai`, `gpt-4o-mini`, `voiceprints-v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The source's own measure, where it has one (cosine similarity for a voice match). Recorded
    /// for a reader; the state never uses it, since scores are never averaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl Vote {
    /// A vote for `name`, or an abstention when `name` is `None`.
    pub fn new(source: VoteSource, name: Option<String>, evidence: impl Into<String>) -> Vote {
        Vote { source, name, evidence: evidence.into(), model: None, score: None }
    }

    pub fn with_model(mut self, model: impl Into<String>) -> Vote {
        self.model = Some(model.into());
        self
    }

    /// Kept to four decimals: enough for a reader, and short decimals read back exactly, so a
    /// re-run that computes the same score writes the same file.
    pub fn with_score(mut self, score: f64) -> Vote {
        self.score = Some(super::rounded(score, 10_000.0));
        self
    }
}

/// A person's decision about a name; it always wins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HumanDecision {
    pub name: String,
    /// Who decided: an account handle, or the editor of a human-edited transcript.
    pub by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Everything known about one label's name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LabelVotes {
    #[serde(default)]
    pub votes: Vec<Vote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human: Option<HumanDecision>,
}

/// `…/names.json`: per speaker label (shared by the runs of one episode), the votes and any human decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Names {
    pub labels: BTreeMap<String, LabelVotes>,
}

/// How sure we are of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NameState {
    /// Two or more sources agree and none disagrees.
    Confident,
    /// Only one source vouches (shown as unconfirmed).
    Tentative,
    /// Sources disagree; the name is `null`.
    Withheld,
    /// A person decided.
    Human,
    /// No source voted; the name is `null`.
    Unknown,
}

impl NameState {
    /// Whether a name in this state may carry `trust = high`.
    pub fn is_trustworthy(self) -> bool {
        matches!(self, NameState::Confident | NameState::Human)
    }

    /// The state in a reader's words.
    pub fn word(self) -> &'static str {
        match self {
            NameState::Confident => "confident",
            NameState::Tentative => "unconfirmed",
            NameState::Withheld => "withheld",
            NameState::Human => "decided by an editor",
            NameState::Unknown => "not known",
        }
    }
}

/// A label's name after the rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResolvedName {
    pub name: Option<String>,
    pub state: NameState,
}

/// A label as the episode record shows it: the outcome and the votes behind it (elimination included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LabelReport {
    pub name: Option<String>,
    pub name_state: NameState,
    pub votes: Vec<Vote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human: Option<HumanDecision>,
}

/// Names compare without regard to case or spacing.
pub fn name_key(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// What joins the labels of voices a service could not tell apart into one label.
pub const MERGED: char = '+';

/// The label holding the turns of several voices (`A+B`), its parts sorted.
pub fn merged_label(labels: &[&str]) -> String {
    let mut parts: Vec<&str> = labels.to_vec();
    crate::sorted::sort(&mut parts);
    parts.dedup();
    parts.join(&MERGED.to_string())
}

/// Whether a label holds the turns of more than one voice.
pub fn is_merged_label(label: &str) -> bool {
    label.split(MERGED).filter(|part| !part.trim().is_empty()).count() > 1
}

/// The label importers give speech whose voice nobody separated: the cues of a publisher's WebVTT
/// without voice tags, a turn a service left without a speaker.
pub const UNSEPARATED: &str = "UNKNOWN";

/// Whether a label may hold more than one person's speech: several voices a service could not tell
/// apart (`A+B`), or speech whose voices nobody separated ([`UNSEPARATED`]). Such a label is never
/// named as one person: one name would be wrong for some of its turns, so no answer under it is
/// `trust: high`, and an editor's decision naming it is refused.
pub fn holds_several_voices(label: &str) -> bool {
    is_merged_label(label) || label.trim() == UNSEPARATED
}

/// A decision names one person, so a label of several voices ([`holds_several_voices`]) takes none:
/// the problem, in words, when `label` is one.
pub fn check_decidable(label: &str) -> Result<(), Diagnostic> {
    if !holds_several_voices(label) {
        return Ok(());
    }
    let why = if is_merged_label(label) {
        "holds several voices the transcription service could not tell apart"
    } else {
        "holds speech whose voices nobody separated"
    };
    Err(Diagnostic::new(
        "label",
        format!(
            "`{label}` {why}: one person's name would be wrong for some of its turns, so it cannot be given one"
        ),
    ))
}

/// The state of one label from its votes and any human decision.
pub fn resolve(votes: &[Vote], human: Option<&HumanDecision>) -> ResolvedName {
    if let Some(human) = human {
        return ResolvedName { name: Some(human.name.clone()), state: NameState::Human };
    }
    // One vote per source counts; a source naming two people disagrees with itself.
    let mut named: Vec<(VoteSource, &str)> =
        votes.iter().filter_map(|vote| vote.name.as_deref().map(|name| (vote.source, name))).collect();
    crate::sorted::sort_by_key(&mut named, |(source, _)| *source);
    let mut distinct: Vec<String> = named.iter().map(|(_, name)| name_key(name)).collect();
    crate::sorted::sort(&mut distinct);
    distinct.dedup();
    match distinct.len() {
        0 => ResolvedName { name: None, state: NameState::Unknown },
        1 => {
            let mut sources: Vec<VoteSource> = named.iter().map(|(source, _)| *source).collect();
            sources.dedup();
            let state = if sources.len() >= 2 { NameState::Confident } else { NameState::Tentative };
            ResolvedName { name: Some(named[0].1.trim().to_string()), state }
        }
        _ => ResolvedName { name: None, state: NameState::Withheld },
    }
}

/// Resolves every label of an episode, adding the elimination vote where it applies.
///
/// `runs` holds the speaker labels of each run; a label with no entry in `names` still gets an answer.
/// Elimination looks at one run at a time: a run with exactly two voices is a two-person conversation.
pub fn resolve_all(names: &Names, runs: &[Vec<String>], roster: &[Person]) -> BTreeMap<String, LabelReport> {
    let mut all: Vec<String> = runs.iter().flatten().cloned().collect();
    all.extend(names.labels.keys().cloned());
    crate::sorted::sort(&mut all);
    all.dedup();
    let empty = LabelVotes::default();
    let stored = |label: &str| -> Vec<Vote> {
        names
            .labels
            .get(label)
            .unwrap_or(&empty)
            .votes
            .iter()
            .filter(|vote| vote.source != VoteSource::Elimination)
            .cloned()
            .collect()
    };
    let human = |label: &str| names.labels.get(label).and_then(|entry| entry.human.clone());
    let base: BTreeMap<&str, ResolvedName> = all
        .iter()
        .map(|label| (label.as_str(), resolve_label(label, &stored(label), human(label).as_ref())))
        .collect();

    let mut reports = BTreeMap::new();
    for label in &all {
        let mut votes = stored(label);
        let run_labels = runs.iter().find(|labels| labels.contains(label)).map_or(&[][..], Vec::as_slice);
        if let Some(vote) = elimination_vote(label, run_labels, &base, roster) {
            votes.push(vote);
        }
        let human = human(label);
        let resolved = resolve_label(label, &votes, human.as_ref());
        reports.insert(
            label.clone(),
            LabelReport { name: resolved.name, name_state: resolved.state, votes, human },
        );
    }
    reports
}

/// [`resolve`], with a label of several voices ([`holds_several_voices`]) held below `confident`:
/// one name is wrong for some of its turns, however many sources give it.
fn resolve_label(label: &str, votes: &[Vote], human: Option<&HumanDecision>) -> ResolvedName {
    let mut resolved = resolve(votes, human);
    if resolved.state == NameState::Confident && holds_several_voices(label) {
        resolved.state = NameState::Tentative;
    }
    resolved
}

/// Source 4: in a conversation of exactly two voices and two people, the voice that is not the
/// recognised one belongs to the other person. Abstains (returns an abstention) otherwise, when it can
/// say why; `None` when the episode is not a two-person conversation at all.
fn elimination_vote(
    label: &str,
    labels: &[String],
    base: &BTreeMap<&str, ResolvedName>,
    roster: &[Person],
) -> Option<Vote> {
    if labels.len() != 2 || roster.len() != 2 {
        return None;
    }
    let other = labels.iter().find(|other| other.as_str() != label)?;
    let recognised = &base[other.as_str()];
    let abstain = |why: String| Some(Vote::new(VoteSource::Elimination, None, why));
    if !recognised.state.is_trustworthy() {
        return abstain(format!("the other voice ({other}) is not recognised with confidence"));
    }
    let other_name = name_key(recognised.name.as_deref().unwrap_or_default());
    let remaining: Vec<&Person> =
        roster.iter().filter(|person| name_key(&person.name) != other_name).collect();
    match remaining.as_slice() {
        [person] => Some(Vote::new(
            VoteSource::Elimination,
            Some(person.name.clone()),
            format!("two-person conversation; {other} is {}", recognised.name.as_deref().unwrap_or("")),
        )),
        _ => abstain(format!("{other}'s name is not on the roster")),
    }
}

/// What resolving an episode's names needs, published as `episodes/<id>/names.json` so the Worker can
/// resolve again — elimination included — the moment an editor's decision arrives, without a build.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NameInputs {
    pub names: Names,
    /// The speaker labels of each run.
    pub runs: Vec<Vec<String>>,
    pub roster: Vec<Person>,
}

impl NameInputs {
    /// Every label and its report, with `decisions` (label → decision) taking the place of any stored
    /// human decision of the same label.
    pub fn resolve_with(&self, decisions: &BTreeMap<String, HumanDecision>) -> BTreeMap<String, LabelReport> {
        let mut names = self.names.clone();
        for (label, decision) in decisions {
            names.labels.entry(label.clone()).or_default().human = Some(decision.clone());
        }
        resolve_all(&names, &self.runs, &self.roster)
    }

    pub fn has_label(&self, label: &str) -> bool {
        self.runs.iter().flatten().any(|known| known == label) || self.names.labels.contains_key(label)
    }
}

/// Where the build says how far the editors' decisions it holds go ([`BuiltDecisions`]).
pub const BUILT_DECISIONS: &str = "episodes/decisions.json";

/// `episodes/decisions.json`: the last editor's decision the build holds, as the position in the
/// speaker feed (`/api/episodes/changes`) that `builder sync` last committed to the content (0 when
/// it committed none), and the feed's id. Decisions up to it are in the build's names; a Worker whose
/// database is that feed's counts only later ones as news, so an episode decided before the build is
/// served as built again. (Unknown fields are allowed: a Worker reads the file of a newer build.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BuiltDecisions {
    pub synced_seq: u64,
    /// The id of the feed the position is in (`feed` of `/api/episodes/changes`); absent before the
    /// first synced decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<String>,
}

/// The longest name and note an editor may set.
pub const MAX_DECISION_NAME_CHARS: usize = 200;
pub const MAX_DECISION_NOTE_CHARS: usize = 500;

/// The body of `PUT /api/episodes/:id/speakers/:label`: `{name, note}`, every problem reported.
pub fn decision_from_body(body: &serde_json::Value) -> Result<(String, Option<String>), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let Some(object) = body.as_object() else {
        return Err(vec![Diagnostic::new("(body)", "must be a JSON object {name, note}")]);
    };
    for key in object.keys().filter(|key| !["name", "note"].contains(&key.as_str())) {
        problems.push(Diagnostic::new(key.as_str(), "unknown field; send only name and note"));
    }
    let name = match object.get("name") {
        Some(serde_json::Value::String(raw)) => {
            let name = raw.split_whitespace().collect::<Vec<_>>().join(" ");
            if name.is_empty() {
                problems.push(Diagnostic::new("name", "must not be empty"));
            } else if name.chars().count() > MAX_DECISION_NAME_CHARS {
                problems.push(Diagnostic::new(
                    "name",
                    format!("must be at most {MAX_DECISION_NAME_CHARS} characters"),
                ));
            } else {
                // The name as sent: whitespace it is folded into must not hide a control.
                problems.extend(clean::check("name", raw, TextKind::Line));
            }
            name
        }
        Some(_) => {
            problems.push(Diagnostic::new("name", "must be a string"));
            String::new()
        }
        None => {
            problems.push(Diagnostic::new("name", "is required: the person's name"));
            String::new()
        }
    };
    let note = match object.get("note") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(note)) if note.chars().count() > MAX_DECISION_NOTE_CHARS => {
            problems.push(Diagnostic::new(
                "note",
                format!("must be at most {MAX_DECISION_NOTE_CHARS} characters"),
            ));
            None
        }
        Some(serde_json::Value::String(note)) => {
            problems.extend(clean::check("note", note, TextKind::Prose));
            Some(note.trim().to_string()).filter(|note| !note.is_empty())
        }
        Some(_) => {
            problems.push(Diagnostic::new("note", "must be a string"));
            None
        }
    };
    if problems.is_empty() { Ok((name, note)) } else { Err(problems) }
}

/// One item of the speaker-decision feed (`GET /api/episodes/changes`), which `builder sync` commits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpeakerChange {
    pub seq: u64,
    /// The episode id (`ep_…`).
    pub episode: String,
    pub label: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The editor's handle.
    pub editor: String,
    /// ISO 8601 UTC.
    pub at: String,
}

impl SpeakerChange {
    pub fn decision(&self) -> HumanDecision {
        HumanDecision { name: self.name.clone(), by: self.editor.clone(), note: self.note.clone() }
    }
}

/// A page of the speaker-decision feed, which always names its feed.
pub type SpeakerChangePage = crate::paging::FeedPage<SpeakerChange>;

impl crate::paging::Positioned for SpeakerChange {
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// Problems of a names file that the types cannot express.
/// `names.json` labels that no run of the episode has: a typo, or the label of a run since removed.
/// Their votes would name nobody who speaks.
pub fn labels_without_speech(names: &Names, runs: &[Vec<String>]) -> Vec<Diagnostic> {
    names
        .labels
        .keys()
        .filter(|label| !runs.iter().any(|labels| labels.contains(label)))
        .map(|label| {
            Diagnostic::new(format!("labels.{label}"), "matches no speaker label of any run of this episode")
        })
        .collect()
}

/// Roster people no speaker label of the runs resolves to, once every such label has a name (while
/// one is unnamed it may be anyone on the roster, so nothing can be said yet): a person listed who
/// never speaks, or whose name is spelled one way in the roster and another in the votes. Names
/// compare as resolving does. Once a person has decided a name in the episode, nothing is said: an
/// editor may spell a name otherwise than the feed's roster or find that someone listed does not
/// speak, and the content `builder sync` commits from their decisions must build.
pub fn roster_without_speech(
    reports: &BTreeMap<String, LabelReport>,
    runs: &[Vec<String>],
    roster: &[Person],
) -> Vec<Diagnostic> {
    let speaking: Vec<&LabelReport> = reports
        .iter()
        .filter(|(label, _)| runs.iter().any(|labels| labels.contains(label)))
        .map(|(_, report)| report)
        .collect();
    if speaking.iter().any(|report| report.name.is_none() || report.human.is_some()) {
        return Vec::new();
    }
    let spoken: Vec<String> =
        speaking.iter().filter_map(|report| report.name.as_deref()).map(name_key).collect();
    roster
        .iter()
        .enumerate()
        .filter(|(_, person)| !spoken.contains(&name_key(&person.name)))
        .map(|(idx, person)| {
            Diagnostic::new(
                format!("roster[{idx}].name"),
                format!("{} never speaks: no speaker label of any run resolves to this name", person.name),
            )
        })
        .collect()
}

pub fn validate(names: &Names) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (label, entry) in &names.labels {
        for (idx, vote) in entry.votes.iter().enumerate() {
            if vote.source == VoteSource::Elimination {
                problems.push(Diagnostic::new(
                    format!("labels.{label}.votes[{idx}].source"),
                    "elimination is computed from the other votes and the roster; do not store it",
                ));
            }
            let field = |name: &str| format!("labels.{label}.votes[{idx}].{name}");
            if vote.name.as_deref().is_some_and(|name| name.trim().is_empty()) {
                problems.push(Diagnostic::new(field("name"), "use null to abstain, not an empty name"));
            }
            problems.extend(
                vote.name.as_deref().and_then(|name| clean::check(&field("name"), name, TextKind::Line)),
            );
            problems.extend(clean::check(&field("evidence"), &vote.evidence, TextKind::Prose));
            problems.extend(
                vote.model.as_deref().and_then(|model| clean::check(&field("model"), model, TextKind::Line)),
            );
        }
        let mut sources: Vec<VoteSource> = entry.votes.iter().map(|vote| vote.source).collect();
        crate::sorted::sort(&mut sources);
        if sources.windows(2).any(|pair| pair[0] == pair[1]) {
            problems.push(Diagnostic::new(format!("labels.{label}.votes"), "each source votes at most once"));
        }
        if let Some(human) = &entry.human {
            let field = |name: &str| format!("labels.{label}.human.{name}");
            if human.name.trim().is_empty() {
                problems.push(Diagnostic::new(field("name"), "must not be empty"));
            }
            problems.extend(clean::check(&field("name"), &human.name, TextKind::Line));
            problems.extend(clean::check(&field("by"), &human.by, TextKind::Line));
            problems.extend(
                human.note.as_deref().and_then(|note| clean::check(&field("note"), note, TextKind::Prose)),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotes::transcript::Role;
    use expect_test::{Expect, expect};

    fn vote(spec: &str) -> Vote {
        // `asr=Ana` votes; `llm=-` abstains.
        let (source, name) = spec.split_once('=').unwrap();
        let source = match source {
            "asr" => VoteSource::Asr,
            "llm" => VoteSource::LanguageModel,
            "voice" => VoteSource::VoiceMatch,
            other => panic!("{other}"),
        };
        Vote::new(source, (name != "-").then(|| name.to_string()), "")
    }

    fn check(specs: &str, human: Option<&str>, expect: Expect) {
        let votes: Vec<Vote> = specs.split_whitespace().map(vote).collect();
        let human = human.map(|name| HumanDecision { name: name.into(), by: "ed".into(), note: None });
        let resolved = resolve(&votes, human.as_ref());
        expect.assert_eq(&format!("{:?} {:?}", resolved.state, resolved.name));
    }

    #[test]
    fn states_follow_the_seed_table() {
        check("asr=Ana llm=Ana", None, expect![[r#"Confident Some("Ana")"#]]);
        check("asr=Ana llm=ana voice=Ana", None, expect![[r#"Confident Some("Ana")"#]]);
        check("asr=Ana llm=- voice=Ana", None, expect![[r#"Confident Some("Ana")"#]]);
        check("asr=Ana", None, expect![[r#"Tentative Some("Ana")"#]]);
        check("asr=- llm=Ana voice=-", None, expect![[r#"Tentative Some("Ana")"#]]);
        check("asr=Ana llm=Bea", None, expect!["Withheld None"]);
        check("asr=Ana llm=Ana voice=Bea", None, expect!["Withheld None"]);
        check("asr=- llm=-", None, expect!["Unknown None"]);
        check("", None, expect!["Unknown None"]);
    }

    #[test]
    fn a_human_decision_always_wins() {
        check("asr=Ana llm=Ana voice=Ana", Some("Bea"), expect![[r#"Human Some("Bea")"#]]);
        check("asr=Ana llm=Bea", Some("Ana"), expect![[r#"Human Some("Ana")"#]]);
        check("", Some("Cy"), expect![[r#"Human Some("Cy")"#]]);
    }

    #[test]
    fn a_roster_person_nobody_speaks_as_is_a_problem_until_a_person_decides() {
        let runs = vec![vec!["A".to_string()]];
        let listed = roster(&["Ines", "Rosa"]);
        let mut names = names(&[("A", "asr=Ines llm=Ines")]);
        let problems = roster_without_speech(&resolve_all(&names, &runs, &listed), &runs, &listed);
        expect![[
            r#"["roster[1].name: Rosa never speaks: no speaker label of any run resolves to this name"]"#
        ]]
        .assert_eq(&format!("{:?}", problems.iter().map(ToString::to_string).collect::<Vec<_>>()));
        let decided = HumanDecision { name: "Inês".into(), by: "ed".into(), note: None };
        names.labels.get_mut("A").unwrap().human = Some(decided);
        assert!(roster_without_speech(&resolve_all(&names, &runs, &listed), &runs, &listed).is_empty());
    }

    fn roster(names: &[&str]) -> Vec<Person> {
        names
            .iter()
            .map(|name| Person { name: name.to_string(), role: Role::Guest, no_voiceprint: false })
            .collect()
    }

    fn names(entries: &[(&str, &str)]) -> Names {
        Names {
            labels: entries
                .iter()
                .map(|(label, specs)| {
                    (
                        label.to_string(),
                        LabelVotes { votes: specs.split_whitespace().map(vote).collect(), human: None },
                    )
                })
                .collect(),
        }
    }

    fn check_all(names: &Names, labels: &[&str], people: &[&str], expect: Expect) {
        let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        let reports = resolve_all(names, &[labels], &roster(people));
        let lines: Vec<String> = reports
            .iter()
            .map(|(label, report)| {
                let votes: Vec<String> = report
                    .votes
                    .iter()
                    .map(|v| format!("{:?}={}", v.source, v.name.as_deref().unwrap_or("-")))
                    .collect();
                format!("{label}: {:?} {:?} [{}]", report.name_state, report.name, votes.join(" "))
            })
            .collect();
        expect.assert_eq(&lines.join("\n"));
    }

    /// [`check_all`] for a conversation of two people, Ana and Bea, under the labels `S0` and `S1`, given
    /// the votes of each label.
    fn check_two_people(s0_votes: &str, s1_votes: &str, expect: Expect) {
        check_all(&names(&[("S0", s0_votes), ("S1", s1_votes)]), &["S0", "S1"], &["Ana", "Bea"], expect);
    }

    #[test]
    fn elimination_names_the_remaining_guest_in_a_two_person_conversation() {
        // S0 is confident, so elimination makes S1's single LLM vote confident.
        check_two_people(
            "asr=Ana llm=Ana",
            "llm=Bea",
            expect![[r#"
                S0: Confident Some("Ana") [Asr=Ana LanguageModel=Ana Elimination=-]
                S1: Confident Some("Bea") [LanguageModel=Bea Elimination=Bea]"#]],
        );
        // Elimination that contradicts a vote makes the label withheld.
        check_two_people(
            "asr=Ana voice=Ana",
            "llm=Cy",
            expect![[r#"
                S0: Confident Some("Ana") [Asr=Ana VoiceMatch=Ana Elimination=-]
                S1: Withheld None [LanguageModel=Cy Elimination=Bea]"#]],
        );
    }

    #[test]
    fn elimination_abstains_without_a_confident_other_voice_or_with_three_people() {
        check_two_people(
            "asr=Ana",
            "",
            expect![[r#"
                S0: Tentative Some("Ana") [Asr=Ana Elimination=-]
                S1: Unknown None [Elimination=-]"#]],
        );
        check_all(
            &names(&[("S0", "asr=Ana llm=Ana"), ("S1", "")]),
            &["S0", "S1", "S2"],
            &["Ana", "Bea", "Cy"],
            expect![[r#"
                S0: Confident Some("Ana") [Asr=Ana LanguageModel=Ana]
                S1: Unknown None []
                S2: Unknown None []"#]],
        );
    }

    #[test]
    fn a_label_of_two_voices_is_never_confident_until_a_person_decides() {
        // The service gave A and B one name; the model and elimination agree with it.
        let merged = merged_label(&["B", "A"]);
        assert_eq!(merged, "A+B");
        assert!(is_merged_label(&merged) && !is_merged_label("A") && !is_merged_label("C++"));
        check_all(
            &names(&[(&merged, "asr=Ana llm=Ana"), ("C", "asr=Bea llm=Bea")]),
            &[&merged, "C"],
            &["Ana", "Bea"],
            expect![[r#"
                A+B: Tentative Some("Ana") [Asr=Ana LanguageModel=Ana Elimination=Ana]
                C: Confident Some("Bea") [Asr=Bea LanguageModel=Bea Elimination=-]"#]],
        );
        let mut decided = names(&[(&merged, "asr=Ana llm=Ana")]);
        decided.labels.get_mut(&merged).unwrap().human =
            Some(HumanDecision { name: "Ana".into(), by: "ed".into(), note: None });
        let reports = resolve_all(&decided, &[vec![merged.clone()]], &[]);
        assert_eq!(reports[&merged].name_state, NameState::Human);
    }

    #[test]
    fn a_decision_body_reports_every_problem() {
        let check = |body: serde_json::Value, expect: Expect| {
            let shown = match decision_from_body(&body) {
                Ok(ok) => format!("{ok:?}"),
                Err(problems) => problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
            };
            expect.assert_eq(&shown);
        };
        check(
            serde_json::json!({"name": "  Ana   Lima ", "note": " asked her "}),
            expect![[r#"("Ana Lima", Some("asked her"))"#]],
        );
        check(serde_json::json!({"name": "Ana"}), expect![[r#"("Ana", None)"#]]);
        check(
            serde_json::json!({"name": " ", "note": 3, "who": "x"}),
            expect![[r#"
                who: unknown field; send only name and note
                name: must not be empty
                note: must be a string"#]],
        );
        check(serde_json::json!([1]), expect!["(body): must be a JSON object {name, note}"]);
        check(
            serde_json::json!({"name": "Ana\u{202E} Lima", "note": "rang\u{7}"}),
            expect![[r#"
                name: character 4 is the bidirectional control U+202E; leave it out: the page isolates this text already
                note: character 5 is the control character U+0007; only newline and tab may appear"#]],
        );
    }

    #[test]
    fn a_decision_arriving_later_resolves_the_other_voice_by_elimination() {
        let inputs = NameInputs {
            names: names(&[("S0", "asr=Ana"), ("S1", "llm=Bea")]),
            runs: vec![vec!["S0".into(), "S1".into()]],
            roster: roster(&["Ana", "Bea"]),
        };
        let before = inputs.resolve_with(&BTreeMap::new());
        assert_eq!(before["S1"].name_state, NameState::Tentative);
        let decision = HumanDecision { name: "Ana".into(), by: "ed".into(), note: None };
        let after = inputs.resolve_with(&[("S0".to_string(), decision)].into());
        assert_eq!(
            (after["S0"].name_state, after["S1"].name_state),
            (NameState::Human, NameState::Confident)
        );
        assert!(inputs.has_label("S1") && !inputs.has_label("S9"));
    }

    #[test]
    fn stored_elimination_votes_and_double_votes_are_rejected() {
        let mut bad = names(&[("S0", "asr=Ana asr=Bea")]);
        bad.labels.get_mut("S0").unwrap().votes.push(Vote::new(
            VoteSource::Elimination,
            Some("Ana".into()),
            "",
        ));
        let problems: Vec<String> = validate(&bad).iter().map(ToString::to_string).collect();
        expect![[r#"
            [
                "labels.S0.votes[2].source: elimination is computed from the other votes and the roster; do not store it",
                "labels.S0.votes: each source votes at most once",
            ]
        "#]]
        .assert_debug_eq(&problems);
    }

    #[test]
    fn names_votes_and_decisions_in_a_names_file_are_clean_text() {
        let mut bad = names(&[("S0", "asr=Ana\u{200F}")]);
        let entry = bad.labels.get_mut("S0").unwrap();
        entry.votes[0].evidence = "said \u{202B}hi".into();
        entry.human = Some(HumanDecision { name: "Ana\u{0}".into(), by: "ed".into(), note: None });
        let problems: Vec<String> = validate(&bad).iter().map(ToString::to_string).collect();
        expect![[r#"
            [
                "labels.S0.votes[0].name: character 4 is the bidirectional control U+200F; leave it out: the page isolates this text already",
                "labels.S0.votes[0].evidence: the bidirectional control U+202B at character 6 is not closed by U+202C in the same line",
                "labels.S0.human.name: character 4 is the control character U+0000; a single line takes none",
            ]
        "#]]
        .assert_debug_eq(&problems);
    }
}
