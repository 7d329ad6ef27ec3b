//! Attribution on a small transcript: each case is a quote and the answer's key fields.

use std::collections::BTreeMap;

use expect_test::{Expect, expect};

use super::*;
use crate::quotes::quote::fixtures::{segment, sourdough};
use crate::quotes::transcript::{RunKind, Speaker, Word};

pub(crate) fn canonical() -> Canonical {
    let mut timed = segment("S0", 0.5, 6.1, "Welcome to The Kitchen Table. I'm Ana Lima.");
    timed.words = Some(
        [
            ("Welcome", 0.5, 0.9),
            ("to", 0.9, 1.0),
            ("The", 1.0, 1.1),
            ("Kitchen", 1.1, 1.5),
            ("Table.", 1.5, 1.9),
            ("I'm", 2.2, 2.4),
            ("Ana", 2.4, 2.7),
            ("Lima.", 2.7, 3.1),
        ]
        .into_iter()
        .map(|(w, start_s, end_s)| Word { w: w.into(), start_s, end_s, estimated: false })
        .collect(),
    );
    let mut estimated = segment("S1", 40.0, 50.0, "And that is why I keep a notebook next to the oven.");
    estimated.start_estimated = true;
    estimated.end_estimated = true;
    let mut speakers = BTreeMap::new();
    speakers.insert(
        "S0".to_string(),
        Speaker { name: Some("Ana Lima".into()), name_state: NameState::Confident },
    );
    speakers
        .insert("S1".to_string(), Speaker { name: Some("Ben Okafor".into()), name_state: NameState::Human });
    speakers.insert("S2".to_string(), Speaker { name: Some("Cy".into()), name_state: NameState::Tentative });
    Canonical {
        episode: sourdough(),
        pipeline: "whisperx".into(),
        kind: RunKind::Asr,
        speakers,
        segments: vec![
            timed,
            segment(
                "S1",
                6.8,
                14.2,
                "Thanks, Ana. I've kept the same starter alive for 12 years, and it has outlived two ovens.",
            ),
            segment("S0", 14.9, 18.3, "Twelve years! What do you feed it?"),
            segment(
                "S1",
                18.9,
                27.5,
                "Rye flour and water, every morning. The secret is patience, not some magic ingredient.",
            ),
            segment("S2", 28.0, 33.6, "Patience is the one thing nobody can sell you in a jar."),
            estimated,
        ],
    }
}

fn check(quote: &str, expect: Expect) {
    let canonical = canonical();
    let prepared = Prepared::new(&canonical.segments);
    let answer = attribute(&canonical, &prepared, quote);
    let rendered = match answer.found_at {
        None => format!("found={} reason={:?}", answer.found, answer.reason),
        Some(m) => format!(
            "{} {:?} ({:?}) {}-{} seg={:?}{} exact={} verbatim={} crosses={} trust={:?} words={}/{}\n{:?}",
            m.speaker,
            m.name,
            m.name_state,
            m.start_s,
            m.end_s,
            m.segment_start_s,
            if m.times_estimated { " estimated" } else { "" },
            m.exact,
            m.verbatim,
            m.crosses_speaker,
            m.trust,
            m.matched_words,
            m.quote_words,
            m.text
        ),
    };
    expect.assert_eq(&rendered);
}

#[test]
fn a_verbatim_quote_lands_on_word_times_with_high_trust() {
    check(
        "welcome to the kitchen table",
        expect![[r#"
            S0 Some("Ana Lima") (Confident) 0.5-1.9 seg=Some(0.5) exact=true verbatim=true crosses=false trust=High words=5/5
            "Welcome to The Kitchen Table""#]],
    );
}

#[test]
fn curly_quotes_case_and_punctuation_do_not_matter() {
    check(
        "“THE SECRET IS PATIENCE — NOT SOME MAGIC INGREDIENT”",
        expect![[r#"
            S1 Some("Ben Okafor") (Human) 22.5-27.5 seg=Some(18.9) estimated exact=true verbatim=true crosses=false trust=High words=8/8
            "The secret is patience, not some magic ingredient""#]],
    );
}

#[test]
fn numbers_as_words_match_digits() {
    check(
        "I've kept the same starter alive for twelve years",
        expect![[r#"
            S1 Some("Ben Okafor") (Human) 7.869-11.569 seg=Some(6.8) estimated exact=true verbatim=true crosses=false trust=High words=9/9
            "I've kept the same starter alive for 12 years""#]],
    );
}

#[test]
fn an_asr_error_is_tolerated_but_not_verbatim() {
    check(
        "the secret is patients, not some magic ingredient",
        expect![[r#"
            S1 Some("Ben Okafor") (Human) 22.5-27.5 seg=Some(18.9) estimated exact=false verbatim=false crosses=false trust=Review words=7/8
            "The secret is patience, not some magic ingredient""#]],
    );
}

#[test]
fn a_changed_tail_matches_only_the_leading_portion() {
    check(
        "rye flour and water every morning and then I go back to bed for hours",
        expect![[r#"found=false reason=Some("quote_not_found")"#]],
    );
}

#[test]
fn a_quote_across_two_speakers_is_flagged_and_never_high() {
    check(
        "what do you feed it? Rye flour and water",
        expect![[r#"
            S0 Some("Ana Lima") (Confident) 16.3-20.8 seg=Some(14.9) estimated exact=true verbatim=true crosses=true trust=Review words=9/9
            "What do you feed it? Rye flour and water""#]],
    );
}

#[test]
fn a_tentative_name_needs_review() {
    check(
        "nobody can sell you in a jar",
        expect![[r#"
            S2 Some("Cy") (Tentative) 30.647-33.6 seg=Some(28.0) estimated exact=true verbatim=true crosses=false trust=Review words=7/7
            "nobody can sell you in a jar""#]],
    );
}

#[test]
fn estimated_segment_starts_fall_back_to_the_last_measured_one() {
    check(
        "I keep a notebook next to the oven",
        expect![[r#"
            S1 Some("Ben Okafor") (Human) 43.137-50 seg=Some(28.0) estimated exact=true verbatim=true crosses=false trust=High words=8/8
            "I keep a notebook next to the oven""#]],
    );
}

#[test]
fn an_absent_quote_is_not_found() {
    check(
        "we should all eat more lentils on tuesdays",
        expect![[r#"found=false reason=Some("quote_not_found")"#]],
    );
    check("zebra crossing", expect![[r#"found=false reason=Some("quote_not_found")"#]]);
}

#[test]
fn quote_checks_name_the_problem() {
    assert_eq!(check_quote(Some("  ")).unwrap_err().reason, "is required and must not be empty");
    assert_eq!(check_quote(None).unwrap_err().field, "quote");
    assert_eq!(check_quote(Some(&"a".repeat(2001))).unwrap_err().reason, "is longer than 2000 characters");
    assert_eq!(check_quote(Some("…!")).unwrap_err().reason, "has no words");
    assert_eq!(check_quote(Some(" hi ")).unwrap(), "hi");
}

#[test]
fn a_bracketed_word_is_an_edit_unless_the_transcript_has_it() {
    let mut canonical = canonical();
    canonical.segments.push(segment("S1", 51.0, 55.0, "[laughs] It never complains."));
    let prepared = Prepared::new(&canonical.segments);
    let edited = |quote: &str| {
        let m = attribute(&canonical, &prepared, quote).found_at.expect("found");
        (m.edited, m.trust)
    };
    // The bracket stands for the speaker's words ("it"); the words outside it stand verbatim.
    assert_eq!(edited("[The starter] has outlived two ovens"), (true, Trust::Review));
    assert_eq!(edited("[It] never complains"), (true, Trust::Review));
    // Copied with the transcript's own bracketed non-speech: as it stands.
    assert_eq!(edited("[Laughs] it never complains"), (false, Trust::High));
}

/// One host said "So what are we going to do about it?" and the other "What are we going to do about
/// it Sjors?" two seconds later: the quote once answered the first host with `trust: high` and no
/// `match` or `alternatives`. Two places hold it, so it is a question for a person.
#[test]
fn a_quote_two_people_said_in_one_episode_is_never_high() {
    let mut canonical = canonical();
    canonical.segments = vec![
        segment("S0", 780.0, 789.0, "So what are we going to do about it?"),
        segment("S1", 789.5, 792.0, "What are we going to do about it Sjors?"),
        segment("S0", 792.5, 795.0, "You have to think about the attack vectors."),
    ];
    let prepared = Prepared::new(&canonical.segments);
    let render = |quote: &str| {
        let answer = attribute(&canonical, &prepared, quote);
        let m = answer.found_at.expect("found");
        let alternatives: Vec<String> =
            answer.alternatives.iter().map(|a| format!("{} {:?} {}", a.speaker, a.name, a.start_s)).collect();
        format!(
            "{} {} trust={:?} match={} alternatives={alternatives:?}",
            m.speaker, m.start_s, m.trust, answer.matches
        )
    };
    // The first in time answers; the other place is its alternative.
    expect![[r#"S0 780.75 trust=Review match=2 alternatives=["S1 Some(\"Ben Okafor\") 789.5"]"#]]
        .assert_eq(&render("what are we going to do about it"));
    expect!["S1 789.5 trust=High match=1 alternatives=[]"]
        .assert_eq(&render("what are we going to do about it Sjors"));
    expect!["S0 792.5 trust=High match=1 alternatives=[]"]
        .assert_eq(&render("you have to think about the attack vectors"));

    let missing = attribute(&canonical, &prepared, "nothing like this was said");
    assert_eq!((missing.found, missing.matches, missing.alternatives.len()), (false, 0, 0));
}

/// A quote with one word changed answered `exact: true` beside `verbatim: false`: both say the same
/// now, false, and `matched_words` says how much matched.
#[test]
fn a_changed_word_is_neither_exact_nor_verbatim() {
    check(
        "The secret is patience, not some special ingredient",
        expect![[r#"
            S1 Some("Ben Okafor") (Human) 22.5-25.7 seg=Some(18.9) estimated exact=false verbatim=false crosses=false trust=Review words=6/8
            "The secret is patience, not some""#]],
    );
}

/// An editor's name on a label holding every voice of a publisher's WebVTT without voice tags (and
/// on a label a service gave two voices) made a line the host said `trust: high` under the guest's
/// name.
#[test]
fn a_label_of_several_voices_is_never_high_whoever_named_it() {
    for label in ["UNKNOWN", "A+B"] {
        let mut canonical = canonical();
        for segment in &mut canonical.segments {
            segment.speaker = label.to_string();
        }
        canonical.speakers.clear();
        canonical.speakers.insert(
            label.to_string(),
            Speaker { name: Some("Ben Okafor".into()), name_state: NameState::Human },
        );
        let prepared = Prepared::new(&canonical.segments);
        let answer = attribute(&canonical, &prepared, "The secret is patience, not some magic ingredient.");
        let found = answer.found_at.expect("found");
        assert!(found.verbatim && !found.crosses_speaker, "{label}");
        assert_eq!(found.trust, Trust::Review, "{label}");
        assert!(
            found.review_reasons.iter().any(|reason| reason.contains("may be several people")),
            "{label}: {:?}",
            found.review_reasons
        );
    }
}

/// A `high` answer carries no reasons; a `review` one says each of its own.
#[test]
fn a_review_answer_says_why() {
    let canonical = canonical();
    let prepared = Prepared::new(&canonical.segments);
    let high = attribute(&canonical, &prepared, "The secret is patience, not some magic ingredient.");
    let high = high.found_at.expect("found");
    assert_eq!((high.trust, high.review_reasons.len()), (Trust::High, 0));
    let review = attribute(&canonical, &prepared, "Patience is the one thing nobody can sell you in a jar.");
    let review = review.found_at.expect("found");
    assert_eq!(review.trust, Trust::Review);
    assert_eq!(review.review_reasons, vec!["the name is unconfirmed".to_string()]);
    let crossing = attribute(&canonical, &prepared, "What do you feed it? Rye flour and water");
    let crossing = crossing.found_at.expect("found");
    assert!(crossing.cite.starts_with("Ana Lima, then Ben Okafor, “"), "{}", crossing.cite);
    assert_eq!(crossing.review_reasons, vec!["it crosses from one speaker to another".to_string()]);
}
