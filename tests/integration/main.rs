//! Integration tests: every route through the real Worker in workerd, over real HTTP.
//! One worker serves the whole run (see `tests::runner`); each module is one area of the service.

mod recipes_read;

fn main() -> std::process::ExitCode {
    tests::runner::run(tests::tests![
        recipes_read::search_ranks_title_matches_first,
        recipes_read::search_folds_hebrew_niqqud_and_prefixes,
        recipes_read::search_folds_portuguese_accents_and_stems,
        recipes_read::search_tolerates_one_typo,
        recipes_read::filters_are_anded,
        recipes_read::cursor_paging_visits_every_match_once,
        recipes_read::lang_chooses_the_card_language,
        recipes_read::bad_parameters_are_problem_json_naming_the_parameter,
        recipes_read::single_recipe_json_has_all_languages_and_server_fields,
        recipes_read::unknown_recipe_is_a_404_problem,
        recipes_read::recipe_page_is_rtl_for_hebrew_with_json_ld,
        recipes_read::open_data_files_are_served_and_checksummed,
        recipes_read::unknown_routes_and_methods_are_problems,
        recipes_read::preflight_allows_any_origin,
    ])
}
