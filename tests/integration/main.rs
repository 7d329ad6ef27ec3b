//! Integration tests: every route through the real Worker in workerd, over real HTTP.
//! One shared worker serves the tests that take it, one at a time; tests that take nothing start workers
//! of their own and run beside them (see `tests::runner`). Each module is one area of the service.

mod addresses;
mod ai;
mod cooking;
mod http;
mod intake;
mod kitchen;
mod layout;
mod limits;
mod mcp;
mod pages;
mod quote_pages;
mod quotes;
mod recipes_read;
mod recipes_write;
mod retries;
mod safe;
mod speakers;
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
        recipes_read::a_dump_in_parts_still_reads_as_one_file,
        recipes_read::a_hebrew_only_recipe_is_found_by_its_latin_slug,
        recipes_read::the_readmes_search_examples_find_recipes,
        // RFC 9110 on every answer, and Google's Recipe rich results through extruct.
        http::if_none_match_lists_and_star_answer_304_on_every_get,
        http::every_published_file_has_a_content_type,
        http::unknown_methods_are_405_with_allow_never_another_method,
        http::recipe_pages_qualify_for_google_recipe_rich_results,
        layout::packed_files_read_whole_from_the_start_middle_and_end_of_a_pack,
        layout::a_rebuild_after_one_change_adds_one_pack_and_serves_the_new_version,
        layout::a_full_build_beside_a_running_worker_keeps_every_read_200,
        layout::a_root_naming_a_pack_r2_lacks_keeps_the_last_build_served,
        pages::recipe_page_reads_right_to_left_in_hebrew_on_a_phone,
        pages::home_page_search_finds_a_recipe,
        // Quote attribution.
        quotes::attribute_finds_a_verbatim_quote_from_any_spelling_of_the_url,
        quotes::attribute_reads_escaped_unreserved_characters_as_plain_ones,
        quotes::attribute_lands_on_word_times,
        quotes::attribute_flags_tails_speaker_changes_and_misses,
        quotes::attribute_on_a_real_changelog_episode_keeps_its_licence,
        quotes::attribute_without_source_url_searches_every_episode,
        quotes::attribute_bad_input_is_problem_json,
        quotes::shows_list_episode_counts_and_licences,
        quotes::episodes_page_with_a_cursor,
        quotes::episode_record_has_every_run_and_the_name_votes,
        quotes::transcript_narrows_by_speaker_and_window_and_echoes_filters,
        quotes::built_transcripts_and_pages_are_answered_byte_for_byte,
        quotes::speakers_share_speech_time_not_the_window,
        quotes::search_finds_phrases_with_speakers_and_lists_a_person,
        quotes::phrase_reads_at_once_answer_as_they_do_alone,
        quotes::transcripts_download_as_webvtt_and_podcasting20,
        // What independent testers found.
        quotes::a_quote_two_people_said_in_one_episode_is_never_high,
        quotes::a_changed_word_is_neither_exact_nor_verbatim,
        quotes::times_estimated_agrees_between_attribute_and_search,
        quotes::a_turn_that_only_touches_the_window_is_not_in_it,
        quotes::speaker_alone_lists_turns_without_searchable_words,
        // Episodes by their address: each its own worker, allowed to fetch a scripted publisher.
        intake::an_episode_asked_for_by_its_page_comes_in_and_every_quote_route_answers,
        intake::a_reporter_asks_for_an_episode_from_the_quote_page_which_then_answers,
        intake::one_job_per_address_and_inside_addresses_are_refused,
        intake::a_job_that_cannot_make_an_episode_fails_with_its_reason,
        intake::a_followed_feed_brings_its_new_episodes_in_and_reads_again_conditionally,
        intake::assemblyai_transcribes_episodes_without_a_transcript_within_the_days_budget,
        intake::deepgram_answers_by_its_callback_and_one_that_never_comes_ends_the_job,
        intake::a_late_transcription_service_fails_its_job_and_keeps_the_charge,
        // What a newsroom found.
        intake::a_name_that_resolves_inside_a_network_is_never_fetched,
        intake::a_transcript_whose_voices_nobody_separated_is_never_high,
        intake::a_licence_the_site_cannot_publish_stops_the_job_before_anything_is_bought,
        intake::an_item_of_a_followed_feed_joins_its_show_whoever_asks,
        // Addresses readers paste: its own worker, on a build of tests/data/two-licences.
        addresses::pasted_platform_addresses_find_the_published_episode,
        // Accounts, keys and recipe writes (after the reads, which expect the build alone).
        recipes_write::me_names_the_key_owner_and_its_label,
        recipes_write::missing_unknown_and_revoked_keys_are_401_with_a_bearer_challenge,
        recipes_write::create_assigns_a_slug_the_owner_and_cc0,
        recipes_write::slugs_of_hebrew_and_unusual_titles_keep_their_words_and_find_the_recipe,
        recipes_write::change_needs_the_owner_a_note_and_the_current_version,
        recipes_write::fork_makes_my_copy_and_a_fork_of_a_fork_keeps_the_chain,
        recipes_write::bad_input_is_a_problem_naming_what_is_wrong,
        recipes_write::unclean_text_is_422_naming_the_field,
        recipes_write::search_shows_overlay_recipes_and_hides_replaced_versions,
        recipes_write::a_listing_filters_overlay_recipes_by_the_facets_the_build_filters_by,
        recipes_write::a_sweep_gives_recipes_of_older_facet_rules_new_keys_and_keeps_their_terms,
        recipes_write::a_search_answers_alike_before_and_after_two_thousand_writes_that_do_not_match_it,
        recipes_write::fifty_concurrent_changes_with_one_if_match_make_exactly_one_200,
        recipes_write::twenty_concurrent_forks_get_twenty_distinct_slugs,
        recipes_write::change_feed_lists_every_write_in_order_and_pages,
        recipes_write::history_lists_api_changes_newest_first,
        recipes_write::the_sixty_first_write_in_a_minute_is_429_with_rate_limit_headers,
        // Retries made safe, failures told safely.
        retries::a_retried_create_with_its_idempotency_key_makes_one_recipe,
        retries::concurrent_creates_with_one_idempotency_key_make_one_recipe,
        retries::an_internal_error_answers_a_reference_and_nothing_of_the_server,
        retries::a_moment_of_a_busy_database_is_retried_and_a_longer_one_is_503,
        // The recipe API's contract: RFC 9110 preconditions, licences, strict bodies.
        recipes_write::if_match_lists_weak_tags_and_bare_numbers_follow_rfc_9110,
        recipes_write::a_licence_in_the_body_is_refused_not_dropped,
        recipes_write::duplicate_keys_charsets_tiny_quantities_and_bearer_case_are_handled,
        http::a_path_that_is_no_route_is_404_for_every_method,
        http::a_query_that_is_not_utf8_is_a_400_naming_the_parameter,
        http::cooklang_is_nosniff_and_pages_have_a_content_security_policy,
        http::parameters_outside_the_description_are_refused,
        // What cooks expect.
        cooking::scaled_json_of_built_and_written_recipes,
        cooking::bad_servings_and_units_are_problems_naming_the_parameter,
        cooking::cooklang_of_a_recipe_carries_its_metadata_and_lines,
        cooking::mcp_get_recipe_scales_and_converts,
        cooking::servings_control_scales_in_place_and_keeps_the_url,
        cooking::cook_mode_walks_steps_with_timers_in_hebrew_on_a_phone,
        cooking::kitchen_imports_cooklang_into_a_draft_and_saves_it,
        // Limits per person and pages by bytes.
        limits::writes_from_every_key_of_an_account_share_one_limit,
        limits::a_key_past_the_cap_is_refused_until_one_is_revoked,
        limits::sign_ins_from_one_address_are_limited,
        limits::new_keys_from_one_address_are_limited,
        limits::a_feed_page_stops_at_the_byte_budget_and_its_cursor_finds_the_rest,
        // Agents: MCP through real clients, its refusals and errors, llms.txt and openapi.json.
        mcp::rmcp_client_lists_tools_and_calls_every_tool,
        mcp::rmcp_client_speaks_the_stateless_revision,
        mcp::typescript_sdk_client_lists_and_calls_every_tool,
        mcp::malformed_json_rpc_gets_json_rpc_errors,
        mcp::foreign_browser_origins_are_refused,
        mcp::official_conformance_suite_passes,
        mcp::llms_txt_and_openapi_json_describe_both_services,
        mcp::mcp_refuses_other_media_types_and_duplicate_keys,
        mcp::tool_schemas_are_as_strict_as_the_server,
        mcp::a_json_rpc_id_beyond_64_bits_is_echoed_exactly,
        // The site's AI: each but the first starts its own worker and scripted chat service.
        ai::ai_routes_answer_503_without_a_provider,
        ai::ai_write_stores_a_checked_answer_and_repairs_once,
        ai::ai_change_changes_mine_in_place_and_forks_anyone_elses,
        ai::ai_output_cannot_take_over_another_recipe,
        ai::diet_versions_are_made_once_checked_and_shared,
        ai::a_diet_version_failing_the_gluten_check_says_the_checks_refused_the_answer,
        ai::a_caller_waiting_for_a_refused_diet_version_hears_that_the_checks_refused_it,
        ai::twenty_concurrent_both_requests_call_upstream_once_and_make_one_recipe,
        ai::an_ai_refusal_costs_nothing_and_every_answer_after_the_count_carries_rate_limit,
        kitchen::github_sign_in_key_lifecycle_in_a_browser,
        kitchen::local_sign_in_exists_only_in_dev,
        kitchen::expired_sessions_are_dropped_at_the_next_sign_in,
        kitchen::a_key_label_with_hidden_text_is_refused_naming_the_field,
        kitchen::a_bad_or_reserved_handle_is_a_400_saying_why,
        kitchen::a_new_key_answers_200_as_described,
        // Safe by default.
        safe::foreign_hosts_are_refused_before_routing,
        safe::local_sign_in_is_refused_on_a_site_host_that_is_not_loopback,
        safe::deployed_configuration_carries_no_development_value,
        sync::sync_commits_each_change_and_the_next_build_publishes_it,
        // Speaker names set by editors.
        speakers::speaker_names_need_a_key_and_the_editor_role,
        speakers::an_editors_speaker_name_shows_at_once_and_syncs_to_git,
        speakers::a_decision_stored_elsewhere_reaches_readers_within_a_second,
        // The quote service's pages, and the editors' review queue (after the speakers' tests, which
        // expect the sample's names as built).
        quote_pages::the_check_a_quote_form_answers_each_kind_of_quote,
        quote_pages::the_answer_plays_from_the_quotes_second_and_its_link_opens_the_turn,
        quote_pages::an_episode_page_charts_its_speakers_and_compares_its_runs,
        quote_pages::the_search_page_finds_a_phrase_by_speaker_with_links_to_the_moment,
        quote_pages::an_editor_names_a_label_in_the_review_queue_and_the_answer_becomes_high,
        quote_pages::the_review_page_reads_the_queues_next_part_once_the_first_is_decided,
        // Last: schemathesis signs in and posts forms at random, which counts against per-address limits.
        mcp::schemathesis_finds_every_valid_request_accepted_and_every_status_described,
    ])
}
