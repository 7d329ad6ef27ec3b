//! Feeds as publishers write them: the `podcast` namespace under another prefix, items without a
//! `guid`, relative links, entities and CDATA, dates and durations in several spellings.

use expect_test::expect;

use super::*;

fn kitchen_table() -> Feed {
    let bytes = include_bytes!("../../../../tests/data/feeds/kitchen-table.xml");
    parse(bytes, &Url::parse("https://feeds.example.org/kitchen-table/rss").unwrap()).unwrap()
}

#[test]
fn a_feed_gives_each_episode_its_key_audio_date_duration_transcripts_people_and_licence() {
    let feed = kitchen_table();
    expect![[r#"
        Feed {
            title: "The Kitchen Table & Friends",
            link: Some(
                "https://feeds.example.org/shows/kitchen-table/",
            ),
            licence: Some(
                "CC-BY-4.0",
            ),
            description: "Cooking, slowly — with friends.",
            copyright: Some(
                "© 2024 Kitchen Table Media",
            ),
            author: Some(
                "Kitchen Table Media",
            ),
            persons: [
                Person {
                    name: "Ana Lima",
                    role: "host",
                    href: Some(
                        "https://example.org/ana",
                    ),
                },
                Person {
                    name: "Ben Okafor",
                    role: "host",
                    href: None,
                },
            ],
            items: [],
        }"#]]
    .assert_eq(&format!("{:#?}", Feed { items: Vec::new(), ..feed.clone() }));
    let items: String = feed
        .items
        .iter()
        .map(|item| {
            format!(
                "{:?} key={:?} link={:?} audio={:?} bytes={:?} published={:?} duration={:?} licence={:?}\n  take={:?}\n  persons={:?}\n",
                item.title,
                item.key(),
                item.link,
                item.audio_url,
                item.audio_bytes,
                item.published,
                item.duration_s,
                item.licence,
                item.transcript_to_take().map(|(link, format)| (link.url.as_str(), format.code())),
                item.persons.iter().map(|p| format!("{} ({})", p.name, p.role)).collect::<Vec<_>>(),
            )
        })
        .collect();
    expect![[r#"
        "Sourdough, again — patience" key=Some("kt-2024-03") link=Some("https://example.org/episodes/sourdough#listen") audio=Some("https://cdn.example.org/audio/sourdough.mp3") bytes=Some(59622400) published=Some("2024-03-05") duration=Some(3723) licence=None
          take=Some(("https://example.org/t/sourdough.vtt", "webvtt"))
          persons=["Cy Mendes (guest)", "Ana Lima (host)"]
        "Rye, without a guid" key=Some("https://feeds.example.org/kitchen-table/audio/rye.mp3") link=Some("https://feeds.example.org/kitchen-table/episodes/rye/") audio=Some("https://feeds.example.org/kitchen-table/audio/rye.mp3") bytes=None published=Some("2024-02-05") duration=Some(3600) licence=Some("CC0-1.0")
          take=Some(("https://example.org/t/rye.json", "podcasting20"))
          persons=[]
        "A trailer with nothing but a page" key=Some("https://example.org/episodes/trailer") link=Some("https://example.org/episodes/trailer") audio=None bytes=None published=Some("2023-12-24") duration=Some(3599) licence=None
          take=None
          persons=[]
    "#]].assert_eq(&items);
}

#[test]
fn an_address_names_an_item_by_its_page_its_audio_or_its_guid() {
    let feed = kitchen_table();
    let named = |address: &str| {
        feed.items.iter().find(|item| item.is_named_by(address)).map(|item| item.title.as_str())
    };
    assert_eq!(named("https://example.org/episodes/sourdough"), Some("Sourdough, again — patience"));
    assert_eq!(named("HTTPS://EXAMPLE.ORG/episodes/sourdough/"), Some("Sourdough, again — patience"));
    assert_eq!(named("https://feeds.example.org/kitchen-table/audio/rye.mp3"), Some("Rye, without a guid"));
    assert_eq!(named("kt-2024-03"), Some("Sourdough, again — patience"));
    assert_eq!(named("https://example.org/episodes/other"), None);
    // As episode addresses compare: another scheme, `www.`, a tracking parameter.
    assert_eq!(
        named("http://www.example.org/episodes/sourdough?utm_source=share"),
        Some("Sourdough, again — patience")
    );
}

#[test]
fn what_is_not_a_feed_says_so() {
    let url = Url::parse("https://example.org/feed").unwrap();
    let err = |bytes: &str| parse(bytes.as_bytes(), &url).unwrap_err().to_string();
    assert_eq!(
        err("<html><body>Not a feed</body></html>"),
        "this is not an RSS feed: its first element is not <rss>"
    );
    assert_eq!(err("<rss><channel><title>Cut"), "the feed ends before its <channel> is complete");
    assert!(
        err("<rss><channel><item><title>A</item></channel></rss>")
            .starts_with("the feed is not well-formed XML")
    );
    // An HTML entity XML does not know is read as a browser would, and so is one escaped twice.
    let feed = parse(b"<rss><channel><title>A &nbsp;B &amp;#8217;s</title></channel></rss>", &url).unwrap();
    assert_eq!(feed.title, "A B \u{2019}s");
}

#[test]
fn dates_and_durations_in_the_spellings_feeds_use() {
    assert_eq!(rfc822_date("Tue, 05 Mar 2024 10:00:00 +0000").as_deref(), Some("2024-03-05"));
    assert_eq!(rfc822_date("5 March 2024 10:00 GMT").as_deref(), Some("2024-03-05"));
    assert_eq!(rfc822_date("Sat, 1 Jan 99 00:00:00 EST").as_deref(), Some("1999-01-01"));
    assert_eq!(rfc822_date("2024-03-05T10:00:00Z").as_deref(), Some("2024-03-05"));
    assert_eq!(rfc822_date("Tue 05 Mar 2024 10:00:00 GMT").as_deref(), Some("2024-03-05"));
    assert_eq!(rfc822_date("2024-13-45"), None);
    assert_eq!(rfc822_date("yesterday"), None);
    assert_eq!(duration_s("99999999:00"), None);
    assert_eq!(duration_s("4294967295:59:59"), None);
    assert_eq!(duration_s("3600"), Some(3600));
    assert_eq!(duration_s("59:59"), Some(3599));
    assert_eq!(duration_s("1:02:03.250"), Some(3723));
    assert_eq!(duration_s("0"), None);
    assert_eq!(duration_s("an hour"), None);
}
