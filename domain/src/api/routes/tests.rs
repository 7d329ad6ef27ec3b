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
    assert_eq!(check("GET", "/api/recipes"), "SearchRecipes []");
    assert_eq!(check("HEAD", "/api/recipes"), "SearchRecipes []");
    assert_eq!(check("POST", "/api/recipes"), "CreateRecipe []");
    assert_eq!(check("DELETE", "/api/recipes"), "405 GET, HEAD, POST");
    assert_eq!(check("GET", "/r/hummus.json"), "RecipeJson [(\"slug\", \"hummus\")]");
    assert_eq!(check("GET", "/r/hummus"), "RecipePage [(\"slug\", \"hummus\")]");
    // The cards come before the page, whose `{slug}` would take their names.
    assert_eq!(check("GET", "/r/hummus.16x9.svg"), "RecipeCard [(\"card\", \"hummus.16x9\")]");
    assert_eq!(check("GET", "/r/hummus.1x1.png"), "RecipeCardPng [(\"card\", \"hummus.1x1\")]");
    assert_eq!(check("GET", "/r/hummus.cook"), "RecipeCooklang [(\"slug\", \"hummus\")]");
    assert_eq!(check("POST", "/kitchen/import"), "KitchenImport []");
    assert_eq!(check("GET", "/api/r/hummus"), "405 PUT");
    assert_eq!(
        check("POST", "/api/r/hummus/variant/gf"),
        "DietVersion [(\"slug\", \"hummus\"), (\"kind\", \"gf\")]"
    );
    assert_eq!(check("GET", "/api/episodes/changes"), "SpeakerDecisions []");
    assert_eq!(check("GET", "/api/episodes/ep_abc"), "Episode [(\"episode_id\", \"ep_abc\")]");
    assert_eq!(check("GET", "/api/episodes/ep_abc/speakers/A"), "405 PUT");
    assert_eq!(check("GET", "/mcp"), "405 POST");
    assert_eq!(check("GET", "/search/manifest.json"), "none");
    assert_eq!(check("GET", "/r/hummus.history.json"), "RecipeJson [(\"slug\", \"hummus.history\")]");
    assert_eq!(check("GET", "/"), "BuiltFile []");
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
