//! The quote service's part of `builder build`: shows, episodes, runs and names from `content/shows/`
//! become per-episode records, canonical transcripts (JSON, WebVTT, Podcasting 2.0), episode lists, the
//! phrase search index, `episodes.jsonl` and the quote section of `llms.txt`.
//!
//! Layout in `dist/`: `shows.json`, `episodes.json`, `episodes/by-url.json`, `episodes/<id>.json` (the
//! record with every run), `episodes/<id>/transcript.{json,vtt,p20.json}`, `quotes/manifest.json` and
//! its content-hashed index files, `episodes/<id>/reading.v<N>.bin` (the canonical transcript with its
//! token index and names' inputs, which the quote reads decode rather than parse JSON and make the
//! index), `episodes.jsonl`.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use domain::Diagnostic;
use domain::quotes::page::{built_compare_page, built_episode_page};
use domain::quotes::quote::phrase::{self, IndexBuilder};
use domain::quotes::quote::{Reading, reading_path, views};
use domain::quotes::transcript::names::BuiltDecisions;
use domain::quotes::transcript::{
    self, Canonical, Episode, EpisodeHead, EpisodeRecord, EpisodeSummary, Names, Run, Show, ShowSummary,
    export, names, publish, review,
};
use rayon::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::diagnostics::{self, Problem};
use crate::output::Out;
use crate::source::{ContentFile, Source};

/// One episode's files, gathered by folder.
#[derive(Default)]
struct EpisodeFiles<'a> {
    episode: Option<&'a ContentFile>,
    names: Option<&'a ContentFile>,
    runs: Vec<&'a ContentFile>,
}

/// An episode that passed validation, with everything derived from it (`domain`'s, which the
/// Worker's intake publishes with too).
pub use domain::quotes::transcript::publish::Built;

/// What the rest of the build needs from the quote content.
pub struct Outcome {
    pub n_shows: usize,
    pub n_episodes: usize,
    pub llms: crate::opendata::LlmsPart,
}

/// How many show, episode and run files a content folder holds, whatever their problems.
pub struct Checked {
    pub shows: usize,
    pub episodes: usize,
    pub runs: usize,
}

impl Checked {
    pub fn of(files: &[ContentFile]) -> Checked {
        let mut checked = Checked { shows: 0, episodes: 0, runs: 0 };
        for file in files {
            match file.path.split('/').collect::<Vec<_>>().as_slice() {
                ["shows", _, "show.json"] => checked.shows += 1,
                ["shows", _, _, "episode.json"] => checked.episodes += 1,
                ["shows", _, _, "runs", run] if run.ends_with(".json") => checked.runs += 1,
                _ => {}
            }
        }
        checked
    }
}

/// Reads `shows/` if the content has it; content without shows builds no quote output.
pub fn read(source: &Source) -> Result<Vec<ContentFile>> {
    match source {
        Source::WorkTree(dir) if !dir.join("shows").is_dir() => Ok(Vec::new()),
        _ => match source.read("shows/") {
            Ok(content) => Ok(content.files),
            Err(err) if err.to_string().contains("is not in") => Ok(Vec::new()),
            Err(err) => Err(err),
        },
    }
}

fn parse<T: DeserializeOwned>(file: &ContentFile, problems: &mut Vec<Problem>) -> Option<T> {
    match serde_json::from_slice(&file.bytes) {
        Ok(value) => Some(value),
        Err(err) => {
            problems.push(Problem::json(file, &err));
            None
        }
    }
}

fn report(file: &ContentFile, diagnostics: Vec<Diagnostic>, problems: &mut Vec<Problem>) {
    if !diagnostics.is_empty() {
        problems.extend(diagnostics::located(file, diagnostics));
    }
}

/// The shows by slug, and every episode derived, newest first.
pub type Loaded = (BTreeMap<String, Show>, Vec<Built>);

/// Validates every file under `shows/` and derives each episode; returns every problem at once.
pub fn load(files: &[ContentFile]) -> Result<Loaded, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut shows: BTreeMap<String, Show> = BTreeMap::new();
    let mut episodes: BTreeMap<(String, String), EpisodeFiles> = BTreeMap::new();
    // Shows whose show.json is there but has problems of its own: their episodes are not checked
    // against it, and the file is not also reported missing.
    let mut unreadable_shows: std::collections::BTreeSet<String> = Default::default();
    for file in files {
        let parts: Vec<&str> = file.path.split('/').collect();
        match parts.as_slice() {
            ["shows", show, "show.json"] => {
                unreadable_shows.insert(show.to_string());
                if let Some(parsed) = parse::<Show>(file, &mut problems) {
                    let mut wrong = transcript::validate_show(&parsed);
                    if !wrong.iter().any(|diagnostic| diagnostic.field == "licence") {
                        wrong.extend(unknown_licence("licence", Some(&parsed.licence)));
                    }
                    report(file, wrong, &mut problems);
                    unreadable_shows.remove(*show);
                    shows.insert(show.to_string(), parsed);
                }
            }
            ["shows", show, episode, "episode.json"] => {
                episodes.entry((show.to_string(), episode.to_string())).or_default().episode = Some(file)
            }
            ["shows", show, episode, "names.json"] => {
                episodes.entry((show.to_string(), episode.to_string())).or_default().names = Some(file)
            }
            ["shows", show, episode, "runs", run] if run.ends_with(".json") => {
                episodes.entry((show.to_string(), episode.to_string())).or_default().runs.push(file)
            }
            [.., name] if name.starts_with('.') || name.eq_ignore_ascii_case("README.md") => {}
            _ => problems.push(Problem::whole(
                &file.path,
                "(file)",
                "only show.json, <episode>/episode.json, <episode>/names.json and \
                 <episode>/runs/<pipeline>.json belong under shows/",
            )),
        }
    }
    for slug in shows.keys() {
        if !domain::recipes::slug::is_valid(slug) {
            problems.push(Problem::whole(
                format!("shows/{slug}"),
                "(folder)",
                format!("`{slug}` is not a slug"),
            ));
        }
    }

    let results: Vec<Result<Built, Vec<Problem>>> = episodes
        .par_iter()
        .filter(|((show_slug, _), _)| !unreadable_shows.contains(show_slug))
        .map(|((show_slug, folder), files)| load_episode(show_slug, folder, files, &shows))
        .collect();
    let mut built = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Ok(episode) => built.push(episode),
            Err(mut more) => problems.append(&mut more),
        }
    }
    let mut by_id: HashMap<&str, &str> = HashMap::new();
    for episode in &built {
        if let Some(other) = by_id.insert(&episode.record.id, &episode.record.title) {
            problems.push(Problem::whole(
                format!("shows/{}", episode.record.show),
                "source_url",
                format!("`{}` is also the address of `{other}`", episode.record.source_url),
            ));
        }
    }
    if !problems.is_empty() {
        problems.sort();
        return Err(problems);
    }
    // Newest first, then by id, so lists and the index are in a stable order.
    built.sort_by(|a, b| {
        b.record.published.cmp(&a.record.published).then_with(|| a.record.id.cmp(&b.record.id))
    });
    Ok((shows, built))
}

fn load_episode(
    show_slug: &str,
    folder: &str,
    files: &EpisodeFiles,
    shows: &BTreeMap<String, Show>,
) -> Result<Built, Vec<Problem>> {
    let mut problems = Vec::new();
    let base = format!("shows/{show_slug}/{folder}");
    let Some(show) = shows.get(show_slug) else {
        return Err(vec![Problem::whole(
            format!("shows/{show_slug}/show.json"),
            "(file)",
            "missing; every show folder needs one",
        )]);
    };
    let Some(episode_file) = files.episode else {
        return Err(vec![Problem::whole(
            format!("{base}/episode.json"),
            "(file)",
            "missing; every episode folder needs one",
        )]);
    };
    let episode: Option<Episode> = parse(episode_file, &mut problems);
    if let Some(episode) = &episode {
        let mut wrong = transcript::validate_episode(episode);
        wrong.extend(unknown_licence("licence", episode.licence.as_deref()));
        report(episode_file, wrong, &mut problems);
    }
    let names: Names = match files.names {
        Some(file) => parse(file, &mut problems).unwrap_or_default(),
        None => Names::default(),
    };
    if let Some(file) = files.names {
        report(file, names::validate(&names), &mut problems);
    }
    let mut runs: Vec<Run> = Vec::new();
    for file in &files.runs {
        let Some(run) = parse::<Run>(file, &mut problems) else { continue };
        let mut wrong = transcript::validate_run(&run);
        let stem = file.path.rsplit('/').next().unwrap_or_default().trim_end_matches(".json");
        if run.pipeline != stem {
            wrong.push(Diagnostic::new("pipeline", format!("must equal the file name `{stem}`")));
        }
        report(file, wrong, &mut problems);
        runs.push(run);
    }
    if runs.is_empty() {
        problems.push(Problem::whole(
            format!("{base}/runs"),
            "(folder)",
            "an episode needs at least one run",
        ));
    }
    let Some(episode) = episode else { return Err(problems) };
    runs.sort_by(|a, b| a.pipeline.cmp(&b.pipeline));
    let label_groups = transcript::identify::label_groups(&runs);
    // Names against the runs, also when other files of the episode have problems: all at once.
    if let Some(file) = files.names {
        report(file, names::labels_without_speech(&names, &label_groups), &mut problems);
    }
    let reports = names::resolve_all(&names, &label_groups, &episode.roster);
    report(
        episode_file,
        names::roster_without_speech(&reports, &label_groups, &episode.roster),
        &mut problems,
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(publish::publish(show_slug, show, episode, names, runs).expect("checked: a run and an address"))
}

/// A licence that is not an id of the SPDX License List (`Bogus-1.0`, or a name such as `CC BY 4.0`):
/// open data must name its terms so that anyone can look them up.
fn unknown_licence(field: &str, licence: Option<&str>) -> Option<Diagnostic> {
    let licence = licence?;
    if spdx::license_id(licence).is_some_and(|id| id.name == licence) {
        return None;
    }
    let hint = match spdx::imprecise_license_id(licence) {
        Some((id, _)) => format!("; did you mean {}?", id.name),
        None => ", such as CC-BY-SA-4.0, CC0-1.0 or MIT".to_string(),
    };
    Some(Diagnostic::new(
        field,
        format!("`{licence}` is not an id of the SPDX License List (spdx.org/licenses){hint}"),
    ))
}

/// One line of `episodes.jsonl`: an episode's metadata, licence and canonical transcript.
#[derive(Serialize, schemars::JsonSchema)]
pub struct EpisodeLine<'a> {
    pub id: &'a str,
    pub show: &'a str,
    pub title: &'a str,
    pub source_url: &'a str,
    pub published: &'a str,
    /// SPDX id: the terms of this episode's transcript (CC-BY-SA-4.0 transcripts are never CC0).
    pub licence: &'a str,
    pub attribution: Option<&'a str>,
    pub derived_from: Option<&'a str>,
    /// The pipeline of the canonical run.
    pub pipeline: &'a str,
    pub speakers: &'a BTreeMap<String, domain::quotes::transcript::Speaker>,
    pub segments: &'a [domain::quotes::transcript::Segment],
}

/// Writes everything the quote service publishes.
pub fn write(
    out: &Out,
    shows: &BTreeMap<String, Show>,
    episodes: &[Built],
    synced: BuiltDecisions,
) -> Result<Outcome> {
    let renderer = crate::pages::Renderer::new()?;
    episodes.par_iter().try_for_each(|built| -> Result<()> {
        let id = &built.record.id;
        out.write(&format!("episodes/{id}.json"), serde_json::to_string(&built.record)?.as_bytes())?;
        out.write(
            &format!("episodes/{id}/transcript.json"),
            serde_json::to_string(&built.canonical)?.as_bytes(),
        )?;
        out.write(&format!("episodes/{id}/transcript.vtt"), export::to_webvtt(&built.canonical).as_bytes())?;
        out.write(
            &format!("episodes/{id}/names.json"),
            serde_json::to_string(&built.name_inputs)?.as_bytes(),
        )?;
        let head = EpisodeHead::of(&built.record);
        out.write(&format!("episodes/{id}/head.json"), serde_json::to_string(&head)?.as_bytes())?;
        out.write(&built_episode_page(id), renderer.episode_page(&head, &built.canonical)?.as_bytes())?;
        if let Some(compared) = &head.compared {
            let page =
                renderer.compare_page(&head, &compared.first, &compared.second, &compared.comparison)?;
            out.write(&built_compare_page(id), page.as_bytes())?;
        }
        out.write(&views::built_view_path(id), views::whole_transcript_json(&built.canonical).as_bytes())?;
        out.write(
            &format!("episodes/{id}/transcript.p20.json"),
            export::to_podcasting20(&built.canonical).to_string().as_bytes(),
        )?;
        // What an attribution, the quote page and the other quote reads of this episode read.
        out.write(&reading_path(id), &Reading::encode(&built.canonical, &built.name_inputs))?;
        Ok(())
    })?;

    let show_summaries: Vec<ShowSummary> = shows
        .iter()
        .map(|(slug, show)| ShowSummary {
            id: slug.clone(),
            title: show.title.clone(),
            url: show.url.clone(),
            description: show.description.clone(),
            licence: show.licence.clone(),
            attribution: show.attribution.clone(),
            episode_count: episodes.iter().filter(|e| &e.record.show == slug).count(),
            feed_url: show.feed_url.clone(),
        })
        .collect();
    out.write("shows.json", serde_json::to_string(&show_summaries)?.as_bytes())?;
    let summaries: Vec<&EpisodeSummary> = episodes.iter().map(|e| &e.summary).collect();
    out.write("episodes.json", serde_json::to_string(&summaries)?.as_bytes())?;
    let by_url: BTreeMap<&str, &str> =
        episodes.iter().map(|e| (e.record.normalised_url.as_str(), e.record.id.as_str())).collect();
    out.write("episodes/by-url.json", serde_json::to_string(&by_url)?.as_bytes())?;
    let mut queue = review::Queue::default();
    for built in episodes {
        queue.add(&built.record, built.canonical.episode.audio_url.as_deref());
    }
    out.write(names::BUILT_DECISIONS, serde_json::to_string(&synced)?.as_bytes())?;
    let (head, parts) = queue.published();
    out.write("episodes/review.json", serde_json::to_string(&head)?.as_bytes())?;
    for (n, part) in parts.iter().enumerate() {
        out.write(&format!("episodes/review/{}.json", n + 1), serde_json::to_string(part)?.as_bytes())?;
    }

    let mut jsonl = String::new();
    for built in episodes {
        let line = EpisodeLine {
            id: &built.record.id,
            show: &built.record.show,
            title: &built.record.title,
            source_url: &built.record.source_url,
            published: &built.record.published,
            licence: &built.record.licence,
            attribution: built.record.attribution.as_deref(),
            derived_from: built.record.derived_from.as_deref(),
            pipeline: &built.canonical.pipeline,
            speakers: &built.canonical.speakers,
            segments: &built.canonical.segments,
        };
        jsonl.push_str(&serde_json::to_string(&line)?);
        jsonl.push('\n');
    }
    out.write("episodes.jsonl", jsonl.as_bytes())?;

    let mut index = IndexBuilder::default();
    for built in episodes {
        index
            .add_episode(&built.canonical)
            .map_err(|full| anyhow::anyhow!("the phrase index cannot hold {}", full.0))?;
    }
    let built_index = index.finish();
    built_index
        .files
        .par_iter()
        .try_for_each(|file| out.write(&format!("{}/{}", phrase::DIR, file.name), &file.bytes).map(drop))?;
    out.write(
        &format!("{}/manifest.json", phrase::DIR),
        serde_json::to_string(&built_index.manifest)?.as_bytes(),
    )?;

    for (name, schema) in schemas() {
        out.write(&format!("schemas/{name}"), serde_json::to_string_pretty(&schema)?.as_bytes())?;
    }
    Ok(Outcome {
        n_shows: shows.len(),
        n_episodes: episodes.len(),
        llms: llms_section(&show_summaries, episodes),
    })
}

/// The JSON Schemas of the quote service's content files and answers.
pub fn schemas() -> Vec<(&'static str, Value)> {
    fn schema<T: schemars::JsonSchema>(id: &str, description: &str) -> Value {
        let mut value = crate::schemas::schema_of::<T>();
        value["$id"] = json!(format!("/schemas/{id}"));
        value["description"] = json!(description);
        value
    }
    use domain::quotes::quote::{Attribution, phrase, views};
    vec![
        ("show.schema.json", schema::<Show>("show.schema.json", "content/shows/<show>/show.json")),
        (
            "episode.schema.json",
            schema::<Episode>("episode.schema.json", "content/shows/<show>/<episode>/episode.json"),
        ),
        (
            "run.schema.json",
            schema::<Run>("run.schema.json", "content/shows/<show>/<episode>/runs/<pipeline>.json"),
        ),
        (
            "names.schema.json",
            schema::<Names>("names.schema.json", "content/shows/<show>/<episode>/names.json"),
        ),
        (
            "episode-record.schema.json",
            schema::<EpisodeRecord>(
                "episode-record.schema.json",
                "GET /api/episodes/{id} and /episodes/{id}.json",
            ),
        ),
        (
            "episode-head.schema.json",
            schema::<EpisodeHead>(
                "episode-head.schema.json",
                "/episodes/{id}/head.json (what an episode's pages show besides its transcript)",
            ),
        ),
        (
            "canonical-transcript.schema.json",
            schema::<Canonical>("canonical-transcript.schema.json", "/episodes/{id}/transcript.json"),
        ),
        ("attribution.schema.json", schema::<Attribution>("attribution.schema.json", "GET /api/attribute")),
        (
            "transcript-view.schema.json",
            schema::<views::TranscriptView>(
                "transcript-view.schema.json",
                "GET /api/episodes/{id}/transcript",
            ),
        ),
        (
            "speakers-view.schema.json",
            schema::<views::SpeakersView>("speakers-view.schema.json", "GET /api/episodes/{id}/speakers"),
        ),
        ("quote-search.schema.json", schema::<phrase::Answer>("quote-search.schema.json", "GET /api/search")),
        (
            "episode-line.schema.json",
            schema::<EpisodeLine>("episode-line.schema.json", "one line of /episodes.jsonl"),
        ),
        (
            "episode-names.schema.json",
            schema::<names::NameInputs>("episode-names.schema.json", "/episodes/{id}/names.json"),
        ),
        (
            "shows.schema.json",
            schema::<Vec<ShowSummary>>("shows.schema.json", "/shows.json and GET /api/shows"),
        ),
        (
            "episodes.schema.json",
            schema::<Vec<EpisodeSummary>>("episodes.schema.json", "/episodes.json (every episode's summary)"),
        ),
        (
            "phrase-index-manifest.schema.json",
            schema::<phrase::Manifest>("phrase-index-manifest.schema.json", "/quotes/manifest.json"),
        ),
        (
            "built-decisions.schema.json",
            schema::<BuiltDecisions>(
                "built-decisions.schema.json",
                "/episodes/decisions.json (the last editors' decision the build holds)",
            ),
        ),
        (
            "review-queue.schema.json",
            schema::<review::QueueHead>(
                "review-queue.schema.json",
                "/episodes/review.json (the editors' review queue as built: its first part)",
            ),
        ),
        (
            "review-queue-part.schema.json",
            schema::<review::QueuePart>(
                "review-queue-part.schema.json",
                "/episodes/review/{n}.json (the next parts of the review queue)",
            ),
        ),
    ]
}

/// The quote service's part of llms.txt: what a reader must know first (name states, trust,
/// licences), then link lists only.
fn llms_section(shows: &[ShowSummary], episodes: &[Built]) -> crate::opendata::LlmsPart {
    let about = String::from(
        "Quote attribution: who said a quote in a podcast episode, and when. Transcripts come from several \
         pipelines (speech recognition with diarization, human-edited transcripts); speaker names come from up \
         to four identification sources and carry `name_state`: `confident` (two or more sources agree, none \
         disagrees), `tentative` (one source), `withheld` (sources disagree: name is null), `human` (set by a \
         person), `unknown` (no source). `trust` is `high` only for a verbatim match inside one person's \
         uninterrupted speech with a confident or human name; check everything else. Times marked estimated \
         were interpolated, not measured. Transcripts keep the licence of their show: Changelog transcripts are \
         CC BY-SA 4.0, © Changelog Media LLC — credit them and share alike; they are not CC0. Per episode: \
         `/api/episodes/{id}` (the full record with every pipeline run), `/api/episodes/{id}/transcript` \
         (`speaker`, `from`, `to`) and `/api/episodes/{id}/speakers` (`from`, `to`).\n",
    );
    let mut text = String::from(
        "\n## Quote attribution\n\n\
         - [Attribute a quote](/api/attribute?source_url=…&quote=…): `{found, name, name_state, speaker, start_s, \
         end_s, segment_start_s, exact, crosses_speaker, trust, episode, pipeline}`\n\
         - [Shows](/api/shows): shows with episode counts\n\
         - [Episodes](/api/episodes): published episodes (`limit`, `cursor`, `show`)\n\
         - [Phrase search](/api/search?q=open+source): `q` (a phrase), `speaker` (a name; alone it lists \
         everything that person said), `limit`, `cursor`\n\
         - [episodes.jsonl](/episodes.jsonl): every canonical transcript, one episode a line, each with its `licence`\n\
         - [Attribution schema](/schemas/attribution.schema.json): the answer of `/api/attribute`\n\
         - [Episode record schema](/schemas/episode-record.schema.json): `/api/episodes/{id}`\n\
         - [Run schema](/schemas/run.schema.json): one pipeline's transcript\n\
         - [Names schema](/schemas/names.schema.json): each source's vote per speaker label\n\n## Shows\n\n",
    );
    for show in shows {
        text.push_str(&format!(
            "- [{}](/api/episodes?show={}): {} episodes, licence {}{}\n",
            show.title,
            show.id,
            show.episode_count,
            show.licence,
            show.attribution.as_deref().map(|a| format!(", {a}")).unwrap_or_default()
        ));
    }
    if episodes.len() <= 50 {
        text.push_str("\n## Episodes\n\n");
        for built in episodes {
            text.push_str(&format!(
                "- [{}](/api/episodes/{}): {} ({})\n",
                built.record.title, built.record.id, built.record.source_url, built.record.licence
            ));
        }
    }
    crate::opendata::LlmsPart { about, sections: text }
}

/// Reads, validates and writes the quote content in one step; content problems fail the build with
/// every problem listed. Returns the quote part of `llms.txt` (empty without shows).
/// Builds the quote service into `out`: its part of llms.txt, and how many episodes it holds.
pub fn build_into(source: &Source, out: &Out) -> Result<(crate::opendata::LlmsPart, usize)> {
    let files = read(source)?;
    if files.is_empty() {
        return Ok((crate::opendata::LlmsPart { about: String::new(), sections: String::new() }, 0));
    }
    let (shows, episodes) = load(&files).map_err(|problems| {
        anyhow::anyhow!("{} problem(s) in shows/:\n{}", problems.len(), diagnostics::lines(source, &problems))
    })?;
    drop(files);
    let state = source.read_one(crate::sync::STATE_FILE)?;
    let synced = crate::sync::synced_decisions(state.as_deref())?;
    let outcome = write(out, &shows, &episodes, synced)?;
    eprintln!("built {} shows and {} episodes", outcome.n_shows, outcome.n_episodes);
    Ok((outcome.llms, outcome.n_episodes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::quotes::transcript::{episode_id, normalise_source_url};
    use expect_test::expect;

    /// Every sample episode keeps the normalised URL and id it was published under: ids name the files
    /// in `dist/episodes/` and are linked from outside, so a change to normalising must not move one.
    /// The table holds the ids as first published.
    #[test]
    fn sample_episode_ids_are_the_published_ones() {
        let shows = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/shows");
        let mut lines = Vec::new();
        for show in std::fs::read_dir(&shows).unwrap().flatten() {
            for folder in std::fs::read_dir(show.path()).into_iter().flatten().flatten() {
                let Ok(text) = std::fs::read_to_string(folder.path().join("episode.json")) else { continue };
                let episode: Episode = serde_json::from_str(&text).unwrap();
                let normalised = normalise_source_url(&episode.source_url).unwrap();
                lines.push(format!("{} {normalised}", episode_id(&normalised)));
            }
        }
        lines.sort();
        expect![[r#"
            ep_b6qxg6qmu3 https://changelog.com/gotime/52
            ep_byl2jyprkb https://commonplace.example/shows/kitchen-table/1-sourdough-slowly
            ep_cqsbc7uf5i https://commonplace.example/shows/kitchen-table/5-the-village-oven
            ep_d4wl3l2ge4 https://commonplace.example/shows/kitchen-table/2-rooftop-tomatoes
            ep_jbcgkqxmj7 https://commonplace.example/shows/kitchen-table/3-olive-oil-tasting
            ep_jil7egtx2b https://commonplace.example/shows/kitchen-table/6-bricks-and-patience
            ep_jjfm5pyaup https://changelog.com/practicalai/196
            ep_ordsen2nfy https://changelog.com/jsparty/299
            ep_paasxtazbf https://changelog.com/jsparty/40
            ep_v2tfzhff2f https://commonplace.example/shows/kitchen-table/4-sauerkraut
            ep_w73a2ecac3 https://changelog.com/gotime/297
            ep_wiw3rb3fi5 https://changelog.com/practicalai/258"#]]
        .assert_eq(&lines.join("\n"));
    }
}
