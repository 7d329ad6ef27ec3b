//! The phrase index end to end: built from small transcripts, searched as the Worker searches
//! (reading only the parts each round names), and checked against a scan of every passage.

use std::collections::{BTreeMap, HashMap};

use super::format::{Bucket, Mark};
use super::read::find_words;
use super::*;
use crate::quotes::quote::fixtures::check_answer;
use crate::quotes::quote::normalise;
use crate::quotes::transcript::{Canonical, EpisodeRef, NameState, RunKind, Segment, Speaker};
use expect_test::{Expect, expect};

fn canonical(id: &str, segments: &[(&str, f64, f64, &str)]) -> Canonical {
    let mut speakers = BTreeMap::new();
    speakers.insert("A".to_string(), Speaker { name: Some("Ana Lima".into()), name_state: NameState::Human });
    speakers.insert("B".to_string(), Speaker { name: Some("Bea".into()), name_state: NameState::Tentative });
    Canonical {
        episode: EpisodeRef {
            id: id.into(),
            title: id.into(),
            source_url: format!("https://ex.com/{id}"),
            show: "s".into(),
            licence: "CC-BY-SA-4.0".into(),
            attribution: None,
            show_title: None,
            published: None,
            audio_url: None,
        },
        pipeline: "p".into(),
        kind: RunKind::HumanEdited,
        speakers,
        segments: segments
            .iter()
            .map(|(speaker, start_s, end_s, text)| Segment::said(speaker, *start_s, *end_s, text))
            .collect(),
    }
}

/// An index and its files, the parts a search read, and how many rounds it took.
struct Built {
    index: Index,
    files: HashMap<String, Vec<u8>>,
}

impl Built {
    fn of(config: Config, episodes: &[Canonical]) -> Built {
        let mut builder = IndexBuilder::new(config);
        for episode in episodes {
            builder.add_episode(episode).unwrap();
        }
        let built = builder.finish();
        let files: HashMap<String, Vec<u8>> = built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
        let tables = WholeFiles(&files).part(&Index::tables_part(&built.manifest)).unwrap().to_vec();
        Built { index: Index::open(built.manifest, &tables).unwrap(), files }
    }

    /// The index's tables, decoded.
    fn tables(&self) -> format::Tables {
        let part = Index::tables_part(&self.index.manifest);
        postcard::from_bytes(WholeFiles(&self.files).part(&part).unwrap()).unwrap()
    }

    /// The same index read with another filter of frequent grams.
    fn with_frequent(&self, frequent: Option<format::FrequentGrams>) -> Built {
        let manifest = self.index.manifest.clone();
        let mut tables = self.tables();
        tables.frequent = frequent;
        let bytes = postcard::to_allocvec(&tables).unwrap();
        Built { index: Index::open(manifest, &bytes).unwrap(), files: self.files.clone() }
    }

    /// Every gram entry's key, and whether it is frequent.
    fn grams(&self) -> Vec<(String, bool)> {
        let manifest = &self.index.manifest;
        let dict = &self.files[&manifest.dict];
        let mut at = 0usize;
        let mut grams = Vec::new();
        for len in self.tables().bucket_lens {
            let bucket: Bucket = postcard::from_bytes(&dict[at..at + len as usize]).unwrap();
            at += len as usize;
            grams.extend(
                bucket
                    .entries
                    .iter()
                    .filter(|entry| !entry.key.starts_with('@'))
                    .map(|entry| (entry.key.to_string(), entry.count >= manifest.frequent)),
            );
        }
        grams
    }

    /// Searches as a Worker does: reading the parts each round names, and only those.
    fn search(&self, query: &Query) -> (Answer, usize) {
        self.read(|index, parts| search(index, query, parts))
    }

    /// Runs `step` reading the parts each round names, and only those; with the rounds it took.
    fn read<T>(
        &self,
        step: impl Fn(&Index, &HashMap<Part, Vec<u8>>) -> Result<T, PhraseError>,
    ) -> (T, usize) {
        let (answer, rounds, _) = self.read_parts(step);
        (answer, rounds)
    }

    /// [`Built::read`], with the parts it read.
    fn read_parts<T>(
        &self,
        step: impl Fn(&Index, &HashMap<Part, Vec<u8>>) -> Result<T, PhraseError>,
    ) -> (T, usize, HashMap<Part, Vec<u8>>) {
        let whole = WholeFiles(&self.files);
        let mut read: HashMap<Part, Vec<u8>> = HashMap::new();
        for round in 0.. {
            match step(&self.index, &read) {
                Ok(answer) => return (answer, round, read),
                Err(PhraseError::Need(parts)) => {
                    assert!(!parts.is_empty() && round < 5, "round {round} needs {parts:?}");
                    for part in parts {
                        let bytes = whole.part(&part).expect("a part inside its file");
                        read.insert(part, bytes.to_vec());
                    }
                }
                Err(PhraseError::Corrupt(corrupt)) => panic!("{}", corrupt.0),
            }
        }
        unreachable!()
    }
}

fn sample() -> Built {
    Built::of(
        Config { frequent: 2, ..Config::default() },
        &[
            canonical(
                "one",
                &[
                    ("A", 0.0, 10.0, "Open source is a gift, and twenty five people maintain it."),
                    ("B", 10.0, 20.0, "Open the source file. Source is open."),
                ],
            ),
            canonical("two", &[("B", 0.0, 4.0, "I love open source."), ("A", 5.0, 6.0, "Me too.")]),
        ],
    )
}

/// [`sample`] with dates: episode `one` is the older.
fn dated_sample() -> Built {
    let dated = |id: &str, published: &str, segments: &[(&str, f64, f64, &str)]| {
        let mut episode = canonical(id, segments);
        episode.episode.published = Some(published.into());
        episode
    };
    Built::of(
        Config { frequent: 2, ..Config::default() },
        &[
            dated("two", "2024-05-01", &[("B", 0.0, 4.0, "I love open source."), ("A", 5.0, 6.0, "Me too.")]),
            dated(
                "one",
                "2019-02-01",
                &[
                    ("A", 0.0, 10.0, "Open source is a gift, and twenty five people maintain it."),
                    ("B", 10.0, 20.0, "Open the source file. Source is open."),
                ],
            ),
        ],
    )
}

fn check(params: &[(&str, &str)], expect: Expect) {
    let built = sample();
    let render = |query: Query| {
        let (answer, _) = built.search(&query);
        let mut out = format!("total {} next {:?}\n", answer.total, answer.next_cursor);
        for hit in answer.hits {
            out.push_str(&format!(
                "{} {}-{} {:?} {:?}\n",
                hit.episode.id, hit.start_s, hit.end_s, hit.name, hit.text
            ));
        }
        out
    };
    check_answer(parse_query(params.iter().copied()), render, expect);
}

#[test]
fn phrases_match_words_in_order_only() {
    check(
        &[("q", "open source")],
        expect![[r#"
            total 2 next None
            one 0-1.897 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
            two 1.474-4 Some("Bea") "I love open source."
        "#]],
    );
    check(
        &[("q", "“25 People”")],
        expect![[r#"
            total 1 next None
            one 4.655-7.759 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
        "#]],
    );
}

#[test]
fn speaker_narrows_a_phrase_and_alone_lists_everything_said() {
    check(
        &[("q", "open source"), ("speaker", "bea")],
        expect![[r#"
            total 1 next None
            two 1.474-4 Some("Bea") "I love open source."
        "#]],
    );
    check(
        &[("speaker", "Ana Lima"), ("limit", "1")],
        expect![[r#"
            total 2 next Some("bzE")
            one 0-10 Some("Ana Lima") "Open source is a gift, and twenty five people maintain it."
        "#]],
    );
    check(&[("speaker", "Nobody")], expect!["total 0 next None\n"]);
}

#[test]
fn bad_parameters_are_named() {
    check(
        &[("limit", "0"), ("q", "!!!")],
        expect![[r#"
            limit: must be a whole number from 1 to 100
            q: has no words
        "#]],
    );
    check(&[], expect!["q: give a phrase `q`, a `speaker`, or both\n"]);
}

fn attribute_everywhere(built: &Built, quote: &str) -> String {
    let mut question = crate::quotes::quote::corpus::Question::new(quote);
    let answer = loop {
        let (places, _) = built.read(|index, parts| question.places(index, parts));
        if let crate::quotes::quote::corpus::Turn::Answered(answer) = question.attribute(&places) {
            break *answer;
        }
    };
    let Some(m) = answer.found_at else {
        return format!("found={} episode={:?} match={:?}", answer.found, answer.episode, answer.matches);
    };
    let alternatives: Vec<String> =
        answer.alternatives.iter().map(|a| format!("{} {:?} {}", a.episode.id, a.name, a.start_s)).collect();
    format!(
        "{} {:?} {}-{} exact={} verbatim={} edited={} crosses={} trust={:?} match={:?} alternatives={alternatives:?}\n{:?}\n{}",
        answer.episode.unwrap().id,
        m.name,
        m.start_s,
        m.end_s,
        m.exact,
        m.verbatim,
        m.edited,
        m.crosses_speaker,
        m.trust,
        answer.matches,
        m.text,
        m.cite,
    )
}

/// "full node doing all the work for you", said by one person and at once by another, answered
/// `match: 2, alternatives: []`: the other place was taken for the answer's own, being near it. A
/// question about the episode and one about the corpus now answer the same place, the first.
/// And a turn of no words ("Mm-hmm.") is in its speaker's list of everything said.
#[test]
fn two_places_side_by_side_are_the_answer_and_its_alternative() {
    let segments = [
        ("B", 0.0, 2.0, "Mm-hmm."),
        ("A", 2.0, 5.0, "Then a full node doing all the work for you."),
        ("B", 5.2, 8.0, "A full node doing all the work for you, yes."),
    ];
    let episode = canonical("one", &segments);
    let built = Built::of(Config { frequent: 2, ..Config::default() }, std::slice::from_ref(&episode));
    let quote = "full node doing all the work for you";
    expect![[r#"
        one Some("Ana Lima") 2.477-5 exact=true verbatim=true edited=false crosses=false trust=Review match=2 alternatives=["one Some(\"Bea\") 5.327"]
        "full node doing all the work for you"
        Ana Lima, “one”, s, at about 0:00:02."#]]
    .assert_eq(&attribute_everywhere(&built, quote));
    let asked = crate::quotes::quote::attribute(
        &episode,
        &crate::quotes::quote::Prepared::new(&episode.segments),
        quote,
    );
    let m = asked.found_at.expect("found");
    assert_eq!((m.speaker.as_str(), m.start_s, asked.matches, asked.alternatives.len()), ("A", 2.477, 2, 1));

    let query = parse_query([("speaker", "Bea")]).unwrap();
    let texts: Vec<String> = built.search(&query).0.hits.into_iter().map(|hit| hit.text).collect();
    assert_eq!(texts, ["Mm-hmm.", "A full node doing all the work for you, yes."]);
}

#[test]
fn who_said_this_is_answered_from_the_whole_corpus() {
    let built = dated_sample();
    let check = |quote: &str, expect: Expect| expect.assert_eq(&attribute_everywhere(&built, quote));
    // Said once, by a person an editor named: the only case `trust` may be high.
    check(
        "twenty-five people maintain it",
        expect![[r#"
            one Some("Ana Lima") 4.655-10 exact=true verbatim=true edited=false crosses=false trust=High match=1 alternatives=[]
            "twenty five people maintain it"
            Ana Lima, “one”, s, 2019-02-01, at about 0:00:04."#]],
    );
    // Said in two episodes: the earlier one answers, the other is an alternative.
    check(
        "open source",
        expect![[r#"
            one Some("Ana Lima") 0-1.897 exact=true verbatim=true edited=false crosses=false trust=Review match=2 alternatives=["two Some(\"Bea\") 1.474"]
            "Open source"
            Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
    );
    // Edited: two pieces of one passage joined by an ellipsis.
    check(
        "Open source is … people maintain it",
        expect![[r#"
            one Some("Ana Lima") 0-10 exact=true verbatim=true edited=true crosses=false trust=Review match=1 alternatives=[]
            "Open source is … people maintain it"
            Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
    );
    // Across a speaker change, and with a word changed: no passage holds it, the grams find it.
    check(
        "and twenty five people maintain it open the sauce file",
        expect![[r#"
            one Some("Ana Lima") 3.966-12.162 exact=false verbatim=false edited=false crosses=true trust=Review match=1 alternatives=[]
            "and twenty five people maintain it. Open the"
            Ana Lima, then Bea, “one”, s, 2019-02-01, at about 0:00:03."#]],
    );
    // Edited: a bracketed word standing for the speaker's own; the rest is found verbatim.
    check(
        "[The project] is a gift, and twenty five people maintain it",
        expect![[r#"
            one Some("Ana Lima") 2.069-10 exact=true verbatim=true edited=true crosses=false trust=Review match=1 alternatives=[]
            "is a gift, and twenty five people maintain it"
            Ana Lima, “one”, s, 2019-02-01, at about 0:00:02."#]],
    );
    // Its tail changed: most of its words still meet in one place.
    check(
        "Open source is a gift, and twenty five purple giraffes",
        expect![[r#"
            one Some("Ana Lima") 0-6.552 exact=false verbatim=false edited=false crosses=false trust=Review match=1 alternatives=[]
            "Open source is a gift, and twenty five"
            Ana Lima, “one”, s, 2019-02-01, at 0:00:00."#]],
    );
    check("nobody said this", expect!["found=false episode=None match=0"]);
}

/// Phrases of every kind the lattice knows — an entry, frequent or rare; no entry but a rare one
/// inside; longer than the longest gram; absent — answer exactly what reading every passage
/// answers, with and without a speaker; and so they do when the filter of frequent grams says
/// "frequent" of every gram (no filter), or wrongly of half the rare ones: it only chooses what
/// is read.
#[test]
fn a_long_quote_over_many_short_passages_is_found() {
    // A quote of 64 words over twelve turns: more passages than the fewest read on each side
    // of its place, or than the eight read before.
    let turns = [
        "Tell me about the launch.",
        "Which one?",
        "The big one in March.",
        "Right, that one.",
        "So what happened next?",
        "Well we shipped it.",
        "On a Friday?",
        "On a Friday, yes, and nobody slept that weekend at all.",
        "Why not?",
        "Because the migration locked every table in the database for hours.",
        "Ouch.",
        "Then the pager went off again and again until Monday morning came around.",
    ];
    let segments: Vec<(&str, f64, f64, &str)> = turns
        .iter()
        .enumerate()
        .map(|(at, text)| {
            (if at % 2 == 0 { "A" } else { "B" }, at as f64 * 5.0, at as f64 * 5.0 + 5.0, *text)
        })
        .collect();
    let mut episodes = vec![canonical("long", &segments)];
    // Other talk around it, so the quote's place is not the whole corpus.
    let filler = "We talked about databases and weekends and pagers for a while today.";
    episodes.push(canonical("other", &[("A", 0.0, 5.0, filler), ("B", 5.0, 9.0, "Indeed we did.")]));
    let built = Built::of(Config { frequent: 2, ..Config::default() }, &episodes);
    let quote = turns.join(" ");
    let answer = attribute_everywhere(&built, &quote);
    assert!(answer.starts_with("long "), "{answer}");
    assert!(answer.contains("until Monday morning came around"), "{answer}");
}

#[test]
fn marks_keep_passages_without_the_neighbours_unread() {
    // "zebra" is rare; one passage holds "the zebra" and two hold "zebra" after words whose mark
    // bits differ from "the"'s, so only the first is checked against its text.
    let the = Mark::bit("the");
    let others: Vec<&str> =
        ["a", "my", "one", "big", "old", "red", "wild"].into_iter().filter(|w| Mark::bit(w) != the).collect();
    let mut texts = vec![
        String::from("the zebra ran"),
        format!("{} zebra ran", others[0]),
        format!("{} zebra ran", others[1]),
    ];
    // "the" is frequent, so the rare "zebra" is what narrows the phrase.
    texts.extend(["the sky", "the sea", "the end", "the start"].map(String::from));
    let segments: Vec<(&str, f64, f64, &str)> =
        texts.iter().enumerate().map(|(at, text)| ("A", at as f64, at as f64 + 1.0, text.as_str())).collect();
    let built = Built::of(
        Config { frequent: 4, passages_per_block: 1, ..Config::default() },
        &[canonical("one", &segments)],
    );
    let query = parse_query([("q", "the zebra")]).unwrap();
    let (answer, _, read) = built.read_parts(|index, parts| search(index, &query, parts));
    assert_eq!(answer.hits.iter().map(|hit| hit.text.as_str()).collect::<Vec<_>>(), ["the zebra ran"]);
    let blocks = read.keys().filter(|part| part.file == built.index.manifest.passages).count();
    assert_eq!(blocks, 1, "only the block of the passage whose marks allow \"the\" is read");
    // "zebra ran" ends every passage's "zebra": all three hold it, marks or not.
    let (answer, _) = built.search(&parse_query([("q", "zebra ran")]).unwrap());
    assert_eq!(answer.total, 3);
}

/// xorshift64: the same corpus and phrases on every run.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `n_episodes` episodes of `n_passages` passages of `text()`, every third said by Ana Lima and the
/// others by Bea; with each passage as (episode, speaker's name, text), for [`scan`].
fn corpus(
    n_episodes: usize,
    n_passages: usize,
    mut text: impl FnMut() -> String,
) -> (Vec<Canonical>, Vec<(String, &'static str, String)>) {
    let (mut episodes, mut passages) = (Vec::new(), Vec::new());
    for e in 0..n_episodes {
        let id = format!("ep{e}");
        let mut texts = Vec::new();
        for s in 0..n_passages {
            let (speaker, name) = if s % 3 == 0 { ("A", "Ana Lima") } else { ("B", "Bea") };
            let text = text();
            passages.push((id.clone(), name, text.clone()));
            texts.push((speaker, s as f64, s as f64 + 1.0, text));
        }
        let segments: Vec<(&str, f64, f64, &str)> =
            texts.iter().map(|(sp, a, b, t)| (*sp, *a, *b, t.as_str())).collect();
        episodes.push(canonical(&id, &segments));
    }
    (episodes, passages)
}

/// The passages (episode, speaker's name, text) that hold `phrase`, by reading every one.
fn scan<'p>(
    passages: &'p [(String, &str, String)],
    phrase: &str,
    speaker: Option<&str>,
) -> Vec<&'p (String, &'p str, String)> {
    let wanted: Vec<String> = phrase.split(' ').map(str::to_string).collect();
    passages
        .iter()
        .filter(|(_, name, text)| {
            speaker.is_none_or(|s| s == *name) && find_words(&normalise::tokens(text), &wanted).is_some()
        })
        .collect()
}

/// The query for `phrase`, said by `speaker` when one is given, asking for `limit` hits when given.
fn phrase_query(phrase: &str, speaker: Option<&str>, limit: Option<&str>) -> Query {
    let mut params = vec![("q", phrase)];
    params.extend(limit.map(|limit| ("limit", limit)));
    params.extend(speaker.map(|speaker| ("speaker", speaker)));
    parse_query(params).unwrap()
}

/// Asserts that `answer`, a page of at most `limit` hits, is what a [`scan`] found (`expected`): the
/// total, and each hit's episode and text in order. `what` names the search in a failure.
fn assert_as_scanned(answer: &Answer, expected: &[&(String, &str, String)], limit: usize, what: &str) {
    assert_eq!(answer.total as usize, expected.len(), "total of {what}");
    let got: Vec<(&str, &str)> =
        answer.hits.iter().map(|h| (h.episode.id.as_str(), h.text.as_str())).collect();
    let want: Vec<(&str, &str)> =
        expected.iter().take(limit).map(|(e, _, t)| (e.as_str(), t.as_str())).collect();
    assert_eq!(got, want, "hits of {what}");
}

/// A phrase of common words longer than five ("at the end of the day") is an entry of its own when
/// its two grams one word shorter are frequent: its total is the entry's and its first page is
/// copied beside it, so a search reads no passage block, where checking every passage that holds
/// both of its grams of five words read hundreds of blocks on the Changelog corpus.
#[test]
fn a_long_phrase_of_common_words_reads_no_candidates() {
    let fillers = ["so", "and", "it", "is", "we", "the", "day"];
    let endings = ["at the end of the day", "at the end of the week", "the end of the day", "at the end"];
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let (episodes, passages) = corpus(4, 24, || {
        let mut text: Vec<&str> =
            (0..random.below(4)).map(|_| fillers[random.below(fillers.len())]).collect();
        text.push(endings[random.below(endings.len())]);
        text.extend((0..random.below(4)).map(|_| fillers[random.below(fillers.len())]));
        text.join(" ")
    });
    let config = Config { max_gram: 8, frequent: 3, bucket_bytes: 64, passages_per_block: 2 };
    let built = Built::of(config, &episodes);

    let longest: Vec<&str> = "so and at the end of the day it is the end of the week".split(' ').collect();
    let mut phrases: Vec<String> = Vec::new();
    for n in 2..=10 {
        phrases.extend(longest.windows(n).map(|w| w.join(" ")));
    }
    let mut entries = 0;
    for (idx, phrase) in phrases.iter().enumerate() {
        let speaker = (idx % 3 == 0).then_some("Bea");
        let expected = scan(&passages, phrase, speaker);
        let (answer, _) = built.search(&phrase_query(phrase, speaker, Some("100")));
        assert_as_scanned(&answer, &expected, 100, &format!("{phrase:?} ({speaker:?})"));
        // A frequent phrase of up to `max_gram` words, asked for its first page (which its entry
        // lists whole): no block read.
        let words = phrase.split(' ').count();
        if speaker.is_none() && words <= config.max_gram && expected.len() >= DEFAULT_LIMIT {
            let query = parse_query([("q", phrase.as_str())]).unwrap();
            let (_, _, read) = built.read_parts(|index, parts| search(index, &query, parts));
            let blocks = read.keys().filter(|part| part.file == built.index.manifest.passages).count();
            assert_eq!(blocks, 0, "{phrase:?} read {blocks} blocks");
            entries += 1;
        }
    }
    assert!(
        entries >= 3 && phrases.iter().any(|p| p == "at the end of the day"),
        "{entries} frequent phrases"
    );
}

#[test]
fn answers_equal_a_scan_of_every_passage() {
    let words = ["the", "a", "we", "went", "to", "open", "source", "is", "gift", "shop", "zebra"];
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    // Skewed towards the first words, so grams of every length are frequent somewhere.
    let (episodes, passages) = corpus(6, 30, || {
        let len = 1 + random.below(12);
        let text: Vec<&str> =
            (0..len).map(|_| words[random.below(words.len()).min(random.below(words.len()))]).collect();
        text.join(" ")
    });
    let mut below = |n: usize| random.below(n);
    let built =
        Built::of(Config { max_gram: 3, frequent: 3, bucket_bytes: 64, passages_per_block: 4 }, &episodes);

    let mut phrases: Vec<String> = Vec::new();
    for (_, _, text) in passages.iter().step_by(7) {
        let w: Vec<&str> = text.split(' ').collect();
        for n in 1..=6.min(w.len()) {
            phrases.push(w[..n].join(" "));
        }
    }
    for _ in 0..150 {
        let n = 1 + below(6);
        phrases.push((0..n).map(|_| words[below(words.len())]).collect::<Vec<_>>().join(" "));
    }
    let grams = built.grams();
    assert!(grams.iter().filter(|(_, frequent)| *frequent).count() > 20, "a corpus with frequent grams");
    let mut rare = grams.iter().filter(|(_, frequent)| !*frequent).map(|(key, _)| key.as_str());
    let wrong = grams.iter().filter(|(_, frequent)| *frequent).map(|(key, _)| key.as_str());
    let wrong = format::FrequentGrams::of(wrong.chain(std::iter::from_fn(|| rare.nth(1))));
    let filters = [built.with_frequent(None), built.with_frequent(wrong)];
    let mut copied = 0;
    let (mut kinds, mut found) = ([0usize; 2], 0);
    for (idx, phrase) in phrases.iter().enumerate() {
        let speaker = (idx % 4 == 0).then_some("Ana Lima");
        let wanted: Vec<String> = phrase.split(' ').map(str::to_string).collect();
        let expected = scan(&passages, phrase, speaker);
        let query = phrase_query(phrase, speaker, Some("100"));
        let (answer, rounds) = built.search(&query);
        assert_as_scanned(&answer, &expected, 100, &format!("{phrase:?} ({speaker:?})"));
        // The first page alone, which a frequent entry lists beside its bitmap.
        let first_query = phrase_query(phrase, speaker, None);
        let (first_page, _, read) = built.read_parts(|index, parts| search(index, &first_query, parts));
        assert_as_scanned(
            &first_page,
            &expected,
            DEFAULT_LIMIT,
            &format!("the first page of {phrase:?} ({speaker:?})"),
        );
        // Times and names too, whether the page came from the blocks or from its copy.
        assert_eq!(first_page.hits[..], answer.hits[..first_page.hits.len()], "first page of {phrase:?}");
        copied += usize::from(read.keys().any(|part| built.index.manifest.pages.contains(&part.file)));
        kinds[usize::from(wanted.len() > 3)] += 1;
        found += usize::from(!expected.is_empty());
        // Rare grams, tiles, a lattice level, bitmaps, blocks: a long phrase of words this small
        // corpus holds everywhere (few grams rare) reads its rare grams before its tiles.
        assert!(rounds <= 5, "{phrase:?} took {rounds} rounds");
        for other in &filters {
            assert_eq!(other.search(&query).0, answer, "{phrase:?}, another filter");
        }
    }
    assert!(kinds[0] > 50 && kinds[1] > 50 && found > 100 && found < phrases.len(), "{kinds:?} {found}");
    assert!(copied > 20, "only {copied} first pages came from their copies");
}

/// Episodes taken in since the build, in an overlay of their own, are found by a search and a quote
/// as built ones are: their hits follow the built ones in one paged list, and a quote said in both
/// counts two places, so it is not `high`.
#[test]
fn an_overlay_joins_the_built_index_in_search_and_attribution() {
    let built = sample();
    let taken_in =
        canonical("three", &[("A", 0.0, 5.0, "Open source is a gift, and twenty five people maintain it.")]);
    let overlay = Overlay::of(&[taken_in]).unwrap().expect("one episode");
    let pages = |limit: &str| {
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        loop {
            let mut params = vec![("q", "open source".to_string()), ("limit", limit.to_string())];
            params.extend(cursor.clone().map(|c| ("cursor", c)));
            let query = parse_query(params.iter().map(|(k, v)| (*k, v.as_str()))).unwrap();
            let (answer, _) = built.search(&query);
            let answer = overlay.search(answer, &query).unwrap();
            assert_eq!(answer.total, 3);
            seen.extend(answer.hits.iter().map(|hit| hit.episode.id.clone()));
            match answer.next_cursor {
                Some(next) => cursor = Some(next),
                None => return seen,
            }
        }
    };
    assert_eq!(pages("10"), ["one", "two", "three"]);
    assert_eq!(pages("1"), ["one", "two", "three"], "paged one at a time, every hit once");
    assert_eq!(pages("2"), ["one", "two", "three"]);

    let quote = "twenty five people maintain it";
    let mut question = crate::quotes::quote::corpus::Question::new(quote);
    let answer = loop {
        let (places, _) = built.read(|index, parts| question.places(index, parts));
        let places = places.join(question.overlay_places(&overlay).unwrap());
        if let crate::quotes::quote::corpus::Turn::Answered(answer) = question.attribute(&places) {
            break *answer;
        }
    };
    assert_eq!(answer.matches, 2, "the built episode and the one taken in");
    let m = answer.found_at.expect("found");
    assert_eq!(m.trust, crate::quotes::quote::Trust::Review);
    assert_eq!(answer.alternatives.len(), 1);

    // Only in the overlay: found there.
    let only = canonical("four", &[("B", 0.0, 5.0, "The harbour vote was never about the harbour.")]);
    let overlay = Overlay::of(&[only]).unwrap().unwrap();
    let mut question = crate::quotes::quote::corpus::Question::new("never about the harbour");
    let answer = loop {
        let (places, _) = built.read(|index, parts| question.places(index, parts));
        let places = places.join(question.overlay_places(&overlay).unwrap());
        if let crate::quotes::quote::corpus::Turn::Answered(answer) = question.attribute(&places) {
            break *answer;
        }
    };
    assert!(answer.found && answer.matches == 1, "{answer:?}");
    assert_eq!(answer.episode.map(|e| e.id).as_deref(), Some("four"));
}
