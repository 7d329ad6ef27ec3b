//! The route table as the router reads it.

use super::*;

fn check(method: &str, path: &str) -> String {
    match find(method, path) {
        Found::Route(route, params) => format!("{:?} {params:?}", route.op),
        Found::NotAllowed(allowed) => format!("405 {allowed}"),
        Found::None => "none".to_string(),
    }
}

#[test]
fn requests_find_their_route() {
    let cases = [
        ("GET", "/api/recipes", "SearchRecipes []"),
        ("HEAD", "/api/recipes", "SearchRecipes []"),
        ("POST", "/api/recipes", "CreateRecipe []"),
        ("DELETE", "/api/recipes", "405 GET, HEAD, POST"),
        ("GET", "/r/hummus.json", r#"RecipeJson [("slug", "hummus")]"#),
        ("GET", "/r/hummus", r#"RecipePage [("slug", "hummus")]"#),
        // The cards come before the page, whose `{slug}` would take their names.
        ("GET", "/r/hummus.16x9.svg", r#"RecipeCard [("card", "hummus.16x9")]"#),
        ("GET", "/r/hummus.1x1.png", r#"RecipeCardPng [("card", "hummus.1x1")]"#),
        ("GET", "/r/hummus.cook", r#"RecipeCooklang [("slug", "hummus")]"#),
        ("POST", "/kitchen/import", "KitchenImport []"),
        ("GET", "/api/r/hummus", "405 PUT"),
        ("POST", "/api/r/hummus/variant/gf", r#"DietVersion [("slug", "hummus"), ("kind", "gf")]"#),
        ("GET", "/api/episodes/changes", "SpeakerDecisions []"),
        ("GET", "/api/episodes/ep_abc", r#"Episode [("episode_id", "ep_abc")]"#),
        ("GET", "/api/episodes/ep_abc/speakers/A", "405 PUT"),
        ("GET", "/mcp", "405 POST"),
        ("GET", "/search/manifest.json", "none"),
        ("GET", "/r/hummus.history.json", r#"RecipeJson [("slug", "hummus.history")]"#),
        ("GET", "/", "BuiltFile []"),
    ];
    for (method, path, found) in cases {
        assert_eq!(check(method, path), found, "{method} {path}");
    }
}

#[test]
fn every_route_is_one_method_on_one_path() {
    for (i, route) in ROUTES.iter().enumerate() {
        assert!(route.path.starts_with('/'), "{}", route.path);
        let twin = ROUTES[..i].iter().find(|r| r.path == route.path && r.method == route.method);
        assert!(twin.is_none(), "{} {} twice", route.method.name(), route.path);
    }
}

#[test]
fn a_browser_is_refused_with_a_page_on_gets_outside_the_api_that_name_no_file() {
    let by_path = |method: Method, path: &str| {
        ROUTES.iter().find(|r| r.method == method && r.path == path).map(Route::refuses_as_page)
    };
    assert_eq!(by_path(Method::Get, "/quotes"), Some(true));
    assert_eq!(by_path(Method::Get, "/kitchen/callback/github"), Some(true));
    assert_eq!(by_path(Method::Get, "/api/attribute"), Some(false));
    assert_eq!(by_path(Method::Post, "/mcp"), Some(false));
    assert_eq!(by_path(Method::Post, "/kitchen/review"), Some(false));
    assert_eq!(by_path(Method::Get, "/episodes/{file}.json"), Some(false));
}

#[cfg(feature = "schema")]
#[test]
fn every_route_taking_a_query_has_its_inputs_schema() {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    for route in ROUTES.iter().filter(|route| route.takes == Takes::Query) {
        let schema = parameters_schema(route.op, &settings);
        assert!(schema.is_some(), "{} {} takes a query but names no input", route.method.name(), route.path);
    }
}
