//! Integration tests: every route through the real Worker in workerd, over real HTTP.
//! One worker serves the whole run (see `tests::runner`); each module is one area of the service.

mod kitchen;
mod quotes;
mod recipes_read;
mod recipes_write;
mod sync;

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
        // Quote attribution (issue 5).
        quotes::attribute_finds_a_verbatim_quote_from_any_spelling_of_the_url,
        quotes::attribute_lands_on_word_times,
        quotes::attribute_flags_tails_speaker_changes_and_misses,
        quotes::attribute_on_a_real_changelog_episode_keeps_its_licence,
        quotes::attribute_bad_input_is_problem_json,
        quotes::shows_list_episode_counts_and_licences,
        quotes::episodes_page_with_a_cursor,
        quotes::episode_record_has_every_run_and_the_name_votes,
        quotes::transcript_narrows_by_speaker_and_window_and_echoes_filters,
        quotes::speakers_share_speech_time_not_the_window,
        quotes::search_finds_phrases_with_speakers_and_lists_a_person,
        quotes::transcripts_download_as_webvtt_and_podcasting20,
        // Accounts, keys and recipe writes (after the reads, which expect the build alone).
        recipes_write::me_names_the_key_owner_and_its_label,
        recipes_write::missing_unknown_and_revoked_keys_are_401_with_a_bearer_challenge,
        recipes_write::create_assigns_a_slug_the_owner_and_cc0,
        recipes_write::change_needs_the_owner_a_note_and_the_current_version,
        recipes_write::fork_makes_my_copy_and_a_fork_of_a_fork_keeps_the_chain,
        recipes_write::bad_input_is_a_problem_naming_what_is_wrong,
        recipes_write::search_shows_overlay_recipes_and_hides_replaced_versions,
        recipes_write::fifty_concurrent_changes_with_one_if_match_make_exactly_one_200,
        recipes_write::twenty_concurrent_forks_get_twenty_distinct_slugs,
        recipes_write::change_feed_lists_every_write_in_order_and_pages,
        recipes_write::history_lists_api_changes_newest_first,
        recipes_write::the_sixty_first_write_in_a_minute_is_429_with_rate_limit_headers,
        kitchen::github_sign_in_key_lifecycle_in_a_browser,
        kitchen::local_sign_in_exists_only_in_dev,
        sync::sync_commits_each_change_and_the_next_build_publishes_it,
    ])
}
