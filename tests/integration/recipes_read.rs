//! The public read side of the recipe service: search, single recipes, pages, open data.

use std::sync::Arc;

use anyhow::{Result, ensure};
use serde_json::Value;
use tests::Worker;

async fn get(w: &Worker, path: &str) -> Result<(reqwest::StatusCode, reqwest::header::HeaderMap, String)> {
    let response = reqwest::get(w.url(path)).await?;
    let status = response.status();
    let headers = response.headers().clone();
    Ok((status, headers, response.text().await?))
}

async fn search(w: &Worker, query: &str) -> Result<Value> {
    let (status, headers, body) = get(w, &format!("/api/recipes?{query}")).await?;
    ensure!(status == 200, "{query}: {status} {body}");
    ensure!(headers["access-control-allow-origin"] == "*", "CORS header missing");
    ensure!(headers["cache-control"].to_str()?.starts_with("public"), "cache header missing");
    Ok(serde_json::from_str(&body)?)
}

fn slugs(answer: &Value) -> Vec<String> {
    answer["items"].as_array().unwrap().iter().map(|c| c["slug"].as_str().unwrap().to_string()).collect()
}

/// Each `q` finds its recipe first.
async fn each_finds_first(w: &Worker, asked: &[(&str, &str)]) -> Result<()> {
    for (q, slug) in asked {
        let found = slugs(&search(w, &format!("q={q}")).await?);
        ensure!(found.first().map(String::as_str) == Some(*slug), "{q}: {found:?}");
    }
    Ok(())
}

pub async fn search_ranks_title_matches_first(w: Arc<Worker>) -> Result<()> {
    let answer = search(&w, "q=hummus").await?;
    let found = slugs(&answer);
    ensure!(found.first().map(String::as_str) == Some("hummus"), "{found:?}");
    ensure!(answer["total"].as_u64() == Some(found.len() as u64), "{answer}");
    let card = &answer["items"][0];
    for field in [
        "emoji",
        "course",
        "difficulty",
        "prep_min",
        "cook_min",
        "gf",
        "vegan",
        "languages",
        "title",
        "summary",
    ] {
        ensure!(!card[field].is_null(), "card lacks {field}: {card}");
    }
    Ok(())
}

pub async fn search_folds_hebrew_niqqud_and_prefixes(w: Arc<Worker>) -> Result<()> {
    each_finds_first(&w, &[("שקשוקה", "shakshuka"), ("שַׁקְשׁוּקָה", "shakshuka"), ("והשקשוקה", "shakshuka")])
        .await?;
    let found = slugs(&search(&w, "q=בטחינה").await?);
    ensure!(found.contains(&"tahini-sauce".to_string()), "prefix ב: {found:?}");
    Ok(())
}

/// `q=malabi`, `q=mujadara` and `q=kadurei` found nothing, though those recipes, titled only in
/// Hebrew, are published under those slugs.
pub async fn a_hebrew_only_recipe_is_found_by_its_latin_slug(w: Arc<Worker>) -> Result<()> {
    each_finds_first(&w, &[("malabi", "malabi"), ("mujadara", "mujadara"), ("kadurei", "kadurei-tmarim")])
        .await?;
    let found = slugs(&search(&w, "q=kadurei+tmarim").await?);
    ensure!(found == ["kadurei-tmarim"], "{found:?}");
    Ok(())
}

/// The README's search example (`gf=1&vegan=1&course=soup&max_min=45`) found nothing on the sample
/// content: every `/api/recipes?…` example in it must answer at least one recipe.
pub async fn the_readmes_search_examples_find_recipes(w: Arc<Worker>) -> Result<()> {
    let readme = std::fs::read_to_string(tests::root().join("README.md"))?;
    let queries: Vec<&str> = readme
        .lines()
        .filter_map(|line| line.split_once("/api/recipes?").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split(['\'', '"', '`', ' ']).next())
        .filter(|query| !query.is_empty() && !query.contains('…'))
        .collect();
    ensure!(queries.len() >= 2, "the README's examples: {queries:?}");
    for query in queries {
        let answer = search(&w, query).await?;
        ensure!(answer["total"].as_u64() >= Some(1), "the README's `{query}` finds nothing: {answer}");
    }
    Ok(())
}

pub async fn search_folds_portuguese_accents_and_stems(w: Arc<Worker>) -> Result<()> {
    let plain = slugs(&search(&w, "q=bacalhau+a+bras").await?);
    let accented = slugs(&search(&w, "q=Bacalhau+%C3%A0+Br%C3%A1s").await?);
    ensure!(plain.first().map(String::as_str) == Some("bacalhau-a-bras"), "{plain:?}");
    ensure!(plain == accented, "{plain:?} vs {accented:?}");
    let found = slugs(&search(&w, "q=feijao").await?);
    ensure!(found.contains(&"salada-de-feijao-frade-com-atum".to_string()), "{found:?}");
    let stemmed = slugs(&search(&w, "q=lentil").await?);
    ensure!(stemmed.contains(&"red-lentil-soup".to_string()), "{stemmed:?}");
    Ok(())
}

pub async fn search_tolerates_one_typo(w: Arc<Worker>) -> Result<()> {
    each_finds_first(
        &w,
        &[("shakshukka", "shakshuka"), ("guacamloe", "guacamole"), ("lemonadee", "lemonade")],
    )
    .await
}

pub async fn filters_are_anded(w: Arc<Worker>) -> Result<()> {
    let all = search(&w, "limit=100").await?;
    let both = search(&w, "gf=1&vegan=1&limit=100").await?;
    ensure!(both["total"].as_u64() < all["total"].as_u64(), "filters must narrow");
    for card in both["items"].as_array().unwrap() {
        ensure!(card["gf"] == 1 && card["vegan"] == 1, "{card}");
    }
    let quick_soups = search(&w, "course=soup&max_min=45").await?;
    for card in quick_soups["items"].as_array().unwrap() {
        ensure!(card["course"] == "soup" && card["total_min"].as_u64().unwrap() <= 45, "{card}");
    }
    let nut_free_desserts = search(&w, "q=chocolate&course=dessert&nut_free=1").await?;
    for card in nut_free_desserts["items"].as_array().unwrap() {
        ensure!(card["course"] == "dessert" && card["nut_free"] == 1, "{card}");
    }
    Ok(())
}

pub async fn cursor_paging_visits_every_match_once(w: Arc<Worker>) -> Result<()> {
    let whole = slugs(&search(&w, "limit=100").await?);
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(c) => format!("limit=7&cursor={c}"),
            None => "limit=7".to_string(),
        };
        let page = search(&w, &query).await?;
        paged.extend(slugs(&page));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    ensure!(paged == whole, "paged {} vs whole {}", paged.len(), whole.len());
    ensure!(whole.len() >= 40, "{}", whole.len());
    Ok(())
}

pub async fn lang_chooses_the_card_language(w: Arc<Worker>) -> Result<()> {
    let he = search(&w, "q=hummus&lang=he").await?;
    ensure!(he["items"][0]["lang"] == "he", "{}", he["items"][0]);
    let pt = search(&w, "q=hummus&lang=pt").await?;
    ensure!(pt["items"][0]["lang"] == "pt", "{}", pt["items"][0]);
    // A recipe with no Hebrew text answers in its best language instead.
    let fallback = search(&w, "q=guacamole&lang=he").await?;
    ensure!(fallback["items"][0]["lang"] == "en", "{}", fallback["items"][0]);
    Ok(())
}

pub async fn bad_parameters_are_problem_json_naming_the_parameter(w: Arc<Worker>) -> Result<()> {
    for (query, field) in [
        ("gf=yes", "gf"),
        ("lang=fr", "lang"),
        ("limit=0", "limit"),
        ("course=lunch", "course"),
        ("cursor=%%%", "cursor"),
        ("max_min=-3", "max_min"),
    ] {
        let (status, headers, body) = get(&w, &format!("/api/recipes?{query}")).await?;
        ensure!(status == 400, "{query}: {status}");
        ensure!(
            headers["content-type"] == "application/problem+json",
            "{query}: {:?}",
            headers["content-type"]
        );
        let problem: Value = serde_json::from_str(&body)?;
        ensure!(
            problem["status"] == 400 && problem["title"].is_string() && problem["type"].is_string(),
            "{problem}"
        );
        ensure!(problem["errors"][0]["field"] == field, "{query}: {problem}");
        ensure!(problem["detail"].as_str().unwrap().contains(field), "{problem}");
    }
    Ok(())
}

pub async fn single_recipe_json_has_all_languages_and_server_fields(w: Arc<Worker>) -> Result<()> {
    let (status, headers, body) = get(&w, "/r/shakshuka.json").await?;
    ensure!(status == 200, "{status}");
    ensure!(headers["access-control-allow-origin"] == "*", "CORS");
    ensure!(headers["content-type"].to_str()?.contains("json"), "{:?}", headers["content-type"]);
    let doc: Value = serde_json::from_str(&body)?;
    ensure!(doc["slug"] == "shakshuka" && doc["owner"] == "commonplace" && doc["version"] == 1, "{doc}");
    ensure!(doc["licence"] == "CC0-1.0", "{}", doc["licence"]);
    for lang in ["en", "he", "pt"] {
        ensure!(doc["texts"][lang]["title"].is_string(), "missing {lang}");
    }
    Ok(())
}

pub async fn unknown_recipe_is_a_404_problem(w: Arc<Worker>) -> Result<()> {
    let (status, headers, body) = get(&w, "/r/no-such-recipe.json").await?;
    ensure!(status == 404, "{status}");
    ensure!(headers["content-type"] == "application/problem+json", "{:?}", headers["content-type"]);
    let problem: Value = serde_json::from_str(&body)?;
    ensure!(problem["detail"].as_str().unwrap().contains("no-such-recipe"), "{problem}");
    Ok(())
}

pub async fn recipe_page_is_rtl_for_hebrew_with_json_ld(w: Arc<Worker>) -> Result<()> {
    let (status, headers, html) = get(&w, "/r/shakshuka").await?;
    ensure!(status == 200, "{status}");
    ensure!(headers["content-type"].to_str()?.starts_with("text/html"), "{:?}", headers["content-type"]);
    ensure!(html.contains(r#"<section class="text" id="he" lang="he" dir="rtl">"#), "no rtl Hebrew section");
    ensure!(html.contains(r#"name="viewport""#), "not set up for phones");
    let start = html.find(r#"<script type="application/ld+json">"#).expect("JSON-LD") + 35;
    let end = start + html[start..].find("</script>").unwrap();
    let ld: Value = serde_json::from_str(&html[start..end])?;
    let langs: Vec<&str> = ld.as_array().unwrap().iter().map(|r| r["inLanguage"].as_str().unwrap()).collect();
    ensure!(langs == ["en", "he", "pt-PT"], "{langs:?}");
    ensure!(ld[0]["@type"] == "Recipe" && ld[0]["recipeIngredient"].is_array(), "{}", ld[0]);
    let (status, _, _) = get(&w, "/r/no-such-recipe").await?;
    ensure!(status == 404, "{status}");
    Ok(())
}

pub async fn open_data_files_are_served_and_checksummed(w: Arc<Worker>) -> Result<()> {
    let (_, _, sums) = get(&w, "/SHA256SUMS").await?;
    let (_, _, jsonl) = get(&w, "/recipes.jsonl").await?;
    let line = sums.lines().find(|l| l.ends_with("  recipes.jsonl")).expect("recipes.jsonl listed");
    let (_, _, package) = get(&w, "/datapackage.json").await?;
    let package: Value = serde_json::from_str(&package)?;
    let resource = &package["resources"][0];
    ensure!(resource["bytes"].as_u64() == Some(jsonl.len() as u64), "{resource}");
    ensure!(resource["hash"].as_str().unwrap().ends_with(&line[..64]), "hash differs");
    ensure!(jsonl.lines().count() >= 40, "{}", jsonl.lines().count());
    let (status, _, llms) = get(&w, "/llms.txt").await?;
    ensure!(status == 200 && llms.starts_with("# Commonplace\n\n> "), "llms.txt");
    let (status, _, schema) = get(&w, "/schemas/recipe.schema.json").await?;
    ensure!(status == 200 && schema.contains("\"texts\""), "schema");
    Ok(())
}

pub async fn unknown_routes_and_methods_are_problems(w: Arc<Worker>) -> Result<()> {
    let (status, headers, _) = get(&w, "/api/nothing-here").await?;
    ensure!(status == 404 && headers["content-type"] == "application/problem+json", "{status}");
    let response = reqwest::Client::new().delete(w.url("/api/recipes")).send().await?;
    ensure!(response.status() == 405, "{}", response.status());
    ensure!(response.headers()["allow"] == "GET, HEAD, POST", "{:?}", response.headers().get("allow"));
    Ok(())
}

pub async fn preflight_allows_any_origin(w: Arc<Worker>) -> Result<()> {
    let response = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, w.url("/api/recipes"))
        .header("Origin", "https://example.org")
        .header("Access-Control-Request-Method", "GET")
        .send()
        .await?;
    ensure!(response.status() == 204, "{}", response.status());
    ensure!(response.headers()["access-control-allow-origin"] == "*", "CORS");
    Ok(())
}

/// More than 2,048 recipes make a dump in parts (each well under a static asset's 25 MiB); the
/// Worker still answers `/recipes.jsonl` with the whole dump, the parts one after the other.
pub async fn a_dump_in_parts_still_reads_as_one_file() -> Result<()> {
    let (work, _, dist) = tests::corpus::built_git_repo("dump-in-parts", 2100, 11)?;
    let w = Worker::start_with(tests::Config { out: Some(dist.clone()), ..tests::Config::default() }).await?;

    let (status, headers, whole) = get(&w, "/recipes.jsonl").await?;
    ensure!(status == 200, "{status}");
    ensure!(headers["content-type"].to_str()?.starts_with("application/jsonl"), "{headers:?}");
    let parts = ["recipes-0001.jsonl", "recipes-0002.jsonl"];
    let on_disk: Vec<String> =
        parts.iter().map(|p| std::fs::read_to_string(dist.join(p))).collect::<Result<_, _>>()?;
    ensure!(whole == on_disk.concat(), "the whole dump is not the parts in order");
    ensure!(whole.lines().count() == 2100, "{} lines", whole.lines().count());
    for line in whole.lines().take(3) {
        let recipe: Value = serde_json::from_str(line)?;
        ensure!(recipe["slug"].is_string(), "{line}");
    }
    let (status, _, second) = get(&w, "/recipes-0002.jsonl").await?;
    ensure!(status == 200 && second == on_disk[1], "part 2");
    let (_, _, package) = get(&w, "/datapackage.json").await?;
    let package: Value = serde_json::from_str(&package)?;
    ensure!(package["resources"][0]["path"] == serde_json::json!(parts), "{package}");
    ensure!(package["resources"][0]["bytes"].as_u64() == Some(whole.len() as u64), "{package}");
    let (_, _, llms) = get(&w, "/llms.txt").await?;
    ensure!(llms.contains("[recipes-0002.jsonl](/recipes-0002.jsonl)"), "llms.txt lists the parts");
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
