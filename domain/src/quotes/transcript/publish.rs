//! One episode as the site publishes it: from its show, record, names and runs (already checked, as
//! `builder check` checks content) to the record with every run, the canonical transcript, the line
//! of the episode list and what resolving names again needs. The build publishes every episode of
//! the content through [`publish`], and the Worker publishes an episode the intake brought in through
//! it too, so what the Worker serves before a build is what the build then publishes.

use std::collections::BTreeMap;

use super::identify::label_groups;
use super::names::{self, NameInputs};
use super::{
    Canonical, Episode, EpisodeRecord, EpisodeRef, EpisodeSummary, Names, Run, Show, Speaker, canonical_run,
    episode_id, normalise_source_url,
};

/// An episode with everything derived from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub record: EpisodeRecord,
    pub canonical: Canonical,
    pub summary: EpisodeSummary,
    /// What the Worker needs to resolve the names again when an editor decides one.
    pub name_inputs: NameInputs,
}

/// Publishes the episode `episode` of the show `show` (folder `show_slug`). The runs are taken in
/// pipeline order; `None` when there is no run or the source URL is not an episode address, which
/// checked content never has.
pub fn publish(
    show_slug: &str,
    show: &Show,
    episode: Episode,
    names: Names,
    mut runs: Vec<Run>,
) -> Option<Built> {
    crate::sorted::sort_by(&mut runs, |a, b| a.pipeline.cmp(&b.pipeline));
    let label_groups = label_groups(&runs);
    let reports = names::resolve_all(&names, &label_groups, &episode.roster);
    let canonical_run = canonical_run(&episode, &runs)?.clone();
    let normalised_url = normalise_source_url(&episode.source_url)?;
    let id = episode_id(&normalised_url);
    let licence = episode.licence.clone().unwrap_or_else(|| show.licence.clone());
    let attribution = episode.attribution.clone().or_else(|| show.attribution.clone());
    let name_inputs = NameInputs { names, runs: label_groups, roster: episode.roster.clone() };
    let episode_ref = EpisodeRef {
        id: id.clone(),
        title: episode.title.clone(),
        source_url: episode.source_url.clone(),
        show: show_slug.to_string(),
        licence: licence.clone(),
        attribution: attribution.clone(),
        show_title: Some(show.title.clone()),
        published: Some(episode.published.clone()),
        audio_url: episode.audio_url.clone(),
    };
    let speakers = reports
        .iter()
        .map(|(label, report)| {
            (label.clone(), Speaker { name: report.name.clone(), name_state: report.name_state })
        })
        .collect();
    let duration_s = runs.iter().flat_map(|run| run.segments.iter().map(|s| s.end_s)).fold(0.0f64, f64::max);
    let downloads: BTreeMap<String, String> = [
        ("json", format!("/episodes/{id}/transcript.json")),
        ("webvtt", format!("/episodes/{id}/transcript.vtt")),
        ("podcasting20", format!("/episodes/{id}/transcript.p20.json")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let summary = EpisodeSummary {
        id: id.clone(),
        show: show_slug.to_string(),
        title: episode.title.clone(),
        source_url: episode.source_url.clone(),
        published: episode.published.clone(),
        licence: licence.clone(),
        attribution: attribution.clone(),
        duration_s,
        pipelines: runs.iter().map(|r| r.pipeline.clone()).collect(),
        canonical_run: canonical_run.pipeline.clone(),
        url: format!("/api/episodes/{id}"),
    };
    let canonical = Canonical {
        episode: episode_ref,
        pipeline: canonical_run.pipeline.clone(),
        kind: canonical_run.kind,
        speakers,
        segments: canonical_run.segments,
    };
    let record = EpisodeRecord {
        id,
        show: show_slug.to_string(),
        title: episode.title,
        source_url: episode.source_url,
        normalised_url,
        published: episode.published,
        roster: episode.roster,
        licence,
        attribution,
        derived_from: episode.derived_from,
        audio_url: episode.audio_url,
        canonical_run: canonical.pipeline.clone(),
        duration_s,
        names: reports,
        downloads,
        runs,
    };
    Some(Built { record, canonical, summary, name_inputs })
}
