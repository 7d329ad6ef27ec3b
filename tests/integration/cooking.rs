//! What cooks expect: scaling and units on the JSON, the page and MCP; Cooklang out; the
//! servings control and cook mode in a real browser.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use tests::Worker;
use tests::browser::Browser;
use tests::kitchen::key_for;

use crate::recipes_write::{Api, recipe};

/// A line of a recipe's ingredients: `(q, u, i)`.
fn line(doc: &Value, lang: &str, idx: usize) -> (f64, String, String) {
    let i = &doc["texts"][lang]["ingredients"][idx];
    (
        i["q"].as_f64().unwrap_or(f64::NAN),
        i["u"].as_str().unwrap_or_default().to_string(),
        i["i"].as_str().unwrap_or_default().to_string(),
    )
}

pub async fn scaled_json_of_built_and_written_recipes(w: Arc<Worker>) -> Result<()> {
    let api = Api::new(&w, &key_for(&w, "scaler").await?);
    // Challah serves 12: 500 g flour, 2 eggs, 1.5 tsp salt, 80 ml oil.
    let half = api.get("/r/challah.json?servings=6").await?;
    ensure!(half.status == 200, "{}", half.text);
    let doc = &half.body;
    ensure!(doc["servings"] == 6 && doc["scaled_from"]["servings"] == 12, "{doc}");
    ensure!(doc["scaled_from"]["href"] == "/r/challah.json", "{doc}");
    ensure!(
        line(doc, "en", 0).0 == 250.0 && line(doc, "he", 0).0 == 250.0,
        "flour: {:?}",
        line(doc, "en", 0)
    );
    ensure!(line(doc, "en", 3) == (0.75, "tsp".into(), "salt".into()), "{:?}", line(doc, "en", 3));
    ensure!(line(doc, "en", 4).0 == 1.0, "eggs stay whole: {:?}", line(doc, "en", 4));
    ensure!(half.headers["etag"] != "\"1\"", "a scaled answer has its own validator");
    let odd = api.get("/r/challah.json?servings=5").await?.body;
    ensure!(line(&odd, "en", 0).0 == 210.0, "500 g × 5/12 is written 210 g: {:?}", line(&odd, "en", 0));
    let eggs = odd["rounded"].as_array().context("rounded")?;
    ensure!(eggs.iter().any(|r| r["lang"] == "en" && r["line"] == 4 && r["exact"] == 0.83), "{odd}");

    let us = api.get("/r/challah.json?units=us").await?.body;
    ensure!(us["servings"] == 12 && us["scaled_from"].is_null() && us["units"] == "us", "{us}");
    ensure!(
        line(&us, "en", 0) == (4.0, "cups".into(), "strong white bread flour".into()),
        "{:?}",
        line(&us, "en", 0)
    );
    ensure!(line(&us, "he", 0).1 == "כוסות", "Hebrew cups: {:?}", line(&us, "he", 0));
    let converted = us["converted"].as_array().context("converted")?;
    let flour = converted.iter().find(|c| c["lang"] == "en" && c["line"] == 0).context("flour converted")?;
    ensure!(flour["from"] == json!({"q": 500, "u": "g"}) && flour["density_g_per_ml"] == 0.53, "{flour}");
    ensure!(!converted.iter().any(|c| c["lang"] == "en" && c["line"] == 4), "eggs are counted: {us}");

    // A recipe written through the API, read before any build has it.
    let mut doc = recipe("Scaled cucumber salad");
    doc["texts"]["en"]["ingredients"] = json!([
        {"q": 2, "i": "cucumbers"}, {"q": 0.5, "u": "tsp", "i": "salt"}, {"q": 1, "u": "cup", "i": "rice"}
    ]);
    let created = api.create(&doc).await?;
    ensure!(created.status == 201, "{}", created.text);
    let slug = created.body["slug"].as_str().context("slug")?.to_string();
    let scaled = api.get(&format!("/r/{slug}.json?servings=5&units=metric")).await?;
    ensure!(scaled.status == 200, "{}", scaled.text);
    let body = &scaled.body;
    ensure!(
        body["owner"] == "scaler" && body["servings"] == 5 && body["scaled_from"]["servings"] == 2,
        "{body}"
    );
    ensure!(line(body, "en", 0).0 == 5.0, "cucumbers: {:?}", line(body, "en", 0));
    ensure!(
        line(body, "en", 2) == (470.0, "g".into(), "rice".into()),
        "rice weighed: {:?}",
        line(body, "en", 2)
    );
    // Read as it is, it is the stored document, byte for byte as before.
    let plain = api.get(&format!("/r/{slug}.json")).await?;
    ensure!(plain.body == created.body, "{}", plain.text);
    Ok(())
}

pub async fn bad_servings_and_units_are_problems_naming_the_parameter(w: Arc<Worker>) -> Result<()> {
    for (query, fields) in [
        ("servings=0", vec!["servings"]),
        ("servings=101", vec!["servings"]),
        ("servings=two&units=imperial", vec!["servings", "units"]),
        ("servings=2&servings=3", vec!["servings"]),
    ] {
        for path in [
            format!("/r/hummus.json?{query}"),
            format!("/r/hummus?{query}"),
            format!("/r/hummus.cook?{query}"),
        ] {
            let response = reqwest::get(w.url(&path)).await?;
            ensure!(response.status() == 400, "{path}: {}", response.status());
            ensure!(response.headers()["content-type"] == "application/problem+json", "{path}");
            let problem: Value = response.json().await?;
            let named: Vec<&str> = problem["errors"]
                .as_array()
                .context("errors")?
                .iter()
                .filter_map(|e| e["field"].as_str())
                .collect();
            ensure!(named == fields, "{path}: {problem}");
        }
    }
    let lang = reqwest::get(w.url("/r/hummus.cook?lang=fr")).await?;
    ensure!(lang.status() == 400, "lang=fr: {}", lang.status());
    let missing = reqwest::get(w.url("/r/challah.cook?lang=pt")).await?;
    ensure!(missing.status() == 404, "challah has no pt text: {}", missing.status());
    let unknown = reqwest::get(w.url("/r/no-such-recipe.json?servings=2")).await?;
    ensure!(unknown.status() == 404, "{}", unknown.status());
    Ok(())
}

pub async fn cooklang_of_a_recipe_carries_its_metadata_and_lines(w: Arc<Worker>) -> Result<()> {
    let response = reqwest::get(w.url("/r/challah.cook?lang=he&servings=6")).await?;
    ensure!(response.status() == 200, "{}", response.status());
    ensure!(response.headers()["content-type"] == "text/plain; charset=utf-8", "{:?}", response.headers());
    let text = response.text().await?;
    tests::ensure_says(
        "the Cooklang file",
        &text,
        &[
            "title: \"חלה\"",
            "servings: 6",
            "prep time: 30 minutes",
            "course: baking",
            "diet: [\"vegetarian\", \"dairy-free\", \"nut-free\"]",
            "locale: he",
            "license: \"CC0-1.0\"",
            "/r/challah\"",
            "= מצרכים",
            "@קמח לחם{250%גרם}",
            "@ביצים, ועוד אחת להברשה{1}",
            "~{10%min}",
            "-- grown-up: oven",
        ],
    )?;
    let english = reqwest::get(w.url("/r/challah.cook")).await?.text().await?;
    ensure!(
        english.contains("title: \"Challah\"") && english.contains("@strong white bread flour{500%g}"),
        "{english}"
    );
    // The Cooklang dump is served from its pack like the other dumps.
    let zip = reqwest::get(w.url("/recipes-cooklang.zip")).await?;
    ensure!(zip.status() == 200, "{}", zip.status());
    ensure!(zip.headers()["content-type"] == "application/zip", "{:?}", zip.headers());
    let bytes = zip.bytes().await?;
    ensure!(bytes.starts_with(b"PK\x03\x04"), "not a zip");
    let named = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
    ensure!(named("he/challah.cook") && named("en/challah.cook"), "the zip lacks challah");
    Ok(())
}

pub async fn mcp_get_recipe_scales_and_converts(w: Arc<Worker>) -> Result<()> {
    let call = |arguments: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_recipe", "arguments": arguments}});
        let request = reqwest::Client::new()
            .post(w.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        async move { Ok::<Value, anyhow::Error>(request.send().await?.json::<Value>().await?) }
    };
    let answer = call(json!({"slug": "challah", "servings": 24, "units": "us"})).await?;
    let doc = &answer["result"]["structuredContent"];
    ensure!(
        doc["servings"] == 24 && doc["scaled_from"]["servings"] == 12 && doc["units"] == "us",
        "{answer}"
    );
    let http = reqwest::get(w.url("/r/challah.json?servings=24&units=us")).await?.json::<Value>().await?;
    ensure!(*doc == http, "the tool answers what the route answers");
    let bad = call(json!({"slug": "challah", "servings": 0})).await?;
    ensure!(bad["result"]["isError"] == true, "{bad}");
    let text = bad["result"]["content"][0]["text"].as_str().unwrap_or_default();
    ensure!(text.contains("servings"), "the refusal names the parameter: {text}");
    Ok(())
}

/// Whether `script` returns true within ten seconds.
async fn until(browser: &Browser, script: &str) -> Result<()> {
    for _ in 0..100 {
        if browser.execute(script).await? == json!(true) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("never true: {script}")
}

pub async fn servings_control_scales_in_place_and_keeps_the_url(w: Arc<Worker>) -> Result<()> {
    let browser = Browser::start().await?;
    browser.goto(&w.url("/r/challah")).await?;
    let first = browser.text("#ingredients-en li").await?;
    ensure!(first.starts_with("500 g"), "{first}");
    browser.execute("window.sameDocument = true;").await?;
    browser.execute("const s = document.getElementById('servings'); s.value = '6'; s.dispatchEvent(new Event('change'));").await?;
    until(&browser, "return document.querySelector('#ingredients-en li').textContent.includes('250 g');")
        .await?;
    ensure!(
        browser.execute("return window.sameDocument === true;").await? == json!(true),
        "the page reloaded"
    );
    ensure!(
        browser.current_url().await?.ends_with("/r/challah?servings=6"),
        "{}",
        browser.current_url().await?
    );
    ensure!(browser.text("#he bdi.serves").await? == "6", "the Hebrew section's servings");
    let hebrew = browser.text("#ingredients-he li").await?;
    ensure!(hebrew.contains("250 גרם"), "{hebrew}");
    browser.execute("const u = document.getElementById('units'); u.value = 'us'; u.dispatchEvent(new Event('change'));").await?;
    until(&browser, "return document.querySelector('#ingredients-en li').textContent.includes('cups');")
        .await?;
    ensure!(
        browser.current_url().await?.ends_with("/r/challah?servings=6&units=us"),
        "{}",
        browser.current_url().await?
    );
    // Without script the form still works: a reload of the URL shows the same.
    browser.goto(&w.url("/r/challah?servings=6&units=us")).await?;
    let reloaded = browser.text("#ingredients-en li").await?;
    ensure!(reloaded.contains("cups"), "{reloaded}");
    ensure!(browser.exists("#as-written").await?, "a way back to the recipe as written");
    Ok(())
}

pub async fn cook_mode_walks_steps_with_timers_in_hebrew_on_a_phone(w: Arc<Worker>) -> Result<()> {
    let browser = Browser::start().await?;
    browser.resize(390, 844).await?;
    browser.goto(&w.url("/r/challah")).await?;
    // A shortened clock: a minute lasts 20 ms, so the first timed step (10 min) rings after 0.2 s.
    browser.execute("sessionStorage.setItem('commonplace.minute_ms', '20');").await?;
    browser.goto(&w.url("/r/challah")).await?;
    browser.click("#he .cook-open").await?;
    until(&browser, "return !document.getElementById('cook').hidden;").await?;
    let dir = browser.execute("return getComputedStyle(document.getElementById('cook')).direction;").await?;
    ensure!(dir == "rtl", "cook mode in Hebrew reads right to left: {dir}");
    let count = browser.text("#cook-count").await?;
    ensure!(count == "שלב 1 מתוך 10", "{count}");
    let size = browser
        .execute("return parseFloat(getComputedStyle(document.getElementById('cook-text')).fontSize);")
        .await?;
    ensure!(size.as_f64().unwrap_or(0.0) >= 24.0, "large type: {size}");
    let overflow =
        browser.execute("return document.documentElement.scrollWidth - window.innerWidth;").await?;
    ensure!(overflow.as_i64().unwrap_or(1) <= 0, "wider than a phone: {overflow}");
    let wake = browser.execute("return document.body.dataset.wakeLock;").await?;
    ensure!(
        ["on", "refused", "unsupported"].contains(&wake.as_str().unwrap_or_default()),
        "wake lock: {wake}"
    );
    let no_timer = browser.execute("return document.getElementById('cook-timer-row').hidden;").await?;
    ensure!(no_timer == json!(true), "step 1 has no timer");

    // Keyboard: in Hebrew the left arrow goes forward.
    let key = |k: &str| format!("document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{k}'}}));");
    browser.execute(&key("ArrowLeft")).await?;
    browser.execute(&key("ArrowLeft")).await?;
    ensure!(browser.text("#cook-count").await? == "שלב 3 מתוך 10", "{}", browser.text("#cook-count").await?);
    ensure!(browser.text("#cook-left").await? == "10:00", "{}", browser.text("#cook-left").await?);
    browser.click("#cook-timer").await?;
    until(&browser, "return document.body.dataset.alarms === '1';").await?;
    let alarm = browser.text("#cook-alarm").await?;
    ensure!(alarm.contains("הזמן נגמר") && alarm.contains('3'), "{alarm}");

    // Grown-up steps are marked: step 7 heats the oven.
    browser.execute(&(key("ArrowLeft").repeat(4))).await?;
    ensure!(browser.text("#cook-count").await? == "שלב 7 מתוך 10", "{}", browser.text("#cook-count").await?);
    let flags = browser.text("#cook-flags").await?;
    ensure!(flags.contains("עם מבוגר") && flags.contains("תנור"), "{flags}");
    browser.execute(&key("ArrowRight")).await?;
    ensure!(browser.text("#cook-count").await? == "שלב 6 מתוך 10", "right goes back in Hebrew");
    std::fs::write(tests::root().join("tests/.work/cook-mode.png"), browser.screenshot().await?)?;
    let violations = browser.axe_violations().await?;
    ensure!(violations.is_empty(), "axe on cook mode: {violations:?}");
    browser.execute(&key("Escape")).await?;
    until(&browser, "return document.getElementById('cook').hidden;").await?;
    ensure!(
        browser.execute("return document.activeElement.classList.contains('cook-open');").await?
            == json!(true),
        "focus returns to the button that opened cook mode"
    );
    Ok(())
}

/// The text of the kitchen's draft editor, unescaped.
fn draft_of(html: &str) -> Result<String> {
    let start = html.find(r#"<textarea id="draft""#).context("no draft on the page")?;
    let body = &html[start..];
    let body =
        &body[body.find('>').context("textarea")? + 1..body.find("</textarea>").context("textarea end")?];
    Ok(body
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&"))
}

pub async fn kitchen_imports_cooklang_into_a_draft_and_saves_it(w: Arc<Worker>) -> Result<()> {
    let kitchen = tests::kitchen::Kitchen::sign_in(&w, "importer").await?;
    let cook = "---\ntitle: Kitchen lemon rice\ndescription: Bright and quick.\nservings: 4\nprep time: 5 min\n\
                cook time: 15 min\nlocale: en\n---\n\nSimmer @basmati rice{300%g} in @water{600%ml}. ~{15%min}\n\n\
                Stir in @lemon zest{1%tbsp}.\n";
    let answer = kitchen.post("/kitchen/import", &[("format", "cooklang"), ("source", cook)]).await?;
    ensure!(answer.status() == 200, "import answered {}", answer.status());
    let page = answer.text().await?;
    for asked in
        ["<code>course</code>", "<code>difficulty</code>", "<code>emoji</code>", "<code>vegan</code>"]
    {
        ensure!(page.contains(asked), "the draft does not ask for {asked}");
    }
    let mut draft: Value = serde_json::from_str(&draft_of(&page)?)?;
    ensure!(
        draft["texts"]["en"]["ingredients"][0] == json!({"q": 300, "u": "g", "i": "basmati rice"}),
        "{draft}"
    );
    ensure!(draft["texts"]["en"]["steps"][0]["min"] == 15, "{draft}");

    // Saving it as it is: every problem comes back, nothing is stored.
    let refused = kitchen.post("/kitchen/recipes", &[("recipe", &draft.to_string())]).await?;
    ensure!(refused.status() == 200, "{}", refused.status());
    let refused = refused.text().await?;
    ensure!(
        refused.contains("id=\"draft-problems\"") && refused.contains("<code>course</code>"),
        "no problems shown"
    );

    for (key, value) in [("course", json!("side")), ("difficulty", json!(1)), ("emoji", json!("🍋"))] {
        draft[key] = value;
    }
    for flag in ["gf", "vegan", "vegetarian", "dairy_free", "nut_free"] {
        draft[flag] = json!(1);
    }
    let saved = kitchen.post("/kitchen/recipes", &[("recipe", &draft.to_string())]).await?;
    ensure!(saved.status() == 303, "save answered {}: {}", saved.status(), saved.text().await?);
    let location = saved.headers()["location"].to_str()?.to_string();
    ensure!(location == "/r/kitchen-lemon-rice", "{location}");
    let read = reqwest::get(w.url(&format!("{location}.json"))).await?.json::<Value>().await?;
    ensure!(read["owner"] == "importer" && read["licence"] == "CC0-1.0" && read["version"] == 1, "{read}");

    let json_ld = json!({"@type": "Recipe", "name": "Pasted soup", "inLanguage": "en", "recipeYield": "2",
        "recipeIngredient": ["1 l water"], "recipeInstructions": "Boil."});
    let answer = kitchen
        .post("/kitchen/import", &[("format", "schema-org"), ("source", &json_ld.to_string())])
        .await?;
    let page = answer.text().await?;
    ensure!(
        page.contains("<code>nut_free</code>") && page.contains("<code>licence</code>"),
        "schema.org questions"
    );
    Ok(())
}
