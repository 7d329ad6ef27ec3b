//! The two doors of an operation read the same input: query text and JSON arguments.

use serde_json::json;

use super::*;
use crate::recipes::recipe::{Course, Lang};

#[test]
fn a_query_and_tool_arguments_read_into_the_same_input() {
    let query =
        from_query::<RecipeSearch>([("q", "soup"), ("vegan", "1"), ("course", "soup"), ("limit", "5")]);
    let arguments = from_json::<RecipeSearch>(&json!({
        "q": "soup", "vegan": true, "gf": false, "course": "soup", "limit": 5, "cursor": null
    }));
    assert_eq!(query, arguments);
    let query = query.unwrap();
    assert_eq!(
        (query.filters.flags, query.filters.course, query.limit),
        (vec!["vegan"], Some(Course::Soup), 5)
    );
}

#[test]
fn every_problem_is_named_in_the_order_of_its_parameter() {
    let problems = from_query::<RecipeSearch>([
        ("limit", "abc"),
        ("lang", "fr"),
        ("colour", "red"),
        ("max_min", "0"),
        ("gf", "yes"),
        ("lang", "en"),
    ])
    .unwrap_err();
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "limit: must be a whole number",
            "lang: is given more than once",
            "lang: must be en, he or pt",
            "colour: unknown parameter",
            "max_min: must be a whole number of minutes above 0",
            "gf: must be 1 (leave it out for no filter)",
        ]
    );
}

#[test]
fn required_parameters_are_named_with_the_others() {
    let problems =
        from_json::<QuoteAttribution>(&json!({"source_url": "ftp://x", "speaker": "A"})).unwrap_err();
    let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["speaker", "source_url", "quote"]);
    let problems = from_json::<AiWrite>(&json!({"prompt": " ", "lang": "fr"})).unwrap_err();
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["prompt: must not be empty", "lang: must be en, he or pt"]);
    let ok = from_json::<AiChange>(&json!({"slug": "hummus", "prompt": "more lemon", "lang": "he"})).unwrap();
    assert_eq!((ok.slug.as_str(), ok.request.lang), ("hummus", Lang::He));
}

#[test]
fn path_parameters_join_the_query() {
    let (id, filters) = from_query::<TranscriptQuery>([("episode_id", "ep_abc"), ("from", "5"), ("to", "1")])
        .unwrap_err()
        .into_iter()
        .map(|p| (p.field, p.reason))
        .unzip::<_, _, Vec<_>, Vec<_>>();
    assert_eq!((id, filters), (vec!["from".to_string()], vec!["must not be after `to`".to_string()]));
    let asked = from_query::<TranscriptQuery>([("episode_id", "ep_abc"), ("speaker", " Ana ")]).unwrap();
    assert_eq!((asked.episode_id.as_str(), asked.filters.speaker.as_deref()), ("ep_abc", Some("Ana")));
}

#[test]
fn cursors_this_api_gives_out_fit_their_pattern() {
    // The pattern is published in openapi.json; a cursor outside it would be refused as schema-invalid.
    for offset in [0, 7, 20, 99, 100, 12_345, 999_999_999] {
        let cursor = crate::paging::encode_cursor(offset);
        assert!(cursor.len() <= CURSOR_MAX_CHARS, "{cursor}");
        assert!(matches_cursor_pattern(&cursor), "{offset} {cursor}");
    }
    assert!(!matches_cursor_pattern("zz"));
    // A history cursor of the longest length the description admits always names a sequence number.
    let longest = crate::recipes::write::HistoryCursor::Api(999_999_999_999_999_999).encode();
    assert_eq!(longest.len(), recipes::HISTORY_API_CURSOR_MAX_CHARS);
}

/// `CURSOR_PATTERN` by hand (domain carries no regex engine): `bz`, a digit's third character, then
/// groups of four.
fn matches_cursor_pattern(cursor: &str) -> bool {
    let third = "AEIMQUYcgk";
    let fourth = "wxyz012345";
    let pair_ok = |a: char, b: char| matches!((a, b), ('M' | 'N', 'D' | 'T' | 'j' | 'z') | ('O', 'D' | 'T'));
    let tail_ok = |a: char, b: char| matches!((a, b), ('M' | 'N', 'A' | 'Q' | 'g' | 'w') | ('O', 'A' | 'Q'));
    let chars: Vec<char> = cursor.chars().collect();
    if chars.len() < 3 || chars[0] != 'b' || chars[1] != 'z' || !third.contains(chars[2]) {
        return false;
    }
    let mut rest = &chars[3..];
    if rest.is_empty() {
        return true;
    }
    if !fourth.contains(rest[0]) {
        return false;
    }
    rest = &rest[1..];
    while rest.len() >= 4 {
        if !(pair_ok(rest[0], rest[1]) && third.contains(rest[2]) && fourth.contains(rest[3])) {
            return false;
        }
        rest = &rest[4..];
    }
    match rest {
        [] => true,
        [a, b] => tail_ok(*a, *b),
        [a, b, c] => pair_ok(*a, *b) && third.contains(*c),
        _ => false,
    }
}

#[test]
fn a_cooks_bad_servings_and_units_are_named() {
    let shown = |params: &[(&str, &str)]| -> String {
        let params = [("slug", "dish")].into_iter().chain(params.iter().copied());
        match from_query::<RecipeCooklang>(params) {
            Ok(valid) => format!("{valid:?}"),
            Err(problems) => problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        }
    };
    let cases: Vec<String> = [
        &[("servings", "0")][..],
        &[("servings", "101")],
        &[("servings", "2.5")],
        &[("units", "imperial")],
        &[("lang", "fr"), ("servings", "2"), ("servings", "3")],
        &[("servings", "100"), ("units", "us"), ("lang", "he")],
    ]
    .iter()
    .map(|params| shown(params))
    .collect();
    expect_test::expect![[r#"
        servings: must be a whole number from 1 to 100
        servings: must be a whole number from 1 to 100
        servings: must be a whole number
        units: must be metric or us
        lang: must be en, he or pt; servings: is given more than once
        CooklangAsked { slug: "dish", lang: Some(He), request: Request { servings: Some(100), units: Some(Us) } }"#]]
    .assert_eq(&cases.join("\n"));
    let tool = from_json::<RecipeView>(&json!({"slug": "dish", "servings": 3, "units": "metric"})).unwrap();
    expect_test::expect![[
        r#"RecipeAsked { slug: "dish", request: Request { servings: Some(3), units: Some(Metric) } }"#
    ]]
    .assert_eq(&format!("{tool:?}"));
}

#[test]
fn a_phrase_search_pages_ten_hits_unless_asked_for_more() {
    let page = |params: &[(&str, &str)]| from_query::<TranscriptSearch>(params.iter().copied()).unwrap().page;
    assert_eq!(page(&[("q", "open source")]).limit, 10);
    assert_eq!(page(&[("q", "open source"), ("limit", "100")]).limit, 100);
    let tool = from_json::<TranscriptSearch>(&json!({"speaker": "Dora"})).unwrap();
    assert_eq!((tool.page.limit, tool.page.offset), (10, 0));
}

#[test]
fn a_history_cursor_longer_than_the_schema_allows_is_refused() {
    // `a` and 19 digits with leading zeros names sequence 1, but is longer than the published maxLength.
    let long = data_encoding::BASE64URL_NOPAD.encode(b"a0000000000000000001");
    assert!(long.len() > recipes::HISTORY_API_CURSOR_MAX_CHARS);
    let problems = from_query::<HistoryQuery>([("slug", "hummus"), ("cursor", long.as_str())]).unwrap_err();
    assert_eq!(problems[0].field, "cursor");
    let signed = data_encoding::BASE64URL_NOPAD.encode(b"a+5");
    assert!(from_query::<HistoryQuery>([("slug", "hummus"), ("cursor", signed.as_str())]).is_err());
    let short = crate::recipes::write::HistoryCursor::Api(5).encode();
    assert!(from_query::<HistoryQuery>([("slug", "hummus"), ("cursor", short.as_str())]).is_ok());
}

#[test]
fn the_github_callback_without_code_and_state_is_refused() {
    let fields = |params: &[(&'static str, &'static str)]| -> Vec<String> {
        let problems = from_query::<GithubCallback>(params.iter().copied()).unwrap_err();
        let mut fields: Vec<String> = problems.into_iter().map(|p| p.field).collect();
        fields.sort();
        fields
    };
    assert_eq!(fields(&[]), ["code", "state"]);
    assert_eq!(fields(&[("error", "access_denied")]), ["state"]);
    assert_eq!(fields(&[("state", "s")]), ["code"]);
    assert_eq!(
        from_query::<GithubCallback>([("error", "access_denied"), ("state", "s")]).unwrap(),
        SignIn::Refused("access_denied".into())
    );
    assert_eq!(
        from_query::<GithubCallback>([("code", "c"), ("state", "s")]).unwrap(),
        SignIn::Code { code: "c".into(), state: "s".into() }
    );
}

/// The schema bounds a speaker's name at 200 characters; the server answered a longer one with
/// nothing instead of saying what was wrong.
#[test]
fn a_speaker_name_longer_than_the_schema_allows_is_refused() {
    let long = "a".repeat(crate::quotes::quote::phrase::MAX_SPEAKER_CHARS + 1);
    let problems = from_query::<TranscriptSearch>([("speaker", long.as_str())]).unwrap_err();
    assert_eq!(problems, vec![Diagnostic::new("speaker", "is longer than 200 characters")]);
    assert!(from_query::<TranscriptSearch>([("speaker", &long[1..])]).is_ok());
}

#[test]
fn a_page_leaves_out_what_it_does_not_know_and_still_refuses_what_it_does() {
    let asked = crate::api::from_page_query::<crate::api::QuoteCheck>([
        ("utm_source", "newsletter"),
        ("quote", "open source"),
        ("fbclid", "x"),
        ("fbclid", "y"),
    ])
    .unwrap();
    assert_eq!(asked.quote, "open source");
    let problems =
        crate::api::from_page_query::<crate::api::QuoteCheck>([("quote", "a"), ("quote", "b"), ("utm", "c")])
            .unwrap_err();
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["quote: is given more than once"]);
}
