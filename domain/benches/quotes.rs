//! Quote service benchmarks on the real Changelog corpus (CC BY-SA 4.0, © Changelog Media LLC), extracted
//! at bench time into `tests/.work/corpus` (never committed).
//!
//! `cargo bench -p domain --bench quotes` prints:
//! - attribution latency on a three-hour transcript (p50/p99, domain code only);
//! - phrase search latency over the whole corpus (p50/p99, all index files in memory) and the bytes a
//!   query needs to load; the same for phrases of only the most frequent words (`common`);
//! - attribution accuracy on quotes sampled from real paragraphs, verbatim and perturbed: found rate,
//!   right-speaker rate, the share of `trust=high` answers that are wrong, and the start error of
//!   estimated times against held-out anchors;
//! - the same over the whole corpus without the episode (`everywhere`), plus quotes edited with an
//!   ellipsis: found, right episode, right speaker, `trust=high` and wrong, and what each reads.
//!
//! Timed with `Instant` around the domain calls; a fixed-seed generator makes runs comparable.

// A bench reads the corpus from disk and times itself: domain/clippy.toml's IO and clock rules are for
// the library.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use domain::quotes::quote::phrase::{
    self, Index, IndexBuilder, Joining, Part, Parts, PhraseError, WholeFiles,
};
use domain::quotes::quote::{Prepared, Reading, attribute};
use domain::quotes::transcript::import::parse_changelog;
use domain::quotes::transcript::names::NameInputs;
use domain::quotes::transcript::{Canonical, EpisodeRef, NameState, RunKind, Segment, Speaker};

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let dir = root.join("tests/.work/corpus");
    if !dir.join("jsparty").is_dir() {
        std::fs::create_dir_all(&dir).unwrap();
        let archive = root.join("../shared/corpora/changelog-transcripts.tar.xz");
        let status =
            std::process::Command::new("tar").arg("-xJf").arg(&archive).arg("-C").arg(&dir).status().unwrap();
        assert!(status.success(), "extracting {}", archive.display());
    }
    dir
}

struct Episode {
    path: String,
    markdown: String,
    canonical: Canonical,
}

fn canonical(path: &str, segments: Vec<Segment>) -> Canonical {
    let speakers: BTreeMap<String, Speaker> = segments
        .iter()
        .map(|s| (s.speaker.clone(), Speaker { name: Some(s.speaker.clone()), name_state: NameState::Human }))
        .collect();
    Canonical {
        episode: EpisodeRef {
            id: path.to_string(),
            title: path.to_string(),
            source_url: format!("https://changelog.com/{path}"),
            show: path.split('/').next().unwrap_or_default().to_string(),
            licence: "CC-BY-SA-4.0".into(),
            attribution: Some("© Changelog Media LLC".into()),
            show_title: None,
            published: None,
            audio_url: None,
        },
        pipeline: "changelog-human".into(),
        kind: RunKind::HumanEdited,
        speakers,
        segments,
    }
}

fn load_corpus() -> Vec<Episode> {
    let dir = corpus_dir();
    let mut paths = Vec::new();
    for show in std::fs::read_dir(&dir).unwrap() {
        let show = show.unwrap().path();
        if show.is_dir() {
            for file in std::fs::read_dir(&show).unwrap() {
                let file = file.unwrap().path();
                if file.extension().is_some_and(|e| e == "md") {
                    paths.push(file);
                }
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|file| {
            let markdown = std::fs::read_to_string(&file).ok()?;
            let rel = file.strip_prefix(&dir).unwrap().to_string_lossy().to_string();
            let segments = parse_changelog(&markdown);
            (!segments.is_empty()).then(|| Episode {
                canonical: canonical(&rel, segments),
                path: rel,
                markdown,
            })
        })
        .collect()
}

/// `n` as a percentage of `of` (0 of nothing is 0 %).
fn pct(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The last six words of turn `idx` and the first six of the next, when another person says the
/// next turn and both are long enough: the quote, and the word of turn `idx` it starts at.
fn across_speakers(segments: &[Segment], idx: usize) -> Option<(String, usize)> {
    let segment = &segments[idx];
    let next = segments.get(idx + 1).filter(|n| n.speaker != segment.speaker)?;
    let (w, nw) = (words(&segment.text), words(&next.text));
    if w.len() < 6 || nw.len() < 6 {
        return None;
    }
    Some((format!("{} {}", w[w.len() - 6..].join(" "), nw[..6].join(" ")), w.len() - 6))
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// A quote of `n` words from segment `seg` starting at word `at`, with its expected start time.
fn expected_start(segment: &Segment, at_word: usize) -> f64 {
    let mut byte = 0;
    for (idx, (pos, _)) in segment
        .text
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - segment.text.as_ptr() as usize, w))
        .enumerate()
    {
        if idx == at_word {
            byte = pos;
            break;
        }
    }
    let n_chars = segment.text.chars().count().max(1) as f64;
    segment.start_s
        + (segment.end_s - segment.start_s) * segment.text[..byte].chars().count() as f64 / n_chars
}

const THREE_HOURS_S: f64 = 3.0 * 3600.0;

fn bench_attribution_latency(corpus: &[Episode], rng: &mut Rng) {
    // Three hours: the longest episodes (by their turns: a transcriber's timed mark can put one turn's
    // time far past the episode's end), one after another.
    let mut by_length: Vec<&Episode> = corpus.iter().collect();
    by_length.sort_by_key(|episode| std::cmp::Reverse(episode.canonical.segments.len()));
    let mut segments: Vec<Segment> = Vec::new();
    let mut offset = 0.0;
    for episode in by_length {
        for segment in &episode.canonical.segments {
            let mut s = segment.clone();
            s.start_s += offset;
            s.end_s += offset;
            if s.end_s > THREE_HOURS_S {
                break;
            }
            segments.push(s);
        }
        offset = segments.last().unwrap().end_s + 1.0;
        if offset >= THREE_HOURS_S - 60.0 {
            break;
        }
    }
    let long = canonical("three-hours", segments);
    let started = Instant::now();
    let prepared = Prepared::new(&long.segments);
    let prepare_ms = started.elapsed().as_secs_f64() * 1000.0;
    // The file the build stores for the quote reads, read back as a fresh attribution reads it, beside
    // the transcript's JSON parsed as an episode the intake took in has it read.
    let stored = Reading::encode(&long, &NameInputs::default());
    // The median of 21 reads of each: one is too few on a shared machine.
    let median_ms = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let read_ms = median_ms(
        (0..21)
            .map(|_| {
                let started = Instant::now();
                let read = Reading::decode(&stored).expect("the stored file decodes");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                assert_eq!(read.prepared.n_tokens(), prepared.n_tokens());
                ms
            })
            .collect(),
    );
    let json = serde_json::to_vec(&long).expect("a transcript encodes");
    let parse_ms = median_ms(
        (0..21)
            .map(|_| {
                let started = Instant::now();
                let parsed: Canonical = serde_json::from_slice(&json).expect("a transcript parses");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                assert_eq!(parsed.segments.len(), long.segments.len());
                ms
            })
            .collect(),
    );
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..2000 {
        let segment = &long.segments[rng.below(long.segments.len())];
        let w = words(&segment.text);
        if w.len() < 8 {
            continue;
        }
        let n = 8 + rng.below(18).min(w.len() - 8);
        let at = rng.below(w.len() - n + 1);
        let quote = w[at..at + n].join(" ");
        let started = Instant::now();
        let answer = attribute(&long, &prepared, &quote);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        found += usize::from(answer.found);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "attribution, 3 h transcript ({:.1} h, {} segments, {} tokens; prepare {:.1} ms once per episode, \
         or read the stored file, transcript and index ({} bytes), {:.2} ms, where parsing the transcript's JSON \
         ({} bytes) takes {:.2} ms): {} quotes, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, found {}",
        offset / 3600.0,
        long.segments.len(),
        prepared.n_tokens(),
        prepare_ms,
        stored.len(),
        read_ms,
        json.len(),
        parse_ms,
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().unwrap(),
        found
    );
}

/// Phrase search over the whole corpus: latency with every file at hand, and what a reader that
/// starts cold loads per query (the parts each round names). Also writes the queries and passages
/// for `scripts/bench-phrase-peers.py` (tantivy and SQLite FTS5 on the same data) and the queries as
/// request paths for `scripts/bench-reads.sh`.
fn bench_phrase_search(corpus: &[Episode], rng: &mut Rng) -> (Index, HashMap<String, Vec<u8>>) {
    let started = Instant::now();
    let mut builder = IndexBuilder::default();
    for episode in corpus {
        builder.add_episode(&episode.canonical).unwrap();
    }
    let built = builder.finish();
    let build_s = started.elapsed().as_secs_f64();
    let total_bytes: usize = built.files.iter().map(|f| f.bytes.len()).sum();
    let manifest_bytes = serde_json::to_vec(&built.manifest).unwrap().len();
    let mut sizes: Vec<String> = built
        .files
        .iter()
        .map(|f| format!("{} {:.1} MiB", f.name, f.bytes.len() as f64 / 1048576.0))
        .collect();
    sizes.sort();
    println!("phrase index files: {}", sizes.join(", "));
    let files: HashMap<String, Vec<u8>> = built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
    let whole = WholeFiles(&files);
    let tables = whole.part(&Index::tables_part(&built.manifest)).unwrap().to_vec();
    let index = Index::open(built.manifest, &tables).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let peers = root.join("tests/.work/phrase-peers");
    std::fs::create_dir_all(&peers).unwrap();
    write_passages(corpus, &peers.join("passages.jsonl"));

    let mut times = Vec::new();
    let mut loaded = Vec::new();
    let (mut n_parts, mut n_rounds) = (Vec::new(), Vec::new());
    // Ranged reads and the bytes they fetch when neighbouring parts are joined (`phrase::reads`), by
    // way of joining.
    let mut joined: Vec<(Joining, Vec<f64>, Vec<f64>)> =
        JOININGS.iter().map(|&joining| (joining, Vec::new(), Vec::new())).collect();
    let mut hits = 0u64;
    // The Worker's ranged reads per query by file, summed by the query's total: 0, 1, 2-9, 10-31, 32+.
    let classes = ["0", "1", "2-9", "10-31", "32+"];
    let mut by_total = [(0usize, [0usize; 4]); 5];
    // Parts read per query by file: dictionary buckets, bitmaps, passage blocks (summed, for means).
    let mut by_file = [0usize; 4];
    // The same queries as request paths, for `scripts/bench-reads.sh` to replay through the Worker.
    let mut paths = String::new();
    let mut peer_queries = String::new();
    for round in 0..600 {
        let episode = &corpus[rng.below(corpus.len())];
        let segment = &episode.canonical.segments[rng.below(episode.canonical.segments.len())];
        let w = words(&segment.text);
        if w.len() < 4 {
            continue;
        }
        let n = 2 + rng.below(3);
        let at = rng.below(w.len() - n + 1);
        let q = w[at..at + n].join(" ");
        let speaker = (round % 5 == 0).then(|| segment.speaker.clone());
        let Ok(query) = phrase::parse_query(
            [("q", q.as_str()), ("limit", "10")]
                .into_iter()
                .chain(speaker.as_deref().map(|s| ("speaker", s))),
        ) else {
            continue;
        };
        paths.push_str(&format!("/api/search?q={}&limit=10", url_encode(&q)));
        if let Some(speaker) = &speaker {
            paths.push_str(&format!("&speaker={}", url_encode(speaker)));
        }
        paths.push('\n');
        // What a cold reader loads: every part the search asks for, round by round.
        let mut have: HashMap<Part, Vec<u8>> = HashMap::new();
        let mut rounds = 0;
        let mut needs: Vec<Vec<Part>> = Vec::new();
        let answer = loop {
            match phrase::search(&index, &query, &have) {
                Ok(answer) => break answer,
                Err(PhraseError::Need(need)) => {
                    rounds += 1;
                    needs.push(need.clone());
                    for part in need {
                        let bytes = whole.part(&part).unwrap().to_vec();
                        have.insert(part, bytes);
                    }
                }
                Err(PhraseError::Corrupt(c)) => panic!("{}", c.0),
            }
        };
        loaded.push(have.values().map(Vec::len).sum::<usize>() as f64 / 1024.0);
        n_parts.push(have.len() as f64);
        n_rounds.push(rounds as f64);
        for part in have.keys() {
            by_file[file_kind(&index, &part.file)] += 1;
        }
        for (joining, reads, bytes) in &mut joined {
            let each: Vec<phrase::Read> =
                needs.iter().flat_map(|need| phrase::reads(need, *joining)).collect();
            reads.push(each.len() as f64);
            bytes.push(each.iter().map(|read| read.range.len).sum::<u64>() as f64 / 1024.0);
        }
        let class = match answer.total {
            0 => 0,
            1 => 1,
            2..=9 => 2,
            10..=31 => 3,
            _ => 4,
        };
        by_total[class].0 += 1;
        for read in needs.iter().flat_map(|need| phrase::reads(need, phrase::JOINING)) {
            by_total[class].1[file_kind(&index, &read.range.file)] += 1;
        }
        let started = Instant::now();
        let timed = phrase::search(&index, &query, &whole).unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(timed, answer, "a cold and a warm search answer the same");
        hits += answer.total;
        let normalised = |text: &str| domain::quotes::quote::normalise::normalised(text);
        peer_queries.push_str(
            &serde_json::json!({
                "q": normalised(&q),
                "speaker": speaker.as_deref().map(domain::quotes::quote::views::fold_name),
                "total": answer.total,
            })
            .to_string(),
        );
        peer_queries.push('\n');
    }
    std::fs::write(root.join("tests/.work/phrase-queries.txt"), paths).unwrap();
    std::fs::write(peers.join("queries.jsonl"), peer_queries).unwrap();
    print_by_file("parts per query", by_file, n_parts.len());
    for (class, (n, sums)) in classes.iter().zip(by_total) {
        print_by_file(&format!("ranged reads of the {n} queries with a total of {class}"), sums, n);
    }
    for list in [&mut times, &mut loaded, &mut n_parts, &mut n_rounds] {
        list.sort_by(f64::total_cmp);
    }
    for (joining, reads, bytes) in &mut joined {
        reads.sort_by(f64::total_cmp);
        bytes.sort_by(f64::total_cmp);
        let budget = match joining.budget {
            0 => String::new(),
            budget => format!(", wider gaps within {} KiB a round", budget / 1024),
        };
        println!(
            "  parts at most {} KiB apart read as one{budget}{}: mean {:.2} / p50 {} / p99 {} / max {} ranged reads, \
             fetching p50 {:.1} KiB, p99 {:.1} KiB, max {:.1} KiB",
            joining.gap / 1024,
            if *joining == phrase::JOINING { " (the Worker's choice)" } else { "" },
            reads.iter().sum::<f64>() / reads.len() as f64,
            percentile(reads, 0.5),
            percentile(reads, 0.99),
            reads.last().unwrap(),
            percentile(bytes, 0.5),
            percentile(bytes, 0.99),
            bytes.last().unwrap()
        );
    }
    println!(
        "phrase search, {} episodes, {} passages (index built in {:.1} s, {:.0} MiB in {} files; a reader loads \
         {} + {} bytes once): {} queries of 2-4 words (1 in 5 with a speaker, top 10 with the total), \
         p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; read per query p50 {:.1} KiB, p99 {:.1} KiB, max {:.1} KiB \
         in p50 {} / max {} parts and p50 {} / max {} rounds; mean total {:.1}",
        index.manifest.n_episodes,
        index.manifest.n_passages,
        build_s,
        total_bytes as f64 / 1048576.0,
        files.len(),
        manifest_bytes,
        tables.len(),
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().unwrap(),
        percentile(&loaded, 0.5),
        percentile(&loaded, 0.99),
        loaded.last().unwrap(),
        percentile(&n_parts, 0.5),
        n_parts.last().unwrap(),
        percentile(&n_rounds, 0.5),
        n_rounds.last().unwrap(),
        hits as f64 / times.len() as f64
    );
    (index, files)
}

/// Phrases made only of the corpus's [`COMMON_WORDS`] most frequent words, as people paste them ("at the
/// end of the day", "one of the things"): runs of such words cut from random passages, 2–8 words, each
/// asked once, 1 in 5 with its speaker; the first page of 10 hits with the exact total, as a cold
/// reader reads it. Writes them for the peers (`common-queries.jsonl`) and as request paths
/// (`tests/.work/phrase-common-queries.txt`).
fn bench_common_phrases(corpus: &[Episode], index: &Index, files: &HashMap<String, Vec<u8>>) {
    // A generator of its own: the same phrases whichever parts of the bench run.
    let rng = &mut Rng(0x5eed_c033_0a57_0002);
    let whole = WholeFiles(files);
    let normalised = |text: &str| -> Vec<String> {
        domain::quotes::quote::normalise::tokens(text).into_iter().map(|t| t.norm).collect()
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for episode in corpus {
        for segment in &episode.canonical.segments {
            for word in normalised(&segment.text) {
                *counts.entry(word).or_default() += 1;
            }
        }
    }
    let mut by_count: Vec<(usize, String)> = counts.into_iter().map(|(word, n)| (n, word)).collect();
    by_count.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let common: std::collections::HashSet<String> =
        by_count.into_iter().take(COMMON_WORDS).map(|(_, word)| word).collect();

    // The examples first, each on a line of its own.
    for q in STOCK_PHRASES {
        let query = phrase::parse_query([("q", q), ("limit", "10")]).unwrap();
        let mut have = HashMap::new();
        let (answer, by_file, rounds) =
            cold(index, &whole, &mut have, |index, parts| phrase::search(index, &query, parts));
        let started = Instant::now();
        phrase::search(index, &query, &whole).unwrap();
        println!(
            "  {q:?}: total {}, {:.3} ms, {:.1} KiB in {} ranged reads ({by_file:?}) and {rounds} rounds",
            answer.total,
            started.elapsed().as_secs_f64() * 1000.0,
            have.values().map(Vec::len).sum::<usize>() as f64 / 1024.0,
            by_file.iter().sum::<usize>(),
        );
    }
    let mut asked = std::collections::HashSet::new();
    let (mut times, mut loaded, mut reads, mut n_rounds) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut slowest: Vec<(f64, String, u64)> = Vec::new();
    let (mut paths, mut peer_queries) = (String::new(), String::new());
    while asked.len() < COMMON_PHRASES {
        let episode = &corpus[rng.below(corpus.len())];
        let segment = &episode.canonical.segments[rng.below(episode.canonical.segments.len())];
        let words = normalised(&segment.text);
        // As many of each length: a run of at least `n` common words.
        let n = 2 + rng.below(7);
        let mut runs: Vec<&[String]> = Vec::new();
        let mut from = 0;
        for at in 0..=words.len() {
            if at == words.len() || !common.contains(&words[at]) {
                if at - from >= n {
                    runs.push(&words[from..at]);
                }
                from = at + 1;
            }
        }
        if runs.is_empty() {
            continue;
        }
        let run = runs[rng.below(runs.len())];
        let at = rng.below(run.len() - n + 1);
        let q = run[at..at + n].join(" ");
        let speaker = (asked.len() % 5 == 0).then(|| segment.speaker.clone());
        if !asked.insert((q.clone(), speaker.clone())) {
            continue;
        }
        let query = phrase::parse_query(
            [("q", q.as_str()), ("limit", "10")]
                .into_iter()
                .chain(speaker.as_deref().map(|s| ("speaker", s))),
        )
        .unwrap();
        paths.push_str(&format!("/api/search?q={}&limit=10", url_encode(&q)));
        if let Some(speaker) = &speaker {
            paths.push_str(&format!("&speaker={}", url_encode(speaker)));
        }
        paths.push('\n');
        let mut have = HashMap::new();
        let (answer, by_file, rounds) =
            cold(index, &whole, &mut have, |index, parts| phrase::search(index, &query, parts));
        loaded.push(have.values().map(Vec::len).sum::<usize>() as f64 / 1024.0);
        reads.push(by_file.iter().sum::<usize>() as f64);
        n_rounds.push(rounds as f64);
        let started = Instant::now();
        let timed = phrase::search(index, &query, &whole).unwrap();
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        assert_eq!(timed, answer, "a cold and a warm search answer the same");
        slowest.push((
            ms,
            format!("{q:?}{}", speaker.as_deref().map(|s| format!(" ({s})")).unwrap_or_default()),
            answer.total,
        ));
        peer_queries.push_str(
            &serde_json::json!({
                "q": q,
                "speaker": speaker.as_deref().map(domain::quotes::quote::views::fold_name),
                "total": answer.total,
            })
            .to_string(),
        );
        peer_queries.push('\n');
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    std::fs::write(root.join("tests/.work/phrase-common-queries.txt"), paths).unwrap();
    std::fs::write(root.join("tests/.work/phrase-peers/common-queries.jsonl"), peer_queries).unwrap();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, q, total) in slowest.iter().take(5) {
        println!("  slowest: {q}, {ms:.3} ms, total {total}");
    }
    for list in [&mut times, &mut loaded, &mut reads, &mut n_rounds] {
        list.sort_by(f64::total_cmp);
    }
    println!(
        "common-word phrases: {} queries of 2-8 of the {COMMON_WORDS} most frequent words (1 in 5 with a speaker, \
         top 10 with the total): {} ms; read per query {} KiB in {} ranged reads and {} rounds",
        times.len(),
        summary(&times, 3),
        summary(&loaded, 1),
        summary(&reads, 0),
        summary(&n_rounds, 0),
    );
}

/// The p50, p99 and max of `sorted`, to `decimals` places.
fn summary(sorted: &[f64], decimals: usize) -> String {
    let (p50, p99, max) = (percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last().unwrap());
    format!("p50 {p50:.decimals$} / p99 {p99:.decimals$} / max {max:.decimals$}")
}

/// The common-word phrases are made of this many of the corpus's most frequent words.
const COMMON_WORDS: usize = 200;
/// Stock phrases of common words that people paste.
const STOCK_PHRASES: [&str; 8] = [
    "at the end of the day",
    "one of the things",
    "to be honest with you",
    "i think it's one of the things that",
    "and at the end of the day it's",
    "i don't know if that's",
    "that's a good question",
    "you know what i mean",
];
/// How many common-word phrases the bench asks.
const COMMON_PHRASES: usize = 400;

/// Which index file `file` is: 0 the dictionary, 1 the bitmaps, 2 the passage blocks.
fn file_kind(index: &Index, file: &str) -> usize {
    [&index.manifest.dict, &index.manifest.bitmaps, &index.manifest.passages]
        .iter()
        .position(|name| *name == file)
        .or_else(|| index.manifest.pages.iter().any(|name| name == file).then_some(3))
        .expect("a part of an index file")
}

/// Prints the means of counts summed by index file (dictionary, bitmaps, passages, first pages) over `n`
/// queries.
fn print_by_file(what: &str, sums: [usize; 4], n: usize) {
    let mean = |sum: usize| sum as f64 / n.max(1) as f64;
    println!(
        "  {what}, means: {:.2} of the dictionary, {:.2} of bitmaps, {:.2} of passage blocks, {:.2} of first pages",
        mean(sums[0]),
        mean(sums[1]),
        mean(sums[2]),
        mean(sums[3])
    );
}

/// Runs `step` as a cold reader would, reading the parts each round names: the answer, the bytes,
/// the Worker's ranged reads (`phrase::reads`) of each file (dictionary, bitmaps, passages, first pages), and the
/// rounds.
fn cold<T>(
    index: &Index,
    whole: &WholeFiles,
    have: &mut HashMap<Part, Vec<u8>>,
    step: impl Fn(&Index, &HashMap<Part, Vec<u8>>) -> Result<T, PhraseError>,
) -> (T, [usize; 4], usize) {
    let (mut reads, mut rounds) = ([0; 4], 0);
    loop {
        match step(index, have) {
            Ok(answer) => return (answer, reads, rounds),
            Err(PhraseError::Need(need)) => {
                rounds += 1;
                for read in phrase::reads(&need, phrase::JOINING) {
                    reads[file_kind(index, &read.range.file)] += 1;
                }
                for part in need {
                    let bytes = whole.part(&part).unwrap().to_vec();
                    have.insert(part, bytes);
                }
            }
            Err(PhraseError::Corrupt(c)) => panic!("{}", c.0),
        }
    }
}

/// "Who said this?" without the episode: quotes cut from random episodes, verbatim, perturbed as in
/// [`bench_accuracy`], and two pieces of one passage joined by an ellipsis, attributed over the whole
/// corpus through the phrase index. "Wrong" = another episode, another speaker, a start more than
/// 2 s from the quote's, or any `high` on a quote across speakers or an edited one.
fn bench_corpus_accuracy(corpus: &[Episode], index: &Index, files: &HashMap<String, Vec<u8>>, rng: &mut Rng) {
    use domain::quotes::quote::corpus::{Question, Turn};
    let whole = WholeFiles(files);
    let kinds = [
        "verbatim",
        "curly quotes",
        "case",
        "no punctuation",
        "changed tail",
        "across speakers",
        "ellipsis",
        "bracket",
    ];
    let filler = ["purple", "giraffe", "seventeen", "umbrella", "quietly", "marmalade", "tractor", "violin"];
    #[derive(Default)]
    struct Tally {
        asked: usize,
        found: usize,
        right_episode: usize,
        right_speaker: usize,
        high: usize,
        high_wrong: usize,
        reads: Vec<f64>,
    }
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let (mut times, mut loaded) = (Vec::new(), Vec::new());
    let (mut n_reads, mut n_rounds) = (Vec::new(), Vec::new());
    let mut reads_by_file = [0usize; 4];
    let mut examples_wrong = Vec::new();
    let mut episodes = std::collections::BTreeSet::new();
    while episodes.len() < 400 {
        let episode = &corpus[rng.below(corpus.len())];
        if !episodes.insert(&episode.path) {
            continue;
        }
        let segments = &episode.canonical.segments;
        for kind in kinds {
            let idx = rng.below(segments.len());
            let segment = &segments[idx];
            let w = words(&segment.text);
            let (quote, expected_start, crossing) = match kind {
                "across speakers" => {
                    let Some((quote, first_word)) = across_speakers(segments, idx) else { continue };
                    (quote, expected_start(segment, first_word), true)
                }
                "bracket" => {
                    if w.len() < 12 {
                        continue;
                    }
                    // The quote's first two words replaced by a bracketed one, as editors do.
                    let n = 10 + rng.below(16).min(w.len() - 10);
                    let at = rng.below(w.len() - n + 1);
                    (format!("[It] {}", w[at + 2..at + n].join(" ")), expected_start(segment, at + 2), false)
                }
                "ellipsis" => {
                    if w.len() < 24 {
                        continue;
                    }
                    let at = rng.below(w.len() - 23);
                    let quote = format!("{} … {}", w[at..at + 6].join(" "), w[at + 14..at + 22].join(" "));
                    (quote, expected_start(segment, at), false)
                }
                _ => {
                    if w.len() < 12 {
                        continue;
                    }
                    let n = 10 + rng.below(16).min(w.len() - 10);
                    let at = rng.below(w.len() - n + 1);
                    let quote = perturb(kind, &w[at..at + n].join(" "), rng, &filler);
                    (quote, expected_start(segment, at), false)
                }
            };
            let tally = tallies.entry(kind).or_default();
            tally.asked += 1;
            let started = Instant::now();
            // Cold: nothing read before the question; its turns share what they read.
            let mut question = Question::new(&quote);
            let mut have = HashMap::new();
            let (mut reads, mut rounds) = ([0usize; 4], 0);
            let answer = loop {
                let (places, turn_reads, turn_rounds) =
                    cold(index, &whole, &mut have, |index, parts| question.places(index, parts));
                for (sum, n) in reads.iter_mut().zip(turn_reads) {
                    *sum += n;
                }
                rounds += turn_rounds;
                if let Turn::Answered(answer) = question.attribute(&places) {
                    break *answer;
                }
            };
            n_reads.push(reads.iter().sum::<usize>() as f64);
            tally.reads.push(reads.iter().sum::<usize>() as f64);
            for (sum, n) in reads_by_file.iter_mut().zip(reads) {
                *sum += n;
            }
            n_rounds.push(rounds as f64);
            let bytes: usize = have.values().map(Vec::len).sum();
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            loaded.push(bytes as f64 / 1024.0);
            let Some(found) = answer.found_at else { continue };
            tally.found += 1;
            let right_episode = answer.episode.as_ref().is_some_and(|e| e.id == episode.path);
            let right_speaker = right_episode && found.speaker == segment.speaker;
            tally.right_episode += usize::from(right_episode);
            tally.right_speaker += usize::from(right_speaker);
            if found.trust == domain::quotes::quote::Trust::High {
                tally.high += 1;
                let wrong = crossing
                    || kind == "ellipsis"
                    || kind == "bracket"
                    || !right_speaker
                    || (found.start_s - expected_start).abs() > 2.0;
                if wrong {
                    tally.high_wrong += 1;
                    if examples_wrong.len() < 5 {
                        examples_wrong.push(format!(
                            "{} [{kind}] {quote:?} → {:?} {} at {}",
                            episode.path,
                            answer.episode.map(|e| e.id),
                            found.speaker,
                            found.start_s
                        ));
                    }
                }
            }
        }
    }
    print_by_file("ranged reads per quote", reads_by_file, n_reads.len());
    for list in [&mut times, &mut loaded, &mut n_reads, &mut n_rounds] {
        list.sort_by(f64::total_cmp);
    }
    println!(
        "attribution over the whole corpus (no source_url), quotes from {} random episodes: {} quotes, \
         p50 {:.3} ms, p99 {:.3} ms (domain code, index at hand); read per quote p50 {:.1} KiB, p99 {:.1} KiB, max {:.1} KiB \
         in p50 {} / p99 {} / max {} ranged reads and p50 {} / max {} rounds",
        episodes.len(),
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        percentile(&loaded, 0.5),
        percentile(&loaded, 0.99),
        loaded.last().unwrap(),
        percentile(&n_reads, 0.5),
        percentile(&n_reads, 0.99),
        n_reads.last().unwrap(),
        percentile(&n_rounds, 0.5),
        n_rounds.last().unwrap()
    );
    println!(
        "  {:<16} {:>6} {:>8} {:>14} {:>14} {:>10} {:>10} {:>16}",
        "perturbation",
        "quotes",
        "found",
        "right episode",
        "right speaker",
        "trust=high",
        "high wrong",
        "reads p50/p99"
    );
    let (mut high, mut high_wrong) = (0, 0);
    for kind in kinds {
        let t = tallies.get_mut(kind).expect("every kind asked");
        t.reads.sort_by(f64::total_cmp);
        println!(
            "  {:<16} {:>6} {:>7.1}% {:>13.1}% {:>13.1}% {:>9.1}% {:>10} {:>16}",
            kind,
            t.asked,
            pct(t.found, t.asked),
            pct(t.right_episode, t.found),
            pct(t.right_speaker, t.found),
            pct(t.high, t.found),
            t.high_wrong,
            format!("{} / {}", percentile(&t.reads, 0.5), percentile(&t.reads, 0.99))
        );
        high += t.high;
        high_wrong += t.high_wrong;
    }
    println!("  trust=high answers: {high}, wrong: {high_wrong}");
    for example in examples_wrong {
        println!("  wrong with high trust: {example}");
    }
}

/// Every passage as the index cuts them (normalised words, folded speaker name), for the peers.
fn write_passages(corpus: &[Episode], path: &Path) {
    let mut out = String::new();
    for episode in corpus {
        for segment in &episode.canonical.segments {
            let tokens = domain::quotes::quote::normalise::tokens(&segment.text);
            for chunk in tokens.chunks(phrase::MAX_PASSAGE_TOKENS) {
                let text: Vec<&str> = chunk.iter().map(|t| t.norm.as_str()).collect();
                let speaker = domain::quotes::quote::views::fold_name(&segment.speaker);
                out.push_str(&serde_json::json!({ "text": text.join(" "), "speaker": speaker }).to_string());
                out.push('\n');
            }
        }
    }
    std::fs::write(path, out).unwrap();
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    asked: usize,
    found: usize,
    right_speaker: usize,
    exact: usize,
    high: usize,
    high_wrong: usize,
}

fn perturb(kind: &str, quote: &str, rng: &mut Rng, filler: &[&str]) -> String {
    match kind {
        "curly quotes" => format!("“{}”", quote.replace('\'', "’")),
        "case" => quote.to_uppercase(),
        "no punctuation" => quote.chars().filter(|c| !c.is_ascii_punctuation()).collect(),
        "changed tail" => {
            let w = words(quote);
            let keep = w.len() * 2 / 3;
            let mut out: Vec<&str> = w[..keep].to_vec();
            for _ in keep..w.len() {
                out.push(filler[rng.below(filler.len())]);
            }
            out.join(" ")
        }
        _ => quote.to_string(),
    }
}

fn bench_accuracy(corpus: &[Episode], rng: &mut Rng) {
    let kinds = ["verbatim", "curly quotes", "case", "no punctuation", "changed tail", "across speakers"];
    let filler = ["purple", "giraffe", "seventeen", "umbrella", "quietly", "marmalade", "tractor", "violin"];
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut examples_wrong = Vec::new();
    for _ in 0..400 {
        let episode = &corpus[rng.below(corpus.len())];
        let prepared = Prepared::new(&episode.canonical.segments);
        let segments = &episode.canonical.segments;
        for kind in kinds {
            let idx = rng.below(segments.len());
            let segment = &segments[idx];
            let w = words(&segment.text);
            let (quote, expected_speaker, expected_start, crossing) = if kind == "across speakers" {
                let Some((quote, first_word)) = across_speakers(segments, idx) else { continue };
                (quote, segment.speaker.clone(), expected_start(segment, first_word), true)
            } else {
                if w.len() < 12 {
                    continue;
                }
                let n = 10 + rng.below(16).min(w.len() - 10);
                let at = rng.below(w.len() - n + 1);
                let quote = perturb(kind, &w[at..at + n].join(" "), rng, &filler);
                (quote, segment.speaker.clone(), expected_start(segment, at), false)
            };
            let tally = tallies.entry(kind).or_default();
            tally.asked += 1;
            let answer = attribute(&episode.canonical, &prepared, &quote);
            let Some(found) = answer.found_at else { continue };
            tally.found += 1;
            let right_speaker = found.speaker == expected_speaker;
            let right_place = (found.start_s - expected_start).abs() <= 2.0;
            tally.right_speaker += usize::from(right_speaker);
            tally.exact += usize::from(found.exact);
            if found.trust == domain::quotes::quote::Trust::High {
                tally.high += 1;
                let wrong = crossing || !right_speaker || !right_place;
                if wrong {
                    tally.high_wrong += 1;
                    if examples_wrong.len() < 5 {
                        examples_wrong.push(format!(
                            "{} [{kind}] {quote:?} → {} at {}",
                            episode.path, found.speaker, found.start_s
                        ));
                    }
                }
            }
        }
    }
    println!("accuracy on {} sampled Changelog episodes (quotes of 10-25 words from real paragraphs):", 400);
    println!(
        "  {:<16} {:>6} {:>8} {:>14} {:>8} {:>10} {:>12}",
        "perturbation", "quotes", "found", "right speaker", "exact", "trust=high", "high wrong"
    );
    let (mut high, mut high_wrong) = (0, 0);
    for kind in kinds {
        let t = &tallies[kind];
        println!(
            "  {:<16} {:>6} {:>7.1}% {:>13.1}% {:>7.1}% {:>9.1}% {:>11.2}%",
            kind,
            t.asked,
            pct(t.found, t.asked),
            pct(t.right_speaker, t.found),
            pct(t.exact, t.found),
            pct(t.high, t.found),
            pct(t.high_wrong, t.high)
        );
        high += t.high;
        high_wrong += t.high_wrong;
    }
    println!(
        "  trust=high answers: {high}, wrong: {high_wrong} ({:.2}%)",
        100.0 * high_wrong as f64 / high.max(1) as f64
    );
    for example in examples_wrong {
        println!("  wrong with high trust: {example}");
    }
}

/// Removes one anchor, re-imports, and asks for the words it timed: how far is the estimate?
fn bench_start_error(corpus: &[Episode], rng: &mut Rng) {
    let mut errors = Vec::new();
    let mut tries = 0;
    while errors.len() < 300 && tries < 3000 {
        tries += 1;
        let episode = &corpus[rng.below(corpus.len())];
        let anchored: Vec<&Segment> = episode
            .canonical
            .segments
            .iter()
            .filter(|s| !s.start_estimated && words(&s.text).len() >= 10)
            .collect();
        if anchored.len() < 3 {
            continue;
        }
        let target = anchored[1 + rng.below(anchored.len() - 2)];
        let quote = words(&target.text)[..10].join(" ");
        // The anchor as written: find `\[` … `\]` just before the segment's words.
        let first_word = words(&target.text)[0];
        let Some(pos) = find_anchor_before(&episode.markdown, target.start_s, first_word) else { continue };
        let (start, end) = pos;
        let mut held_out = episode.markdown.clone();
        held_out.replace_range(start..end, "");
        let segments = parse_changelog(&held_out);
        let without = canonical(&episode.path, segments);
        let prepared = Prepared::new(&without.segments);
        let answer = attribute(&without, &prepared, &quote);
        if let Some(found) = answer.found_at {
            errors.push((found.start_s - target.start_s).abs());
        }
    }
    errors.sort_by(f64::total_cmp);
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    println!(
        "start error of estimated times against {} held-out anchors: p50 {:.1} s, p90 {:.1} s, mean {:.1} s, max {:.1} s",
        errors.len(),
        percentile(&errors, 0.5),
        percentile(&errors, 0.9),
        mean,
        errors.last().unwrap_or(&0.0)
    );
}

/// The byte range of the `\[mm:ss\]` anchor with this time that precedes `first_word`.
fn find_anchor_before(markdown: &str, seconds: f64, first_word: &str) -> Option<(usize, usize)> {
    let mut search_from = 0;
    while let Some(rel) = markdown[search_from..].find("\\[") {
        let start = search_from + rel;
        let close = markdown[start..].find("\\]")? + start + 2;
        let inner = &markdown[start + 2..close - 2];
        let value =
            inner.split(':').try_fold(0.0, |acc, part| part.parse::<f64>().ok().map(|v| acc * 60.0 + v));
        if value.is_some_and(|v| (v - seconds).abs() < 0.01)
            && markdown[close..].trim_start().starts_with(first_word.trim_start_matches(['*', '[', '\\']))
        {
            return Some((start, close));
        }
        search_from = close;
    }
    None
}

/// The ways of joining parts into reads the bench counts: gaps alone, then the Worker's gap with
/// budgets for wider ones (`phrase::reads`).
const JOININGS: [Joining; 8] = [
    Joining { gap: 0, budget: 0 },
    Joining { gap: 4 * 1024, budget: 0 },
    Joining { gap: 16 * 1024, budget: 0 },
    Joining { gap: 64 * 1024, budget: 0 },
    Joining { gap: 256 * 1024, budget: 0 },
    Joining { gap: phrase::READ_GAP, budget: 64 * 1024 },
    Joining { gap: phrase::READ_GAP, budget: 96 * 1024 },
    Joining { gap: phrase::READ_GAP, budget: 128 * 1024 },
];

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks one part.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-')).unwrap_or_default();
    let started = Instant::now();
    let corpus = load_corpus();
    let hours: f64 =
        corpus.iter().map(|e| e.canonical.segments.last().map_or(0.0, |s| s.end_s)).sum::<f64>() / 3600.0;
    println!(
        "corpus: {} Changelog transcripts (CC BY-SA 4.0, © Changelog Media LLC), about {:.0} hours, parsed in {:.1} s",
        corpus.len(),
        hours,
        started.elapsed().as_secs_f64()
    );
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    if "attribution".contains(&filter) {
        bench_attribution_latency(&corpus, &mut rng);
    }
    let phrase_index = ["search", "common", "everywhere"]
        .iter()
        .any(|part| part.contains(&filter))
        .then(|| bench_phrase_search(&corpus, &mut rng));
    if "accuracy".contains(&filter) {
        bench_accuracy(&corpus, &mut rng);
        bench_start_error(&corpus, &mut rng);
    }
    if let Some((index, files)) = &phrase_index
        && "common".contains(&filter)
    {
        bench_common_phrases(&corpus, index, files);
    }
    if let Some((index, files)) = &phrase_index
        && "everywhere".contains(&filter)
    {
        bench_corpus_accuracy(&corpus, index, files, &mut rng);
    }
}
