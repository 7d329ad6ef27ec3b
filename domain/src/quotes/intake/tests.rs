//! The intake step machine answered by hand, as a page host, a feed host and a transcript host would.

use super::*;

const FEED: &[u8] = include_bytes!("../../../../tests/data/feeds/newsroom.xml");
const VTT: &str = "WEBVTT\n\n00:00:01.000 --> 00:00:06.000\n<v Rosa Quint>Good morning, this is the Morning Ledger.\n\n\
                   00:00:06.500 --> 00:00:12.000\n<v Ines Varga>The harbour vote was never about the harbour.\n";
const SRT: &str = "1\n00:00:01,000 --> 00:00:05,000\nThe trains stood still for a second day.\n";
const FEED_URL: &str = "https://ledger.example.org/feed.xml";

fn answer(url: &str, content_type: &str, body: &[u8]) -> Answer {
    Answer {
        url: url.into(),
        status: 200,
        content_type: content_type.into(),
        body: body.to_vec(),
        size: None,
    }
}

fn fetch(step: &Step) -> &Fetch {
    match step {
        Step::Fetch(fetch) => fetch,
        other => panic!("expected a fetch, got {other:?}"),
    }
}

fn failed(step: Step) -> String {
    match step {
        Step::Failed(reason) => reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn start(address: &str, followed: &[&str]) -> (Intake, Step) {
    let followed: Vec<String> = followed.iter().map(|f| f.to_string()).collect();
    Intake::start(address, &followed, "2026-11-02", &Allowance::default())
}

#[test]
fn an_episode_page_leads_to_its_feed_its_item_and_the_publishers_transcript() {
    let page = "https://ledger.example.org/episodes/budget-day";
    let (mut intake, step) = start(page, &[]);
    assert_eq!(fetch(&step), &Fetch { url: page.into(), kind: Fetched::Page });
    let html = br#"<!doctype html><html><head><title>Budget day</title>
        <link rel="stylesheet" href="/s.css"><LINK REL="Alternate" TYPE="application/rss+xml" HREF="/feed.xml">
        </head><body><a href="/feed.xml">RSS</a></body></html>"#;
    let step = intake.give(answer(page, "text/html; charset=utf-8", html));
    assert_eq!(fetch(&step), &Fetch { url: FEED_URL.into(), kind: Fetched::Feed });
    let step = intake.give(answer(FEED_URL, "application/rss+xml", FEED));
    assert_eq!(
        fetch(&step),
        &Fetch { url: "https://ledger.example.org/t/42.vtt".into(), kind: Fetched::Transcript }
    );
    let Step::Arrived(arrived) =
        intake.give(answer("https://ledger.example.org/t/42.vtt", "text/vtt", VTT.as_bytes()))
    else {
        panic!("arrived")
    };
    let Arrival { feed_url, feed, show: (show, show_record), episode, run } = *arrived;
    assert_eq!(
        (feed_url.as_str(), feed.title.as_str(), feed.licence.as_deref()),
        (FEED_URL, "The Morning Ledger", Some("CC-BY-4.0"))
    );
    assert_eq!((show.as_str(), show_record.licence.as_str()), ("the-morning-ledger", "CC-BY-4.0"));
    assert_eq!(episode.title, "Budget day & the harbour vote");
    assert_eq!(episode.source_url, page);
    assert_eq!(episode.published, "2026-11-02");
    let roster: Vec<(&str, Role)> = episode.roster.iter().map(|p| (p.name.as_str(), p.role)).collect();
    assert_eq!(roster, [("Rosa Quint", Role::Host), ("Ines Varga", Role::Guest)]);
    assert_eq!((run.pipeline.as_str(), run.kind, run.segments.len()), ("publisher-webvtt", RunKind::Asr, 2));
}

#[test]
fn an_audio_address_is_found_in_a_followed_feed_and_otherwise_needs_a_transcription_service() {
    let audio = "https://cdn.ledger.example.org/41.mp3";
    let (mut intake, step) = start(audio, &[FEED_URL]);
    assert_eq!(fetch(&step).kind, Fetched::Feed);
    let step = intake.give(answer(FEED_URL, "application/rss+xml", FEED));
    assert_eq!(fetch(&step).url, "https://ledger.example.org/t/41.srt");
    let Step::Arrived(arrived) =
        intake.give(answer("https://ledger.example.org/t/41.srt", "application/x-subrip", SRT.as_bytes()))
    else {
        panic!("arrived")
    };
    assert_eq!(arrived.run.pipeline, "publisher-srt");
    // Nobody is named in an SRT file: the show's hosts may be anyone of its voices.
    assert_eq!(arrived.episode.roster.len(), 2);

    let unknown = "https://cdn.ledger.example.org/99.mp3";
    let (mut intake, _) = start(unknown, &[FEED_URL]);
    let step = intake.give(answer(FEED_URL, "application/rss+xml", FEED));
    assert_eq!(fetch(&step), &Fetch { url: unknown.into(), kind: Fetched::Page });
    let reason = failed(intake.give(answer(unknown, "audio/mpeg", b"ID3")));
    assert!(
        reason.contains("audio file that no followed feed lists") && reason.contains("TRANSCRIBE_PROVIDER"),
        "{reason}"
    );
}

#[test]
fn each_dead_end_says_what_a_person_can_do() {
    let page = "https://ledger.example.org/episodes/trailer";
    let (mut intake, _) = start(page, &[]);
    let reason =
        failed(intake.give(answer(page, "text/html", b"<html><head><title>x</title></head></html>")));
    assert_eq!(
        reason,
        "the page at https://ledger.example.org/episodes/trailer names no RSS feed (<link rel=\"alternate\" type=\"application/rss+xml\">), so its episode cannot be found"
    );

    let (mut intake, _) = start(page, &[FEED_URL]);
    let reason = failed(intake.give(answer(FEED_URL, "application/rss+xml", FEED)));
    assert!(reason.starts_with("\"Trailer\" has no transcript in its feed"), "{reason}");

    let (mut intake, _) = start(FEED_URL, &[]);
    let reason = failed(intake.give(answer(FEED_URL, "application/rss+xml", FEED)));
    assert!(reason.contains("is a feed: give the address of one of its episodes"), "{reason}");

    let (mut intake, _) = start(page, &[]);
    let gone = Answer {
        url: page.into(),
        status: 404,
        content_type: "text/html".into(),
        body: Vec::new(),
        size: None,
    };
    assert_eq!(failed(intake.give(gone)), "https://ledger.example.org/episodes/trailer answered HTTP 404");

    let (mut intake, _) = start(page, &[FEED_URL]);
    // A followed feed that is not one any more: the address itself is read next.
    let step = intake.give(answer(FEED_URL, "application/rss+xml", b"<html>moved</html>"));
    assert_eq!(fetch(&step), &Fetch { url: page.into(), kind: Fetched::Page });
}

#[test]
fn no_address_inside_a_network_is_ever_named_for_fetching() {
    let (_, step) = start("http://169.254.169.254/latest/meta-data/", &[]);
    assert_eq!(
        failed(step),
        "http://169.254.169.254/latest/meta-data/: 169.254.169.254: link-local (cloud metadata) address, never fetched for a user"
    );
    let page = "https://ledger.example.org/episodes/x";
    let (mut intake, _) = start(page, &[]);
    let html = br#"<link rel="alternate" type="application/rss+xml" href="http://10.0.0.8/feed.xml">"#;
    let reason = failed(intake.give(answer(page, "text/html", html)));
    assert_eq!(reason, "http://10.0.0.8/feed.xml: 10.0.0.8: private address, never fetched for a user");
    let inside = br#"<rss><channel><title>T</title><copyright>CC0-1.0</copyright><item><title>X</title><link>https://ledger.example.org/episodes/x</link>
        <pubDate>Mon, 02 Nov 2026 06:00:00 +0000</pubDate>
        <podcast:transcript xmlns:podcast="https://podcastindex.org/namespace/1.0" url="http://[::1]/t.vtt" type="text/vtt"/>
        </item></channel></rss>"#;
    let (mut intake, _) = start(page, &[FEED_URL]);
    let reason = failed(intake.give(answer(FEED_URL, "application/rss+xml", inside)));
    assert_eq!(
        reason,
        "the transcript of \"X\": http://[::1]/t.vtt: [::1]: loopback address, never fetched for a user"
    );
}

#[test]
fn a_page_names_its_feeds_in_its_order_each_once() {
    let html = br#"<head><link rel="alternate" type="application/rss+xml" href="feed.xml">
        <link rel="alternate nofollow" type="application/rss+xml" href="https://other.example/f">
        <link rel="alternate" type="application/atom+xml" href="/atom">
        <link rel="alternate" type="application/rss+xml" href="./feed.xml"></head>"#;
    assert_eq!(
        feed_links(html, "https://ledger.example.org/episodes/x"),
        ["https://ledger.example.org/episodes/feed.xml", "https://other.example/f"]
    );
}

#[test]
fn an_item_is_addressed_by_its_own_page_else_its_audio_and_a_licence_the_site_cannot_publish_stops_it() {
    // Every item gives the show's home page as its link: each is known by its audio.
    let feed = br#"<rss><channel><title>T</title><link>https://ledger.example.org/</link><copyright>CC0-1.0</copyright>
        <item><title>One</title><link>https://ledger.example.org/</link><pubDate>Mon, 02 Nov 2026 06:00:00 +0000</pubDate>
        <enclosure url="https://cdn.ledger.example.org/1.mp3" length="1" type="audio/mpeg"/>
        <podcast:transcript xmlns:podcast="https://podcastindex.org/namespace/1.0" url="/t/1.srt" type="application/x-subrip"/></item>
        <item><title>Two</title><link>https://ledger.example.org/</link><pubDate>Tue 03 Nov 2026 06:00:00 GMT</pubDate>
        <enclosure url="https://cdn.ledger.example.org/2.mp3" length="1" type="audio/mpeg"/>
        <podcast:license xmlns:podcast="https://podcastindex.org/namespace/1.0">All rights reserved</podcast:license>
        <podcast:transcript xmlns:podcast="https://podcastindex.org/namespace/1.0" url="/t/2.srt" type="application/x-subrip"/></item>
        </channel></rss>"#;
    let (mut intake, _) = start("https://cdn.ledger.example.org/1.mp3", &[FEED_URL]);
    intake.give(answer(FEED_URL, "application/rss+xml", feed));
    let Step::Arrived(arrived) =
        intake.give(answer("https://ledger.example.org/t/1.srt", "application/x-subrip", SRT.as_bytes()))
    else {
        panic!("arrived")
    };
    assert_eq!(arrived.episode.source_url, "https://cdn.ledger.example.org/1.mp3");

    // The item's own licence stops it as soon as the feed is read: its transcript is not fetched.
    let (mut intake, _) = start("https://cdn.ledger.example.org/2.mp3", &[FEED_URL]);
    let reason = failed(intake.give(answer(FEED_URL, "application/rss+xml", feed)));
    assert_eq!(
        reason,
        "\"Two\" is licensed `All rights reserved`, which this site cannot publish (it publishes CC0-1.0, \
         CC-BY-4.0, CC-BY-SA-4.0); nothing can be done here unless the publisher licenses the episode under \
         one of them"
    );
}

/// An episode whose feed's licence the site cannot publish went to `transcribing`, was bought, and
/// failed only then: the licence is checked when the feed is read, before anything is submitted.
#[test]
fn a_licence_the_site_cannot_publish_stops_the_job_before_its_audio_is_bought() {
    let unlicensed = String::from_utf8_lossy(FEED)
        .replace("<podcast:license>CC-BY-4.0</podcast:license>", "")
        .replace("<copyright>", "<copyright>All rights reserved. ");
    assert!(!unlicensed.contains("CC-BY-4.0"), "the fixture names its licence once");
    let (intake, _) = start("https://ledger.example.org/episodes/trailer", &[FEED_URL]);
    let mut intake = intake.with_service(Some(transcribe::Service::AssemblyAi));
    let reason = failed(intake.give(answer(FEED_URL, "application/rss+xml", unlicensed.as_bytes())));
    assert!(reason.starts_with("the show's feed names no licence this site publishes under"), "{reason}");
    assert!(reason.contains("nothing can be done here") && !reason.contains("--licence"), "{reason}");
}

/// `<podcast:license>cc-by-4.0</podcast:license>` failed with "the feed names no licence".
#[test]
fn spdx_ids_match_without_regard_to_case_and_are_stored_as_spdx_spells_them() {
    for (written, canonical) in
        [("cc-by-4.0", "CC-BY-4.0"), ("cc0-1.0", "CC0-1.0"), (" Cc-By-Sa-4.0 ", "CC-BY-SA-4.0")]
    {
        let lower = String::from_utf8_lossy(FEED).replace(
            "<podcast:license>CC-BY-4.0</podcast:license>",
            &format!("<podcast:license>{written}</podcast:license>"),
        );
        let feed = feed::parse(lower.as_bytes(), &Url::parse(FEED_URL).unwrap()).unwrap();
        assert_eq!(show_of(&feed, None).map(|show| show.licence), Ok(canonical.to_string()), "{written}");
        assert_eq!(show_of(&feed, Some(written)).map(|show| show.licence), Ok(canonical.to_string()));
    }
    assert_eq!(canonical_licence("cc-by-nc-4.0"), None);
}

/// `import-feed` dropped the channel's description, `<copyright>` and `itunes:author`, so a CC BY show
/// was published without its credit.
#[test]
fn a_show_made_from_its_feed_keeps_its_description_and_credit_line() {
    let feed = feed::parse(FEED, &Url::parse(FEED_URL).unwrap()).unwrap();
    let show = show_of(&feed, None).unwrap();
    assert!(!show.description.is_empty() && !show.description.contains('<'), "{:?}", show.description);
    assert_eq!(show.attribution, feed.copyright.clone().or(feed.author.clone()));
    assert!(show.attribution.is_some(), "the fixture names its credit");
    let authored = Feed { copyright: Some("CC-BY-4.0".into()), author: Some("Ledger Media".into()), ..feed };
    assert_eq!(show_of(&authored, None).unwrap().attribution.as_deref(), Some("Ledger Media"));
}

/// Episodes a journalist asked for from a followed feed landed in a new show made from the feed's
/// title, beside the show that follows it.
#[test]
fn an_item_of_a_followed_feed_joins_the_show_that_follows_it_whoever_asked() {
    let page = "https://ledger.example.org/episodes/budget-day";
    let followed = Show {
        title: "Ledger".into(),
        url: None,
        description: String::new(),
        licence: "CC-BY-4.0".into(),
        attribution: None,
        feed_url: Some("http://www.ledger.example.org/feed.xml/".into()),
    };
    let shows = Shows { following: vec![("ledger".into(), followed.clone())], ..Shows::default() };
    let (intake, _) = start(page, &[]);
    let mut intake = intake.with_shows(shows);
    let html = br#"<head><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head>"#;
    intake.give(answer(page, "text/html", html));
    intake.give(answer(FEED_URL, "application/rss+xml", FEED));
    let Step::Arrived(arrived) =
        intake.give(answer("https://ledger.example.org/t/42.vtt", "text/vtt", VTT.as_bytes()))
    else {
        panic!("arrived")
    };
    assert_eq!(arrived.show, ("ledger".to_string(), followed));
}

#[test]
fn a_followed_feed_that_cannot_be_reached_is_passed_over_and_a_guid_needs_its_feed() {
    let page = "https://ledger.example.org/episodes/budget-day";
    let (mut intake, _) = start(page, &["https://gone.example.org/feed.xml", FEED_URL]);
    let step = intake.unreachable("gone.example.org: no such host".into());
    assert_eq!(fetch(&step), &Fetch { url: FEED_URL.into(), kind: Fetched::Feed });
    let (mut intake, _) = start(page, &[]);
    assert_eq!(failed(intake.unreachable("timed out".into())), "timed out");
    let (_, step) = start("ledger-42", &[]);
    assert_eq!(
        failed(step),
        "`ledger-42` is not a web address: a guid is found only in its show's feed, so name the feed too"
    );
    let (mut intake, _) = start("ledger-42", &[FEED_URL]);
    let step = intake.give(answer(FEED_URL, "application/rss+xml", FEED));
    assert_eq!(fetch(&step).url, "https://ledger.example.org/t/42.vtt");
}

#[test]
fn diarization_labels_are_not_names_so_every_feed_person_may_be_one_of_them() {
    let run = publisher_run(
        Format::Srt,
        vec![crate::quotes::quote::fixtures::segment("SPEAKER_00", 0.0, 1.0, "Hi.")],
        RunKind::Asr,
        "2026-11-02",
    );
    let host = FeedPerson { name: "Rosa Quint".into(), role: "host".into(), href: None };
    assert_eq!(roster(&[host], &[], &run).len(), 1);
}

#[test]
fn an_asked_address_is_checked_as_every_fetch_is() {
    let allowance = Allowance::default();
    let page = asked("https://Example.org/podcast/ep1", &allowance).expect("an episode's page");
    assert_eq!(page.source_url, "https://Example.org/podcast/ep1");
    assert_eq!(page.normalised_url, normalise_source_url("https://example.org/podcast/ep1").unwrap());
    for inside in [
        "http://10.0.0.7/ep",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "ftp://example.org/ep",
    ] {
        let problems = asked(inside, &allowance).unwrap_err();
        assert_eq!(problems.len(), 1, "{inside}: {problems:?}");
        assert_eq!(problems[0].field, "source_url", "{inside}");
    }
    // `/api/attribute` takes an address without its scheme; so does `POST /api/episodes`.
    let bare = asked("example.org/podcast/ep1", &allowance).expect("an address without its scheme");
    assert_eq!(bare.normalised_url, page.normalised_url);
    assert!(asked("10.0.0.7/ep", &allowance).is_err(), "checked as every address is");
    let long = format!("https://example.org/{}", "a".repeat(MAX_ADDRESS_CHARS));
    assert!(asked(&long, &allowance).is_err());
    let loopback = Allowance::parse("127.0.0.1:8080").unwrap();
    assert!(asked("http://127.0.0.1:8080/ep", &loopback).is_ok(), "a development run's allowed pair");
    assert!(asked("http://127.0.0.1:8081/ep", &loopback).is_err(), "only that pair");
}

#[test]
fn a_followed_feeds_new_items_are_those_no_published_episode_has_each_keyed_once() {
    let feed = feed::parse(FEED, &Url::parse("https://ledger.example.org/feed.xml").unwrap()).unwrap();
    let none = std::collections::HashSet::new();
    let nothing = Known { published: &|_| false, guids: &none, audio: &none };
    let all = new_items(&feed, &nothing);
    assert_eq!(all.len(), feed.items.len(), "every item of the fixture has an address");
    let budget_day = normalise_source_url("https://ledger.example.org/episodes/budget-day").unwrap();
    let published = episode_id(&budget_day);
    let fresh = new_items(&feed, &Known { published: &|id| id == published, ..nothing });
    assert_eq!(fresh.len(), all.len() - 1);
    assert!(fresh.iter().all(|item| item.normalised_url != budget_day));
    // Known by its guid or by its audio, an item whose page moved is not new.
    let guids: std::collections::HashSet<String> = ["ledger-42".to_string()].into();
    let moved = new_items(&feed, &Known { guids: &guids, ..nothing });
    assert!(
        moved.iter().all(|item| item.guid.as_deref() != Some("ledger-42")) && moved.len() == all.len() - 1
    );
    let audio: std::collections::HashSet<String> =
        [normalise_source_url("https://cdn.ledger.example.org/41.mp3").unwrap()].into();
    assert_eq!(new_items(&feed, &Known { audio: &audio, ..nothing }).len(), all.len() - 1);
    assert_eq!(job_id(&budget_day)[3..], published[3..], "a job and its episode share the address's hash");
    assert!(job_id(&budget_day).starts_with("in_"));
}

/// With a transcription service, an episode whose feed has no transcript stops at its audio, and the
/// service's run makes the episode; an audio file no feed lists still has no show to go in.
#[test]
fn with_a_service_an_episode_without_a_transcript_is_transcribed_from_its_audio() {
    let page = "https://ledger.example.org/episodes/trailer";
    let (intake, _) = start(page, &[FEED_URL]);
    let mut intake = intake.with_service(Some(transcribe::Service::AssemblyAi));
    let Step::Transcribe(audio) = intake.give(answer(FEED_URL, "application/rss+xml", FEED)) else {
        panic!("the trailer has no transcript: its audio is to be transcribed")
    };
    assert_eq!(audio.audio_url, "https://cdn.ledger.example.org/trailer.mp3");
    assert_eq!(audio.known_names, ["Rosa Quint", "Tom Adeyemi"]);
    let answer_body = br#"{"status":"completed","audio_duration":30,"utterances":[
        {"speaker":"Rosa Quint","start":0,"end":3000,"text":"Coming soon."}],
        "speech_understanding":{"response":{"speaker_identification":{"mapping":{"A":"Rosa Quint"}}}}}"#;
    let done = transcribe::transcribed(transcribe::Service::AssemblyAi, answer_body, "2026-11-26").unwrap();
    let Step::Arrived(arrived) = intake.transcribed(done.run) else { panic!("arrived") };
    assert_eq!(arrived.episode.title, "Trailer");
    assert_eq!(arrived.episode.derived_from.as_deref(), Some("https://cdn.ledger.example.org/trailer.mp3"));
    assert_eq!(arrived.run.pipeline, "assemblyai-universal");
    assert_eq!(arrived.run.segments[0].speaker, "A");
    let (content, _) = publish_arrival(*arrived, None).unwrap();
    let heard = &content.names.labels["A"].votes[1];
    assert!(
        heard.source == VoteSource::VoiceMatch && heard.evidence.starts_with("no embeddings"),
        "{heard:?}"
    );
    let vote = &content.names.labels["A"].votes[0];
    assert_eq!(vote.name.as_deref(), Some("Rosa Quint"), "{vote:?}");

    let audio = "https://cdn.ledger.example.org/99.mp3";
    let (intake, _) = start(audio, &[]);
    let mut intake = intake.with_service(Some(transcribe::Service::Deepgram));
    let reason = failed(intake.give(answer(audio, "audio/mpeg", b"ID3")));
    assert!(reason.contains("its show and its licence are unknown"), "{reason}");
}
