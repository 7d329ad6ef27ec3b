//! Search behaviour on a handful of recipes: matching, ranking, filters, paging and loading.

use std::collections::HashMap;

use serde_json::json;

use super::*;
use crate::index::{Need, SearchError};
use crate::recipes::recipe::{Course, Lang, Recipe, Source, validate};
use crate::text::Stemmers;

fn recipe(title_en: Option<&str>, extra: serde_json::Value) -> Recipe {
    let mut texts = serde_json::Map::new();
    if let Some(title) = title_en {
        texts.insert("en".into(), text(title, "A dish.", &["salt"], "Cook it."));
    }
    if let Some(more) = extra.get("texts").and_then(|t| t.as_object()) {
        texts.extend(more.clone());
    }
    let mut doc = json!({
        "emoji": "🍲", "course": "main", "difficulty": 1, "prep_min": 10, "cook_min": 20, "servings": 2,
        "gf": 0, "vegan": 0, "vegetarian": 0, "dairy_free": 0, "nut_free": 0, "texts": texts,
    });
    for (key, value) in extra.as_object().unwrap() {
        if key != "texts" {
            doc[key] = value.clone();
        }
    }
    validate(&doc, Source::Api).unwrap_or_else(|p| panic!("{p:?}")).0
}

fn text(title: &str, summary: &str, ingredients: &[&str], step: &str) -> serde_json::Value {
    let ingredients: Vec<_> = ingredients.iter().map(|i| json!({"q": 1, "i": i})).collect();
    json!({"title": title, "summary": summary, "ingredients": ingredients, "steps": [{"t": step}], "tips": ""})
}

struct Fixture {
    manifest: Manifest,
    files: HashMap<String, Vec<u8>>,
    stemmers: Stemmers,
}

fn recipes() -> Vec<(&'static str, Recipe)> {
    vec![
        ("bean-stew", recipe(Some("Bean stew"), json!({"vegan": 1, "vegetarian": 1, "dairy_free": 1}))),
        ("chicken-soup", recipe(Some("Chicken soup"), json!({"course": "soup", "cook_min": 90}))),
        (
            "tomato-salad",
            recipe(
                None,
                json!({"course": "salad", "gf": 1, "texts": {
                    "en": text("Tomato salad", "Ripe tomatoes.", &["tomatoes", "olive oil"], "Slice."),
                    "pt": text("Salada de tomate", "Tomates maduros.", &["tomates", "azeite"], "Corte."),
                }}),
            ),
        ),
        (
            "shakshuka",
            recipe(
                None,
                json!({"gf": 1, "vegetarian": 1, "texts": {
                    "he": text("שַׁקְשׁוּקָה", "ביצים ברוטב עגבניות", &["עגבניות", "ביצים", "שמן זית"], "מטגנים בשמן."),
                }}),
            ),
        ),
        ("roast-chicken", recipe(Some("Roast chicken with lemon"), json!({"prep_min": 15, "cook_min": 75}))),
        (
            "lemon-tart",
            recipe(
                None,
                json!({"course": "dessert", "texts": {
                    "en": text("Lemon tart", "Sharp and sweet.", &["lemons", "butter", "chicken eggs"], "Bake."),
                }}),
            ),
        ),
    ]
}

fn fixture() -> Fixture {
    let recipes = recipes();
    let stemmers = Stemmers::default();
    let mut builder = IndexBuilder::default();
    for (slug, recipe) in &recipes {
        builder.add(Card::from_recipe(slug, recipe), &DocTerms::of(slug, recipe, &stemmers));
    }
    let built = builder.finish();
    let files = built.files.into_iter().map(|f| (f.name, f.bytes)).collect();
    Fixture { manifest: built.manifest, files, stemmers }
}

impl Fixture {
    /// Runs a query, loading files on demand as the edge does, and returns the slugs and rounds taken.
    fn run(&self, q: &str, filters: Filters, offset: usize, limit: usize) -> (Vec<String>, u64, usize) {
        let query = Query { q: q.into(), filters, lang: None, offset, limit };
        let mut loaded: HashMap<String, Vec<u8>> = HashMap::new();
        for round in 1..10 {
            match search(&self.manifest, &query, &self.stemmers, &loaded) {
                Ok(outcome) => {
                    let slugs = outcome.cards.iter().map(|c| c.slug.clone()).collect();
                    return (slugs, outcome.total, round);
                }
                Err(SearchError::Need(Need(names))) => {
                    for name in names {
                        loaded.insert(name.clone(), self.files[&name].clone());
                    }
                }
                Err(SearchError::Corrupt(c)) => panic!("{c:?}"),
            }
        }
        panic!("search did not settle");
    }

    fn slugs(&self, q: &str) -> Vec<String> {
        self.run(q, Filters::default(), 0, 20).0
    }
}

#[test]
fn title_matches_rank_above_ingredient_matches() {
    let f = fixture();
    assert_eq!(f.slugs("chicken"), ["chicken-soup", "roast-chicken", "lemon-tart"]);
    assert_eq!(f.slugs("lemon"), ["roast-chicken", "lemon-tart"]);
}

#[test]
fn words_are_anded_and_stemmed() {
    let f = fixture();
    assert_eq!(f.slugs("roasted chickens"), ["roast-chicken"]);
    assert_eq!(f.slugs("tomatoes"), ["tomato-salad"]);
    assert_eq!(f.slugs("Salada de Tomate"), ["tomato-salad"]);
}

#[test]
fn one_typo_is_tolerated() {
    let f = fixture();
    assert_eq!(f.slugs("chiken soup"), ["chicken-soup"]);
    assert_eq!(f.slugs("tomatos"), ["tomato-salad"]);
    assert!(f.slugs("xyzzy").is_empty());
}

#[test]
fn hebrew_niqqud_and_prefixes() {
    let f = fixture();
    assert_eq!(f.slugs("שקשוקה"), ["shakshuka"]);
    assert_eq!(f.slugs("ושקשוקה"), ["shakshuka"]);
    assert_eq!(f.slugs("זית"), ["shakshuka"]);
    assert_eq!(f.slugs("בעגבניות"), ["shakshuka"]);
}

/// `q=malabi` found nothing, though `malabi` is the slug of the recipe titled only in Hebrew.
#[test]
fn a_hebrew_only_recipe_is_found_by_its_latin_slug() {
    let f = fixture();
    assert_eq!(f.slugs("shakshuka"), ["shakshuka"]);
    assert_eq!(f.slugs("Shakshuka eggs"), Vec::<String>::new(), "words still AND");
    assert_eq!(f.slugs("shakshuka ביצים"), ["shakshuka"]);
}

#[test]
fn filters_and_together() {
    let f = fixture();
    let gf = Filters { flags: vec!["gf"], ..Filters::default() };
    assert_eq!(f.run("", gf.clone(), 0, 20).0, ["tomato-salad", "shakshuka"]);
    let gf_veg = Filters { flags: vec!["gf", "vegetarian"], ..Filters::default() };
    assert_eq!(f.run("", gf_veg, 0, 20).0, ["shakshuka"]);
    let quick = Filters { max_min: Some(30), ..Filters::default() };
    assert_eq!(f.run("", quick, 0, 20).1, 4);
    let none = Filters { max_min: Some(5), ..Filters::default() };
    assert_eq!(f.run("", none, 0, 20).1, 0);
    let soup = Filters { course: Some(Course::Soup), ..Filters::default() };
    assert_eq!(f.run("chicken", soup, 0, 20).0, ["chicken-soup"]);
    let drinks = Filters { course: Some(Course::Drink), ..Filters::default() };
    assert_eq!(f.run("", drinks, 0, 20).1, 0);
}

#[test]
fn pages_cover_every_match_once() {
    let f = fixture();
    let everything = f.run("", Filters::default(), 0, 100).0;
    assert_eq!(everything.len(), 6);
    let mut paged = Vec::new();
    for offset in (0..6).step_by(4) {
        paged.extend(f.run("", Filters::default(), offset, 4).0);
    }
    assert_eq!(paged, everything);
}

#[test]
fn a_query_loads_in_at_most_four_rounds() {
    let f = fixture();
    let (_, _, rounds) = f.run("chicken", Filters { flags: vec!["gf"], ..Filters::default() }, 0, 20);
    assert!(rounds <= 4, "{rounds}");
}

#[test]
fn cards_choose_the_asked_language() {
    let f = fixture();
    let query =
        Query { q: "tomato".into(), filters: Filters::default(), lang: Some(Lang::Pt), offset: 0, limit: 5 };
    let loaded: HashMap<String, Vec<u8>> = f.files.clone();
    let outcome = search(&f.manifest, &query, &f.stemmers, &loaded).unwrap();
    let view = outcome.cards[0].view(query.lang);
    assert_eq!((view.lang, view.title.as_str()), (Lang::Pt, "Salada de tomate"));
    assert_eq!(outcome.cards[0].view(Some(Lang::He)).lang, Lang::En);
}

#[test]
fn bad_parameters_are_named() {
    let problems = crate::api::from_query::<crate::api::RecipeSearch>([
        ("gf", "0"),
        ("lang", "fr"),
        ("limit", "500"),
        ("colour", "red"),
        ("cursor", "zz"),
    ])
    .unwrap_err();
    let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["gf", "lang", "limit", "colour", "cursor"]);
    let query = crate::api::from_query::<crate::api::RecipeSearch>([
        ("q", "soup"),
        ("vegan", "1"),
        ("max_min", "30"),
        ("lang", "he"),
    ])
    .unwrap();
    assert_eq!(
        (query.filters.flags, query.filters.max_min, query.lang),
        (vec!["vegan"], Some(30), Some(Lang::He))
    );
}

/// The overlay search as the Worker runs it, with a list of entries (all stored at version 2)
/// standing in for the D1 tables: each step's read answered from them.
fn search_overlay(f: &Fixture, entries: &[overlay::Entry], replaced: &[u32], query: &Query) -> Outcome {
    let mut built_query = query.clone();
    built_query.offset = 0;
    built_query.limit = query.offset + query.limit;
    built_query.filters.exclude.extend(replaced);
    let built = search(&f.manifest, &built_query, &f.stemmers, &f.files).unwrap();
    let (mut machine, mut step) = overlay::OverlaySearch::start(query, built, entries.len(), &f.stemmers);
    loop {
        let read = match step {
            overlay::Step::Done(outcome) => return outcome,
            overlay::Step::Need(overlay::Need::Terms { exact, ranges }) => overlay::Read::Terms(
                entries
                    .iter()
                    .flat_map(|entry| entry.terms.iter().map(|(term, _)| term.clone()))
                    .filter(|term| {
                        exact.contains(term) || ranges.iter().any(|(lo, hi)| term >= lo && term < hi)
                    })
                    .collect(),
            ),
            overlay::Step::Need(overlay::Need::Postings(wanted)) => overlay::Read::Postings(
                entries
                    .iter()
                    .flat_map(|entry| {
                        entry.terms.iter().filter(|(term, _)| wanted.contains(term)).map(|(term, field)| {
                            overlay::Posting {
                                term: term.clone(),
                                slug: entry.card.slug.clone(),
                                version: 2,
                                field: *field,
                                facets: entry.facets(),
                                total_min: entry.total_min(),
                            }
                        })
                    })
                    .collect(),
            ),
            overlay::Step::Need(overlay::Need::Listing(listing)) => {
                let mut matching: Vec<&overlay::Entry> = entries
                    .iter()
                    .filter(|entry| listing.keys.iter().all(|key| entry.facets().contains(key.as_str())))
                    .filter(|entry| listing.max_min.is_none_or(|max| entry.total_min() <= max))
                    .collect();
                matching.sort_by(|a, b| a.card.slug.cmp(&b.card.slug));
                let rows = matching
                    .iter()
                    .skip(listing.offset)
                    .take(listing.limit)
                    .map(|e| overlay::Listed { slug: e.card.slug.clone(), version: 2 })
                    .collect();
                overlay::Read::Listing { rows, total: matching.len() as u64 }
            }
            // The build published every recipe at version 1.
            overlay::Step::Need(overlay::Need::BuiltVersions(slugs)) => {
                overlay::Read::BuiltVersions(vec![Some(1); slugs.len()])
            }
            overlay::Step::Need(overlay::Need::Cards(slugs)) => overlay::Read::Cards(
                entries
                    .iter()
                    .filter(|entry| slugs.contains(&entry.card.slug))
                    .map(|entry| (entry.card.slug.clone(), entry.card.clone()))
                    .collect(),
            ),
        };
        step = machine.give(read, &f.stemmers).unwrap();
    }
}

#[test]
fn an_overlay_search_given_a_read_out_of_step_says_so() {
    let f = fixture();
    let query = Query { q: "soup".into(), filters: Filters::default(), lang: None, offset: 0, limit: 5 };
    let built = search(&f.manifest, &query, &f.stemmers, &f.files).unwrap();
    let (mut machine, step) = overlay::OverlaySearch::start(&query, built, 1, &f.stemmers);
    assert!(matches!(step, overlay::Step::Need(overlay::Need::Terms { .. })), "{step:?}");
    let err = machine.give(overlay::Read::Cards(HashMap::new()), &f.stemmers).unwrap_err();
    assert!(matches!(err, overlay::OverlayError::OutOfStep(_)), "{err:?}");
    // It still waits for the terms.
    assert!(matches!(
        machine.give(overlay::Read::Terms(Vec::new()), &f.stemmers),
        Ok(overlay::Step::Done(_))
    ));
}

#[test]
fn a_listing_leaves_out_an_overlay_row_the_build_has_published() {
    let f = fixture();
    let query = Query { q: String::new(), filters: Filters::default(), lang: None, offset: 0, limit: 50 };
    let built = search(&f.manifest, &query, &f.stemmers, &f.files).unwrap();
    let (mut machine, step) = overlay::OverlaySearch::start(&query, built.clone(), 2, &f.stemmers);
    assert!(matches!(step, overlay::Step::Need(overlay::Need::Listing(_))), "{step:?}");
    let rows = vec![
        overlay::Listed { slug: "chicken-pie".into(), version: 2 },
        overlay::Listed { slug: "chicken-soup".into(), version: 2 },
    ];
    let step = machine.give(overlay::Read::Listing { rows, total: 2 }, &f.stemmers).unwrap();
    assert_eq!(
        step,
        overlay::Step::Need(overlay::Need::BuiltVersions(vec!["chicken-pie".into(), "chicken-soup".into()]))
    );
    // chicken-soup's version 2 is built: only chicken-pie's card is asked for.
    let step = machine.give(overlay::Read::BuiltVersions(vec![None, Some(2)]), &f.stemmers).unwrap();
    assert_eq!(step, overlay::Step::Need(overlay::Need::Cards(vec!["chicken-pie".into()])));
}

#[test]
fn an_overlay_row_the_build_has_published_is_not_searched() {
    let f = fixture();
    let pie = recipe(Some("Chicken pie"), json!({}));
    let entry = overlay::Entry::of("chicken-pie", &pie, &f.stemmers);
    let query = Query { q: "pie".into(), filters: Filters::default(), lang: None, offset: 0, limit: 5 };
    let built = search(&f.manifest, &query, &f.stemmers, &f.files).unwrap();
    let (mut machine, _) = overlay::OverlaySearch::start(&query, built.clone(), 1, &f.stemmers);
    let terms = entry.terms.iter().map(|(term, _)| term.clone()).collect();
    let overlay::Step::Need(overlay::Need::Postings(wanted)) =
        machine.give(overlay::Read::Terms(terms), &f.stemmers).unwrap()
    else {
        panic!("postings")
    };
    let postings = entry
        .terms
        .iter()
        .filter(|(term, _)| wanted.contains(term))
        .map(|(term, field)| overlay::Posting {
            term: term.clone(),
            slug: "chicken-pie".into(),
            version: 3,
            field: *field,
            facets: entry.facets(),
            total_min: entry.total_min(),
        })
        .collect();
    let step = machine.give(overlay::Read::Postings(postings), &f.stemmers).unwrap();
    assert_eq!(step, overlay::Step::Need(overlay::Need::BuiltVersions(vec!["chicken-pie".into()])));
    // Version 3 is built: the overlay row is stale, and the page is the built search's alone.
    let step = machine.give(overlay::Read::BuiltVersions(vec![Some(3)]), &f.stemmers).unwrap();
    assert_eq!(step, overlay::Step::Done(built));
}

#[test]
fn overlay_recipes_are_found_and_replace_their_built_version() {
    let f = fixture();
    // chicken-soup (doc 1) was changed through the API into a fish soup; a new recipe was created.
    let fish = recipe(Some("Fish soup"), json!({"course": "soup"}));
    let pie = recipe(Some("Chicken pie"), json!({}));
    let entries = [
        overlay::Entry::of("chicken-soup", &fish, &f.stemmers),
        overlay::Entry::of("chicken-pie", &pie, &f.stemmers),
    ];
    let run = |q: &str, offset: usize, limit: usize| {
        let query = Query { q: q.into(), filters: Filters::default(), lang: None, offset, limit };
        let outcome = search_overlay(&f, &entries, &[1], &query);
        let slugs: Vec<String> = outcome.cards.iter().map(|c| c.slug.clone()).collect();
        (slugs, outcome.total, outcome.next_offset)
    };
    let (slugs, total, _) = run("chicken", 0, 20);
    // Both title matches score alike; a tie goes to the built recipe.
    assert_eq!(slugs, ["roast-chicken", "chicken-pie", "lemon-tart"]);
    assert_eq!(total, 3);
    assert_eq!(run("fish", 0, 20).0, ["chicken-soup"]);
    // A typo finds the overlay recipe as it finds a built one.
    let (mut typo, _, _) = run("chiken", 0, 20);
    typo.sort();
    assert_eq!(typo, ["chicken-pie", "lemon-tart", "roast-chicken"]);
    // Paging walks the merged list.
    let (first, _, next) = run("chicken", 0, 2);
    let (rest, _, end) = run("chicken", next.unwrap(), 2);
    assert_eq!((first.len(), rest.as_slice(), end), (2, &["lemon-tart".to_string()][..], None));
    // A listing shows the build first, then the overlay in slug order, the changed recipe once.
    let (all, total, _) = run("", 0, 20);
    assert_eq!(total, 7);
    assert_eq!(all[5..], ["chicken-pie", "chicken-soup"]);
    let (tail, _, end) = run("", 6, 20);
    assert_eq!((tail.as_slice(), end), (&["chicken-soup".to_string()][..], None));
}

#[test]
fn the_overlay_search_finds_what_a_built_index_of_the_same_recipes_finds() {
    let f = fixture();
    // The fixture's recipes written again through the API under new slugs: the overlay search must
    // find each query's recipes exactly as the built index of the same recipes does.
    let entries: Vec<overlay::Entry> = recipes()
        .iter()
        .map(|(slug, recipe)| overlay::Entry::of(&format!("new-{slug}"), recipe, &f.stemmers))
        .collect();
    for q in
        ["chicken", "chiken", "lemon chicken", "tomatoes", "tomate", "עגבניות", "salt", "soup", "zzz", ""]
    {
        for filters in [
            Filters::default(),
            Filters { flags: vec!["gf"], ..Filters::default() },
            Filters { course: Some(Course::Soup), max_min: Some(100), ..Filters::default() },
        ] {
            let query = Query { q: q.into(), filters, lang: None, offset: 0, limit: 50 };
            let built = search(&f.manifest, &query, &f.stemmers, &f.files).unwrap();
            let merged = search_overlay(&f, &entries, &[], &query);
            let mut want: Vec<String> = built.cards.iter().map(|c| c.slug.clone()).collect();
            want.extend(built.cards.iter().map(|c| format!("new-{}", c.slug)));
            let mut got: Vec<String> = merged.cards.iter().map(|c| c.slug.clone()).collect();
            want.sort();
            got.sort();
            assert_eq!((got, merged.total), (want, built.total * 2), "{q:?} {:?}", query.filters);
        }
    }
}

/// Builds the index of `docs` in one go.
fn built(docs: &[(String, Recipe)], stemmers: &Stemmers) -> BuiltIndex {
    let mut builder = IndexBuilder::default();
    for (slug, recipe) in docs {
        builder.add(Card::from_recipe(slug, recipe), &DocTerms::of(slug, recipe, stemmers));
    }
    builder.finish()
}

#[test]
fn a_patched_index_is_the_index_a_full_build_writes() {
    let stemmers = Stemmers::default();
    // Enough copies that common words get postings files of their own.
    let mut before: Vec<(String, Recipe)> = Vec::new();
    for round in 0..12 {
        for (slug, recipe) in recipes() {
            before.push((format!("{slug}-{round}"), recipe));
        }
    }
    let mut after = before.clone();
    after[5].1 =
        recipe(Some("Lentil curry"), json!({"course": "side", "vegan": 1, "vegetarian": 1, "dairy_free": 1}));
    after[40].1 = recipe(Some("Lemon tart"), json!({"course": "dessert", "cook_min": 5}));
    for (n, title) in ["Quince jam", "Bean stew again"].into_iter().enumerate() {
        after.push((format!("new-{n}"), recipe(Some(title), json!({"gf": 1}))));
    }
    let old = built(&before, &stemmers);
    let full = built(&after, &stemmers);

    let terms = |docs: &[(String, Recipe)]| -> Vec<DocTerms> {
        docs.iter().map(|(slug, recipe)| DocTerms::of(slug, recipe, &stemmers)).collect()
    };
    let (terms_before, terms_after) = (terms(&before), terms(&after));
    let cards: Vec<Card> = after.iter().map(|(slug, recipe)| Card::from_recipe(slug, recipe)).collect();
    let changed: Vec<Changed> = [5usize, 40, before.len(), before.len() + 1]
        .into_iter()
        .map(|doc| Changed {
            doc: doc as u32,
            before: terms_before.get(doc),
            after: &terms_after[doc],
            card: &cards[doc],
        })
        .collect();
    let facets: Vec<DocFacets> = cards.iter().map(Card::facets).collect();
    let mut files: HashMap<String, Vec<u8>> = old.files.into_iter().map(|f| (f.name, f.bytes)).collect();
    assert!(files.keys().any(|name| name.starts_with("post-")), "the fixture has postings files");
    let patched = patch(&old.manifest, &files, &changed, &facets).expect("every file is at hand");
    for name in &patched.remove {
        assert!(files.remove(name).is_some(), "{name} was not there to remove");
    }
    for file in patched.write {
        files.insert(file.name, file.bytes);
    }
    assert_eq!(patched.manifest, full.manifest);
    assert_eq!(patched.facet_counts, full.facet_counts);
    let full_files: HashMap<String, Vec<u8>> = full.files.into_iter().map(|f| (f.name, f.bytes)).collect();
    let mut names: Vec<&String> = files.keys().collect();
    names.sort();
    let mut full_names: Vec<&String> = full_files.keys().collect();
    full_names.sort();
    assert_eq!(names, full_names);
    for (name, bytes) in &full_files {
        assert!(files[name] == *bytes, "{name} differs");
    }
}
