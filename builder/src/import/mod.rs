//! `builder import`: one transcript file becomes one pipeline run in the content repo.
//!
//! The parsing is `domain::quotes::transcript::import` (pure); this module reads files, picks names and
//! dates, and writes `runs/<pipeline>.json`. The Changelog importer also writes what a human-edited
//! transcript tells us beyond the run: the episode record (with the CC BY-SA 4.0 licence and credit of
//! the source) and the speaker names as human decisions. Given the corpus folder instead of one file, it
//! imports every episode into a `shows/` tree (used to build and benchmark the whole corpus).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use domain::quotes::transcript::identify::is_anonymous_label;
use domain::quotes::transcript::import::{Format, changelog_source_url, import};
use domain::quotes::transcript::names::{HumanDecision, LabelVotes};
use domain::quotes::transcript::{
    Episode, Names, Person, Run, RunKind, Show, is_valid_pipeline, normalise_source_url, validate_episode,
    validate_run,
};
use rayon::prelude::*;

pub const CHANGELOG_LICENCE: &str = "CC-BY-SA-4.0";
pub const CHANGELOG_ATTRIBUTION: &str =
    "© Changelog Media LLC; transcripts from github.com/thechangelog/transcripts, CC BY-SA 4.0";

/// What `builder import` was asked to do.
#[derive(Debug)]
pub struct Request {
    pub format: Format,
    pub input: PathBuf,
    /// The timed text an RTTM file is joined with.
    pub text: Option<PathBuf>,
    /// The episode folder (one file), or the `shows/` folder (a Changelog corpus folder).
    pub out: PathBuf,
    pub pipeline: Option<String>,
    pub created: Option<String>,
    /// Only these corpus files (such as `jsparty/js-party-299.md`) when importing a corpus folder.
    pub only: Vec<String>,
    /// Overrides the format's kind: `human-edited` for a transcript a person reviewed.
    pub kind: Option<RunKind>,
    /// What a new episode's `episode.json` says.
    pub episode: NewEpisode,
}

/// The fields of a new episode's record, from the command line.
#[derive(Debug, Default)]
pub struct NewEpisode {
    pub title: Option<String>,
    pub source_url: Option<String>,
    pub published: Option<String>,
}

impl NewEpisode {
    /// The record, or the flags it still needs.
    fn record(&self) -> Result<Episode> {
        let missing: Vec<&str> = [
            (self.title.is_none(), "--title"),
            (self.source_url.is_none(), "--source-url"),
            (self.published.is_none(), "--published"),
        ]
        .into_iter()
        .filter_map(|(missing, flag)| missing.then_some(flag))
        .collect();
        if !missing.is_empty() {
            bail!("a new episode (no episode.json in the folder yet) needs {}", missing.join(", "));
        }
        let source_url = self.source_url.clone().unwrap_or_default();
        if normalise_source_url(&source_url).is_none() {
            bail!("--source-url `{source_url}` is not an http or https address");
        }
        let episode = Episode {
            title: self.title.clone().unwrap_or_default(),
            source_url,
            published: self.published.clone().unwrap_or_default(),
            roster: Vec::new(),
            canonical_run: None,
            licence: None,
            attribution: None,
            derived_from: None,
            audio_url: None,
        };
        let problems: Vec<String> = validate_episode(&episode)
            .into_iter()
            .map(|problem| format!("--{}: {}", problem.field.replace('_', "-"), problem.reason))
            .collect();
        if !problems.is_empty() {
            bail!("{}", problems.join("; "));
        }
        Ok(episode)
    }
}

pub fn run(request: Request) -> Result<ExitCode> {
    let pipeline = request.pipeline.clone().unwrap_or_else(|| request.format.default_pipeline().to_string());
    if !is_valid_pipeline(&pipeline) {
        bail!("`{pipeline}` is not a pipeline id: use lower-case letters, digits and . + _ -");
    }
    let created = request.created.clone().unwrap_or_else(today);
    if request.input.is_dir() {
        if request.format != Format::ChangelogMd {
            bail!("only --format changelog-md imports a whole folder");
        }
        return import_corpus(&request.input, &request.out, &pipeline, &created, &request.only);
    }
    // A file of another format makes a complete episode: its record (when the folder has none yet),
    // the run, and the names the identification sources find in it.
    let changelog = request.format == Format::ChangelogMd;
    let held = request.out.join("episode.json").exists();
    let new_record = match held || changelog {
        true => None,
        false => Some(request.episode.record()?),
    };
    let given = [&request.episode.title, &request.episode.source_url, &request.episode.published];
    if held && given.iter().any(|flag| flag.is_some()) {
        eprintln!(
            "{} exists: --title, --source-url and --published are for a new episode, and are not used",
            request.out.join("episode.json").display()
        );
    }
    let text = read(&request.input)?;
    let companion = request.text.as_deref().map(read).transpose()?;
    let segments = import(request.format, &text, companion.as_deref())
        .map_err(|err| anyhow::anyhow!("{}: {err}", request.input.display()))?;
    let run = Run {
        pipeline: pipeline.clone(),
        kind: request.kind.unwrap_or(request.format.kind()),
        created,
        imported_from: Some(request.format.code().to_string()),
        segments,
        speaker_embeddings: None,
        speaker_names: None,
    };
    let problems: Vec<String> = validate_run(&run).iter().map(ToString::to_string).collect();
    if !problems.is_empty() {
        bail!("{}: the run would not be valid content: {}", request.input.display(), problems.join("; "));
    }
    write_json(&request.out.join("runs").join(format!("{pipeline}.json")), &run)?;
    if changelog {
        let corpus_path = corpus_relative(&request.input);
        write_changelog_records(&request.out, &corpus_path, &run, file_date(&request.input))?;
    }
    if let Some(record) = &new_record {
        write_json(&request.out.join("episode.json"), record)?;
    }
    eprintln!(
        "imported {} segments from {} into {}",
        run.segments.len(),
        request.input.display(),
        request.out.join("runs").join(format!("{pipeline}.json")).display()
    );
    if !changelog {
        if run.kind == RunKind::HumanEdited {
            decide_reviewed_names(&request.out, &run)?;
        }
        identify_in_place(&request.out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A reviewed transcript's speaker names are its editors' decisions: each label that is a name (not
/// `SPEAKER_00`, `Guest B` or `UNKNOWN`) gets one in `names.json`, unless a person decided it already.
pub(crate) fn decide_reviewed_names(out: &Path, run: &Run) -> Result<()> {
    let path = out.join("names.json");
    let mut names: Names = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?,
        Err(_) => Names::default(),
    };
    for segment in &run.segments {
        let label = segment.speaker.trim();
        if is_anonymous_label(label) {
            continue;
        }
        let entry = names.labels.entry(segment.speaker.clone()).or_default();
        if entry.human.is_none() {
            entry.human = Some(HumanDecision {
                name: label.to_string(),
                by: "the transcript's editors".into(),
                note: Some(format!("named in the human-edited transcript ({})", run.pipeline)),
            });
        }
    }
    write_json(&path, &names)
}

/// Runs the identification sources for the episode folder `out` when it sits in a content folder
/// (`<content>/shows/<show>/<episode>`), so its names are voted on at once.
fn identify_in_place(out: &Path) -> Result<()> {
    let (Some(episode), Some(show_dir)) = (out.file_name(), out.parent()) else { return Ok(()) };
    let (Some(show), Some(shows)) = (show_dir.file_name(), show_dir.parent()) else { return Ok(()) };
    let Some(content) = shows.parent().filter(|_| shows.file_name().is_some_and(|name| name == "shows"))
    else {
        eprintln!("{} is not in a content folder's shows/: run `builder identify` once it is", out.display());
        return Ok(());
    };
    let which = format!("{}/{}", show.to_string_lossy(), episode.to_string_lossy());
    crate::identify::run(content, crate::identify::Which::One(which)).map(|_| ())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Writes `value` as pretty JSON with a final newline, making its folder.
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `<show>/<file>.md` from a path inside the corpus.
fn corpus_relative(path: &Path) -> String {
    let parts: Vec<String> = path.iter().map(|p| p.to_string_lossy().to_string()).collect();
    parts[parts.len().saturating_sub(2)..].join("/")
}

/// Show folder → (title, the name its files start with).
fn changelog_show(folder: &str) -> (String, Option<&'static str>) {
    let known: &[(&str, &str, &str)] = &[
        ("podcast", "The Changelog", "the-changelog"),
        ("jsparty", "JS Party", "js-party"),
        ("gotime", "Go Time", "go-time"),
        ("practicalai", "Practical AI", "practical-ai"),
        ("shipit", "Ship It!", "ship-it"),
        ("founderstalk", "Founders Talk", "founders-talk"),
        ("friends", "Changelog & Friends", "changelog--friends"),
        ("news", "Changelog News", "changelog-news"),
        ("rfc", "Request For Commits", "request-for-commits"),
        ("afk", "Away From Keyboard", "away-from-keyboard"),
        ("backstage", "Backstage", "backstage"),
        ("brainscience", "Brain Science", "brain-science"),
        ("spotlight", "Spotlight", "spotlight"),
    ];
    match known.iter().find(|(f, ..)| *f == folder) {
        Some((_, title, prefix)) => (title.to_string(), Some(prefix)),
        None => (folder.to_string(), None),
    }
}

fn changelog_show_record(folder: &str) -> Show {
    let (title, _) = changelog_show(folder);
    Show {
        title,
        url: Some(format!("https://changelog.com/{folder}")),
        description: "Human-edited transcripts from the Changelog family of podcasts.".into(),
        licence: CHANGELOG_LICENCE.into(),
        attribution: Some(CHANGELOG_ATTRIBUTION.into()),
        feed_url: None,
    }
}

/// episode.json and names.json for a Changelog transcript (kept when they already exist), and the
/// show's show.json next to the episode folder when it has none.
fn write_changelog_records(
    episode_dir: &Path,
    corpus_path: &str,
    run: &Run,
    published: String,
) -> Result<()> {
    let (folder, _) = corpus_path.split_once('/').unwrap_or(("podcast", corpus_path));
    let (show_title, prefix) = changelog_show(folder);
    let source_url = changelog_source_url(corpus_path, prefix)
        .with_context(|| format!("{corpus_path}: cannot tell the episode's address"))?;
    let slug = source_url.rsplit('/').next().unwrap_or_default();
    let title = if slug.chars().all(|c| c.is_ascii_digit()) {
        format!("{show_title} #{slug}")
    } else {
        format!("{show_title}: {}", slug.replace('-', " "))
    };
    let mut speakers: Vec<String> = Vec::new();
    for segment in &run.segments {
        if !speakers.contains(&segment.speaker) {
            speakers.push(segment.speaker.clone());
        }
    }
    let episode = Episode {
        title,
        source_url,
        published,
        roster: Person::roster(&speakers),
        canonical_run: None,
        licence: Some(CHANGELOG_LICENCE.into()),
        attribution: Some(CHANGELOG_ATTRIBUTION.into()),
        derived_from: Some(format!("https://github.com/thechangelog/transcripts/blob/master/{corpus_path}")),
        audio_url: None,
    };
    let names = Names {
        labels: speakers
            .iter()
            .map(|name| {
                let decision = HumanDecision {
                    name: name.clone(),
                    by: "Changelog transcript editors".into(),
                    note: Some("named in the human-edited transcript".into()),
                };
                (name.clone(), LabelVotes { votes: vec![], human: Some(decision) })
            })
            .collect::<BTreeMap<_, _>>(),
    };
    for (path, value) in [
        (episode_dir.join("episode.json"), serde_json::to_value(&episode)?),
        (episode_dir.join("names.json"), serde_json::to_value(&names)?),
    ] {
        if !path.exists() {
            write_json(&path, &value)?;
        }
    }
    if let Some(show_dir) = episode_dir.parent() {
        let show_file = show_dir.join("show.json");
        if !show_file.exists() {
            write_json(&show_file, &changelog_show_record(folder))?;
        }
    }
    Ok(())
}

/// The modification date of a file as `YYYY-MM-DD` (the corpus has no publication dates).
fn file_date(path: &Path) -> String {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| civil_date(d.as_secs() as i64 / 86_400))
        .unwrap_or_else(today)
}

pub(crate) fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64 / 86_400)
        .unwrap_or(0);
    civil_date(days)
}

/// Days since 1970-01-01 → `YYYY-MM-DD` (Howard Hinnant's algorithm).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Every `<show>/<file>.md` of a Changelog corpus folder (or the `only` ones) into `<shows>/<show>/<stem>/`.
fn import_corpus(
    corpus: &Path,
    shows: &Path,
    pipeline: &str,
    created: &str,
    only: &[String],
) -> Result<ExitCode> {
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(corpus).with_context(|| format!("reading {}", corpus.display()))? {
        let dir = entry?.path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir)? {
            let file = file?.path();
            if file.extension().is_some_and(|e| e == "md") {
                files.push(file);
            }
        }
    }
    files.sort();
    if !only.is_empty() {
        files.retain(|file| only.contains(&corpus_relative(file)));
        if files.len() != only.len() {
            bail!("some of --only are not in {}", corpus.display());
        }
    }
    let failures: Vec<String> = files
        .par_iter()
        .filter_map(|file| {
            let result = (|| -> Result<()> {
                let corpus_path = corpus_relative(file);
                let (folder, name) = corpus_path.split_once('/').expect("two parts");
                let episode_dir = shows.join(folder).join(name.trim_end_matches(".md"));
                let segments = match import(Format::ChangelogMd, &read(file)?, None) {
                    Ok(segments) => segments,
                    Err(err) => bail!("{err}"),
                };
                let run = Run {
                    pipeline: pipeline.to_string(),
                    kind: Format::ChangelogMd.kind(),
                    created: created.to_string(),
                    imported_from: Some(Format::ChangelogMd.code().into()),
                    segments,
                    speaker_embeddings: None,
                    speaker_names: None,
                };
                write_json(&episode_dir.join("runs").join(format!("{pipeline}.json")), &run)?;
                write_changelog_records(&episode_dir, &corpus_path, &run, file_date(file))
            })();
            result.err().map(|err| format!("{}: {err:#}", file.display()))
        })
        .collect();
    for failure in &failures {
        eprintln!("skipped {failure}");
    }
    eprintln!(
        "imported {} of {} transcripts into {}",
        files.len() - failures.len(),
        files.len(),
        shows.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::quotes::transcript::{episode_id, normalise_source_url};
    use expect_test::expect;
    use sha2::{Digest, Sha256};

    /// Every Changelog episode keeps the id it was published under (ids name files in `dist/` and are
    /// linked from outside). Each corpus file's address, as an import gives it, is already normal, so
    /// normalising must give it back byte for byte; and the fingerprint of all ids is the one the
    /// ids were first published with. The corpus is not in the repository: without the
    /// archive where the benchmarks read it, the test says so and passes.
    #[test]
    fn changelog_corpus_episode_ids_are_the_published_ones() {
        let archive =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/changelog-transcripts.tar.xz");
        if !archive.exists() {
            eprintln!("skipped: no Changelog corpus at {}", archive.display());
            return;
        }
        let listing = std::process::Command::new("tar").arg("-tJf").arg(&archive).output().unwrap();
        assert!(listing.status.success(), "listing {}", archive.display());
        let mut lines = Vec::new();
        for path in String::from_utf8(listing.stdout).unwrap().lines() {
            let path = path.trim_start_matches("./");
            let Some((folder, file)) = path.split_once('/') else { continue };
            if file.contains('/') || !file.ends_with(".md") {
                continue;
            }
            let Some(source_url) = changelog_source_url(path, changelog_show(folder).1) else { continue };
            let normalised = normalise_source_url(&source_url).unwrap();
            assert_eq!(normalised, source_url, "{path}");
            lines.push(format!("{} {normalised}\n", episode_id(&normalised)));
        }
        lines.sort();
        let digest = Sha256::digest(lines.concat());
        expect!["2063 episodes, sha256 fbb75a45a38552f3a65789969fca7430578d5c65a462353739f690ff4508eb4b"]
            .assert_eq(&format!("{} episodes, sha256 {digest:x}", lines.len()));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(20_513), "2026-03-01");
    }
}
