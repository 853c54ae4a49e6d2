"""The contract suite bites: each deliberately broken adapter in tests/contracts/broken fails on the
contract tests that guard the promise it breaks -- and only there -- while the same tests pass on
the unbroken adapter and the guard passes on both.

Each broken file holds `TestBroken...` (the broken adapter) and `TestControl...` (the same contract
on the real adapter). It runs in a pytest subprocess restricted to the relevant contract tests, and
the JUnit report is checked test by test:

* every `must_fail` pattern names at least one failed test of the broken class;
* every failed test of the broken class is named by `must_fail` or `may_fail` (no collateral noise);
* every `must_pass` pattern names tests that passed on the broken adapter (the breakage is narrow);
* the guard passed; the control class ran the same tests with no failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import junit_run  # shared subprocess runner (tests/contracts is on sys.path under pytest)
import pytest
from junit_run import Outcome

from graphctx.contracts._guard import GUARD, contract_tests
from graphctx.contracts.graph import GraphStoreContract, OrderingTests
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.contracts.vector import VectorIndexContract

REPO = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken"
TIMEOUT_S = 300


# ---- running pytest on a file and reading its JUnit report ------------------------------------


def run_pytest(args: list[str], junit: Path) -> tuple[int, list[Outcome], str]:
    """`python -m pytest ARGS` from the repository root; the exit code, every test case of the JUnit
    report and the console output (for failure messages)."""
    run = junit_run.run_pytest(args, cwd=REPO, junit=junit, timeout_s=TIMEOUT_S)
    return run.code, run.outcomes, run.console


def names(pattern: str, outcomes: list[Outcome]) -> list[Outcome]:
    """Outcomes whose test name (parameters optional) matches `pattern` entirely."""
    rx = re.compile(pattern + r"(\[.*\])?")
    return [o for o in outcomes if rx.fullmatch(o.name)]


def defined_in(*mixins: type) -> str:
    """A pattern naming exactly the tests the given contract mixins define."""
    return "|".join(sorted(n for m in mixins for n in vars(m) if n.startswith("test_")))


# ---- the broken adapters and what must catch them ---------------------------------------------


@dataclass(frozen=True)
class Case:
    file: str
    broken: str
    control: str
    contract: type
    select: str
    """Pattern over contract test names: what the subprocess runs (the guard is always added)."""
    must_fail: tuple[str, ...]
    may_fail: tuple[str, ...] = ()
    must_pass: tuple[str, ...] = ()


CASES = [
    Case(
        "broken_graph_tenant_blind.py",
        "TestBrokenTenantBlind",
        "TestControlSqlite",
        GraphStoreContract,
        select=r"test_(isolation_.*|fresh_store_.*|get_by_ids_.*|find_exact_.*"
        r"|injection_payloads_never_widen_scope|injection_targeted_.*)",
        must_fail=(
            "test_isolation_get_by_ids_sees_only_own_scope",
            "test_isolation_find_exact_sees_only_own_scope",
            "test_fresh_store_scopes_do_not_share_data",
            "test_injection_targeted_values_stay_in_scope",
            "test_injection_targeted_ids_stay_in_scope",
        ),
        may_fail=(r"test_isolation_.*", "test_injection_payloads_never_widen_scope"),
        must_pass=(
            "test_get_by_ids_follows_given_order",
            "test_find_exact_by_each_field",
            "test_find_exact_names_and_aliases_casefolded",
            "test_isolation_facts_from_roots_see_only_own_scope",
        ),
    ),
    Case(
        "broken_lexical_scope_blind.py",
        "TestBrokenScopeBlindLexical",
        "TestControlTantivy",
        LexicalIndexContract,
        select=r"test_(.*never_cross.*|search_other_scope_only_text_is_not_found|search_injection_.*"
        r"|search_wildcard_is_literal|search_empty_scope_returns_empty|upsert_then_search_.*)",
        must_fail=(
            "test_search_never_crosses_scopes",
            "test_search_other_scope_only_text_is_not_found",
            "test_search_injection_never_widens_scope",
            "test_search_empty_scope_returns_empty",
        ),
        may_fail=(
            r"test_(delete|upsert)_never_crosses_scopes",
            "test_search_injection_payload_is_found_literally",
            "test_search_wildcard_is_literal",
        ),
        must_pass=("test_hashes_never_cross_scopes", r"test_upsert_then_search_.*"),
    ),
    Case(
        "broken_graph_keeps_deleted.py",
        "TestBrokenKeepsDeleted",
        "TestControlSqlite",
        GraphStoreContract,
        select=r"test_(entity_delete_.*|scope_clear_.*|scope_stats_.*|isolation_delete_.*)",
        must_fail=(
            "test_entity_delete_removes_entity",
            "test_entity_delete_then_recreate",
            "test_entity_delete_visible_to_reads_made_before",
        ),
        may_fail=("test_scope_stats_follow_writes",),
        must_pass=("test_entity_delete_removes_touching_facts", "test_scope_clear_removes_everything"),
    ),
    Case(
        "broken_graph_stale_cache.py",
        "TestBrokenStaleCache",
        "TestControlCacheless",
        GraphStoreContract,
        select=r"test_(entity_delete_.*|scope_clear_.*|isolation_(delete|clear)_.*)",
        # only a test that hydrates before deleting fills the cache that delete forgets
        must_fail=(
            "test_entity_delete_visible_to_reads_made_before",
            "test_scope_clear_visible_to_reads_made_before",
        ),
        may_fail=(r"test_isolation_(delete|clear)_changes_only_own_scope",),
        must_pass=("test_entity_delete_removes_entity", "test_scope_clear_removes_everything"),
    ),
    Case(
        "broken_graph_concatenates.py",
        "TestBrokenConcatenating",
        "TestControlSqlite",
        GraphStoreContract,
        select=r"test_(injection_.*|find_exact_.*|isolation_find_exact_.*)",
        must_fail=(
            "test_injection_payloads_found_literally",
            "test_injection_payloads_never_widen_scope",
            "test_injection_payloads_as_ids",
            "test_injection_targeted_values_stay_in_scope",
            "test_injection_targeted_ids_stay_in_scope",
        ),
        must_pass=(
            "test_find_exact_by_each_field",
            "test_find_exact_names_and_aliases_casefolded",
            "test_isolation_find_exact_sees_only_own_scope",
            "test_injection_payloads_round_trip",
        ),
    ),
    Case(
        "broken_graph_shuffles.py",
        "TestBrokenShuffling",
        "TestControlSqlite",
        GraphStoreContract,
        select=defined_in(OrderingTests),
        must_fail=(
            "test_find_exact_ties_ordered_by_id",
            "test_hashes_ties_ordered_by_id",
            "test_get_by_ids_ties_follow_given_order",
            "test_traversal_ties_ordered_by_id",
            "test_reads_repeat_identically",
            "test_answers_independent_of_insertion_order",
        ),
        must_pass=("test_shortest_path_ties_ordered_by_id",),  # paths are not shuffled
    ),
    Case(
        "broken_graph_ignores_limit.py",
        "TestBrokenLimitless",
        "TestControlSqlite",
        GraphStoreContract,
        select=r"test_.*(limit|clamped).*",
        must_fail=(
            r"test_neighbourhood_limit_edges\[29-29-True\]",
            "test_neighbourhood_limit_clamped",
            r"test_neighbourhood_per_direction_limit_edges\[29-29-True\]",
            "test_neighbourhood_per_direction_limit_each_direction",
            "test_neighbourhood_per_direction_limit_clamped",
            "test_facts_from_roots_limit_80",
            r"test_facts_from_roots_limit_edges\[59-59-True\]",
            "test_find_exact_limit_clamped",
            "test_find_exact_honours_limit",
        ),
        may_fail=(
            r"test_(neighbourhood|facts_from_roots)_.*limit_edges",
            "test_isolation_depth_limits_count_only_own_edges",
            "test_ties_larger_than_the_limit_cut_by_id",
            # contract 1.5's limit tests: an ignored limit fails them too
            r"test_facts_from_roots_limit_keeps_catalogue_order_across_roots",
            "test_find_exact_limit_fills_from_later_fields",
            r"test_neighbourhood_(limit_keeps_smallest_ids_not_first_edges|per_direction_limit_keeps_catalogue_order)",
            # and contract 1.6's
            r"test_facts_from_roots_limit_counts_only_matching_predicates",
            r"test_neighbourhood_per_direction_limit_counts_only_.*",
        ),
        must_pass=(
            "test_neighbourhood_depth_clamped_to_two",
            "test_entity_hashes_limit_edges",
            "test_shortest_path_max_depth_clamped",
        ),
    ),
    Case(
        "broken_lexical_ignores_k.py",
        "TestBrokenIgnoresK",
        "TestControlTantivy",
        LexicalIndexContract,
        select=r"test_search_(k_is_clamped|fewer_matches_than_k|ties_cut_at_k_by_entity_id|ties_ordered_by_entity_id)",
        must_fail=(
            r"test_search_k_is_clamped\[(-5-1|0-1|1-1|7-7)\]",
            r"test_search_ties_cut_at_k_by_entity_id\[(1|5|11)\]",
        ),
        must_pass=(
            "test_search_fewer_matches_than_k",
            "test_search_ties_ordered_by_entity_id",
            r"test_search_k_is_clamped\[(100-100|101-100|10000-100)\]",  # at or over the clamp
        ),
    ),
]


def _new(
    file: str,
    broken: str,
    select: str,
    must_fail: tuple[str, ...],
    must_pass: tuple[str, ...] = (),
    control: str = "",
) -> Case:
    """A case of contract 1.2's broken adapters (and later ones): caught by the tests named, collateral
    failures inside the selected family allowed (the defect is named by the file, and the control
    passes)."""
    port = file.split("_")[1]
    contract, default = {
        "graph": (GraphStoreContract, "TestControlSqlite"),
        "lexical": (LexicalIndexContract, "TestControlTantivy"),
        "vector": (VectorIndexContract, "TestControlQdrantEdge"),
    }[port]
    if "reopen" in file:
        default = "TestControlSqliteOnDisk"
    return Case(
        file, broken, control or default, contract, select, must_fail, may_fail=(".*",), must_pass=must_pass
    )


DEPTH = (
    r"test_(isolation_depth_.*|neighbourhood_depth_one|neighbourhood_depth_two|shortest_path_nodes_and_edges)"
)
EXACT = r"test_find_exact_.*"
CASES += [
    _new(
        "broken_graph_second_hop_blind.py",
        "TestBrokenSecondHopBlind",
        DEPTH,
        (
            "test_isolation_depth_neighbourhood_at_each_hop",
            "test_isolation_depth_shortest_path_takes_no_foreign_shortcut",
        ),
        must_pass=("test_neighbourhood_depth_one",),
    ),
    _new(
        "broken_graph_later_hops_forget_namespace.py",
        "TestBrokenLaterHopsForgetNamespace",
        DEPTH,
        ("test_isolation_depth_neighbourhood_at_each_hop", "test_isolation_depth_roots_at_the_second_hop"),
        must_pass=("test_neighbourhood_depth_one",),
    ),
    _new(
        "broken_graph_later_hops_forget_graph_id.py",
        "TestBrokenLaterHopsForgetGraphId",
        DEPTH,
        (
            "test_isolation_depth_neighbourhood_at_each_hop",
            "test_isolation_depth_shortest_path_takes_no_foreign_shortcut",
        ),
        must_pass=("test_neighbourhood_depth_one",),
    ),
    _new(
        "broken_graph_limit_before_scope.py",
        "TestBrokenLimitBeforeScope",
        DEPTH,
        ("test_isolation_depth_limits_count_only_own_edges",),
        must_pass=("test_isolation_depth_neighbourhood_at_each_hop",),
    ),
    _new(
        "broken_graph_empty_graph_id_wildcard.py",
        "TestBrokenEmptyGraphIdWildcard",
        r"test_(isolation_(get_by_ids|find_exact|hashes)_.*|fresh_store_.*)",
        ("test_isolation_get_by_ids_sees_only_own_scope", "test_isolation_find_exact_sees_only_own_scope"),
    ),
    _new(
        "broken_graph_find_exact_nfkc.py",
        "TestBrokenFindExactNfkc",
        EXACT,
        ("test_find_exact_applies_no_unicode_normalisation",),
        must_pass=("test_find_exact_by_each_field",),
    ),
    _new(
        "broken_graph_ids_as_traversal_keys.py",
        "TestBrokenIdsAsTraversalKeys",
        r"test_(ids_named_like_query_keywords_are_plain_ids|injection_payloads_.*)",
        ("test_ids_named_like_query_keywords_are_plain_ids",),
        must_pass=("test_injection_payloads_round_trip", "test_injection_payloads_as_ids"),
    ),
    _new(
        "broken_graph_find_exact_strips.py",
        "TestBrokenFindExactStrips",
        EXACT,
        ("test_find_exact_never_trims_or_pads",),
        must_pass=("test_find_exact_by_each_field",),
    ),
    _new(
        "broken_graph_lower_not_casefold.py",
        "TestBrokenLowerNotCasefold",
        EXACT,
        ("test_find_exact_names_fold_by_casefold_exactly", "test_find_exact_names_and_aliases_casefolded"),
        must_pass=("test_find_exact_by_each_field",),
    ),
    _new(
        "broken_graph_drops_microseconds.py",
        "TestBrokenDropsMicroseconds",
        r"test_(instants_keep_microseconds|facts_from_roots_validity_half_open|invalidate_.*)",
        ("test_instants_keep_microseconds",),
        must_pass=("test_facts_from_roots_validity_half_open",),
    ),
    _new(
        "broken_graph_truncates_text.py",
        "TestBrokenTruncatesText",
        r"test_(texts_.*|control_characters_are_kept_literally|injection_payloads_round_trip)",
        ("test_texts_at_their_bounds_round_trip",),
        must_pass=("test_injection_payloads_round_trip",),
    ),
    _new(
        "broken_graph_strips_control_characters.py",
        "TestBrokenStripsControlCharacters",
        r"test_(texts_.*|control_characters_are_kept_literally)",
        ("test_control_characters_are_kept_literally",),
    ),
    _new(
        "broken_graph_ignores_source.py",
        "TestBrokenIgnoresSource",
        r"test_(a_change_of_source_alone_is_an_update|entity_upsert_.*)",
        ("test_a_change_of_source_alone_is_an_update",),
        must_pass=("test_entity_upsert_reports_created",),
    ),
    _new(
        "broken_graph_clock_frozen_at_open.py",
        "TestBrokenClockFrozenAtOpen",
        r"test_(now_moves_between_calls|facts_from_roots_default_as_of_is_now|scope_stats_.*)",
        ("test_now_moves_between_calls",),
        must_pass=("test_facts_from_roots_default_as_of_is_now",),
    ),
    _new(
        "broken_graph_hash_page_cap.py",
        "TestBrokenHashPageCap",
        r"test_(large_scope_hash_scan_is_complete_and_in_id_order|entity_hashes_.*)",
        ("test_large_scope_hash_scan_is_complete_and_in_id_order",),
        must_pass=("test_entity_hashes_after_is_exclusive",),
    ),
    _new(
        "broken_graph_get_by_ids_cap.py",
        "TestBrokenGetByIdsCap",
        r"test_(large_scope_hash_scan_is_complete_and_in_id_order|get_by_ids_.*)",
        ("test_large_scope_hash_scan_is_complete_and_in_id_order",),
        must_pass=("test_get_by_ids_follows_given_order",),
    ),
    _new(
        "broken_graph_declares_no_templates.py",
        "TestBrokenDeclaresNoTemplates",
        r"test_run_.*",
        ("test_run_declared_templates_match_capabilities",),
    ),
    _new(
        "broken_graph_fact_batch_not_atomic.py",
        "TestBrokenFactBatchNotAtomic",
        r"test_(fact_upsert_.*|isolation_fact_.*)",
        ("test_fact_upsert_missing_endpoint_raises_not_found",),
        must_pass=("test_fact_upsert_visible_to_next_run",),
    ),
    _new(
        "broken_graph_invalidate_lengthens.py",
        "TestBrokenInvalidateLengthens",
        r"test_(invalidate_.*|fact_invalidate_.*)",
        ("test_invalidate_twice_never_lengthens", "test_invalidate_an_ended_fact_never_revives_it"),
        must_pass=("test_fact_invalidate_sets_valid_to_and_keeps_row",),
    ),
    _new(
        "broken_graph_invalidate_before_start.py",
        "TestBrokenInvalidateBeforeStart",
        r"test_(invalidate_.*|fact_invalidate_.*)",
        ("test_invalidate_before_a_fact_starts_ends_it_at_its_start",),
        must_pass=("test_invalidate_twice_never_lengthens",),
    ),
    _new(
        "broken_graph_delete_keeps_aliases.py",
        "TestBrokenDeleteKeepsAliases",
        r"test_(delete_then_recreate_brings_nothing_back|entity_delete_.*)",
        ("test_delete_then_recreate_brings_nothing_back",),
        must_pass=("test_entity_delete_removes_entity",),
    ),
    _new(
        "broken_graph_delete_keeps_facts.py",
        "TestBrokenDeleteKeepsFacts",
        r"test_(delete_then_recreate_brings_nothing_back|entity_delete_.*)",
        ("test_delete_then_recreate_brings_nothing_back",),
        must_pass=("test_entity_delete_removes_entity",),
    ),
    _new(
        "broken_graph_names_cached_by_id.py",
        "TestBrokenNamesCachedById",
        r"test_entity_names_.*",
        ("test_entity_names_see_only_own_scope", "test_entity_names_follow_updates"),
        must_pass=("test_entity_names_match_hydration", "test_entity_names_omit_missing_and_repeats"),
    ),
    _new(
        "broken_graph_reopen_revives_aliases.py",
        "TestBrokenReopenRevivesAliases",
        r"test_close_then_.*",
        ("test_close_then_reopen_keeps_every_kind_of_write",),
        must_pass=("test_close_then_reopen_keeps_data",),
    ),
    _new(
        "broken_lexical_namespace_blind.py",
        "TestBrokenNamespaceBlindLexical",
        r"test_(.*never_cross.*|search_filters_by_scope_before_the_cut)",
        ("test_search_never_crosses_scopes",),
    ),
    _new(
        "broken_lexical_graph_id_blind.py",
        "TestBrokenGraphIdBlindLexical",
        r"test_(.*never_cross.*|search_filters_by_scope_before_the_cut)",
        ("test_search_never_crosses_scopes",),
    ),
    _new(
        "broken_lexical_ties_cut_before_sort.py",
        "TestBrokenTiesCutBeforeSort",
        r"test_search_ties_.*",
        ("test_search_ties_larger_than_k_and_any_overfetch",),
    ),
    _new(
        "broken_lexical_hashes_one_page.py",
        "TestBrokenOnePageHashes",
        r"test_hashes_.*",
        ("test_hashes_of_a_scope_larger_than_any_page",),
        must_pass=("test_hashes_exact_per_scope",),
    ),
    _new(
        "broken_lexical_post_filter.py",
        "TestBrokenPostFilteringLexical",
        r"test_(search_filters_by_scope_before_the_cut|.*never_cross.*)",
        ("test_search_filters_by_scope_before_the_cut",),
    ),
    _new(
        "broken_lexical_query_parser.py",
        "TestBrokenParsingLexical",
        r"test_search_(injection_.*|wildcard_is_literal)",
        ("test_search_injection_never_widens_scope", "test_search_wildcard_is_literal"),
    ),
    _new(
        "broken_lexical_delete_scope_blind.py",
        "TestBrokenDeleteEverywhere",
        r"test_delete_.*",
        ("test_delete_never_crosses_scopes",),
        must_pass=("test_delete_removes_from_search_and_hashes",),
    ),
    _new(
        "broken_vector_tenant_blind.py",
        "TestBrokenTenantBlindVectors",
        r"test_(.*never_cross.*|search_filters_by_scope_before_the_cut)",
        ("test_search_never_crosses_scopes",),
    ),
    _new(
        "broken_vector_collection_per_dimension.py",
        "TestBrokenDimensionNamedShard",
        r"test_two_models_.*",
        ("test_two_models_of_the_same_dimension_never_share_points",),
    ),
    _new(
        "broken_vector_approximate_large_shards.py",
        "TestBrokenApproximateWhenLarge",
        r"test_search_(large_shard|tenant_filter)_recall_is_exact",
        ("test_search_large_shard_recall_is_exact",),
        must_pass=("test_search_tenant_filter_recall_is_exact",),
    ),
    _new(
        "broken_vector_ties_without_padding.py",
        "TestBrokenUnpaddedTies",
        r"test_search_ties_.*",
        ("test_search_ties_larger_than_k_and_any_overfetch",),
    ),
    _new(
        "broken_vector_hashes_one_page.py",
        "TestBrokenOnePageVectorHashes",
        r"test_hashes_.*",
        ("test_hashes_of_a_scope_larger_than_any_page",),
    ),
    _new(
        "broken_vector_post_filter.py",
        "TestBrokenPostFilteringVectors",
        r"test_search_filters_by_scope_before_the_cut",
        ("test_search_filters_by_scope_before_the_cut",),
    ),
]


# contract 1.5: defects the 1.4 suite passed (found by hand-written and mechanical mutants of the
# reference adapters); each is caught only by the 1.5 tests named
HOOKED = "TestControlHookedTraversal"
NEIGHBOURHOOD = r"test_(neighbourhood_.*|isolation_depth_.*)"
PATH = r"test_(shortest_path_.*|isolation_depth_shortest_path_.*)"
TIMESTAMPS = r"test_(entity_upsert_.*|fact_upsert_.*)"
CASES += [
    _new(
        "broken_graph_cut_by_far_id.py",
        "TestBrokenCutByFarId",
        NEIGHBOURHOOD,
        ("test_neighbourhood_per_direction_limit_keeps_catalogue_order",),
        must_pass=(r"test_neighbourhood_per_direction_limit_edges", "test_neighbourhood_depth_two"),
        control=HOOKED,
    ),
    _new(
        "broken_graph_cut_in_like_out.py",
        "TestBrokenCutInLikeOut",
        NEIGHBOURHOOD,
        ("test_neighbourhood_per_direction_limit_keeps_catalogue_order",),
        must_pass=("test_neighbourhood_per_direction_limit_each_direction",),
        control=HOOKED,
    ),
    _new(
        "broken_graph_limit_keeps_first_reached.py",
        "TestBrokenLimitKeepsFirstReached",
        NEIGHBOURHOOD,
        ("test_neighbourhood_limit_keeps_smallest_ids_not_first_edges",),
        must_pass=(r"test_neighbourhood_limit_edges", "test_neighbourhood_limit_clamped"),
        control=HOOKED,
    ),
    _new(
        "broken_graph_later_hop_moves_depth.py",
        "TestBrokenLaterHopMovesDepth",
        NEIGHBOURHOOD,
        ("test_neighbourhood_node_keeps_its_smallest_depth",),
        must_pass=("test_neighbourhood_depth_two", "test_isolation_depth_neighbourhood_at_each_hop"),
        control=HOOKED,
    ),
    _new(
        "broken_graph_omitted_as_flag.py",
        "TestBrokenOmittedAsFlag",
        NEIGHBOURHOOD,
        ("test_neighbourhood_omitted_counts_each_step_left_out",),
        must_pass=(r"test_neighbourhood_limit_edges", r"test_neighbourhood_per_direction_limit_edges"),
        control=HOOKED,
    ),
    _new(
        "broken_graph_path_first_edge_wins.py",
        "TestBrokenPathFirstEdgeWins",
        PATH,
        ("test_shortest_path_ties_take_smallest_ids_not_first_edges",),
        must_pass=("test_shortest_path_ties_take_smallest_ids",),
        control=HOOKED,
    ),
    _new(
        "broken_graph_path_parallel_edge_by_id.py",
        "TestBrokenPathParallelEdgeById",
        PATH,
        ("test_shortest_path_parallel_edges_take_catalogue_order",),
        must_pass=("test_shortest_path_nodes_and_edges",),
        control=HOOKED,
    ),
    _new(
        "broken_graph_path_allowlist_first_hop.py",
        "TestBrokenPathAllowlistFirstHop",
        PATH,
        ("test_shortest_path_edge_allowlist_at_every_hop",),
        must_pass=("test_shortest_path_edge_allowlist",),
        control=HOOKED,
    ),
    _new(
        "broken_graph_path_direction_first_hop.py",
        "TestBrokenPathDirectionFirstHop",
        PATH,
        ("test_shortest_path_direction_at_every_hop",),
        must_pass=("test_shortest_path_follows_direction",),
        control=HOOKED,
    ),
    _new(
        "broken_graph_path_current_means_no_end.py",
        "TestBrokenPathCurrentMeansNoEnd",
        PATH,
        ("test_shortest_path_default_as_of_is_now",),
        must_pass=("test_shortest_path_valid_at_as_of", "test_shortest_path_validity_half_open"),
        control=HOOKED,
    ),
    _new(
        "broken_graph_from_roots_in_leg_ignores_validity.py",
        "TestBrokenFromRootsInLegIgnoresValidity",
        r"test_facts_from_roots_.*",
        ("test_facts_from_roots_validity_in_every_direction",),
        must_pass=("test_facts_from_roots_valid_at_as_of", "test_facts_from_roots_default_as_of_is_now"),
    ),
    _new(
        "broken_graph_updated_at_always_now.py",
        "TestBrokenUpdatedAtAlwaysNow",
        TIMESTAMPS,
        ("test_entity_upsert_timestamps_follow_the_rules", "test_fact_upsert_timestamps_follow_the_rules"),
        must_pass=("test_entity_upsert_sets_updated_at", "test_fact_upsert_sets_timestamps"),
    ),
    _new(
        "broken_graph_replace_keeps_updated_at.py",
        "TestBrokenReplaceKeepsUpdatedAt",
        TIMESTAMPS,
        ("test_entity_upsert_timestamps_follow_the_rules", "test_fact_upsert_timestamps_follow_the_rules"),
        must_pass=("test_entity_upsert_sets_updated_at", "test_entity_upsert_keeps_created_at_on_replace"),
    ),
    _new(
        "broken_graph_unchanged_bumps_updated_at.py",
        "TestBrokenUnchangedBumpsUpdatedAt",
        TIMESTAMPS,
        ("test_entity_upsert_timestamps_follow_the_rules", "test_fact_upsert_timestamps_follow_the_rules"),
        must_pass=(
            "test_entity_upsert_identical_reports_unchanged",
            "test_fact_upsert_identical_reports_unchanged",
        ),
    ),
    _new(
        "broken_graph_fact_unchanged_ignores_validity.py",
        "TestBrokenFactUnchangedIgnoresValidity",
        r"test_(fact_upsert_.*|invalidate_.*)",
        ("test_fact_upsert_a_change_of_any_one_field_is_an_update",),
        must_pass=("test_fact_upsert_replace_by_id", "test_fact_upsert_finds_every_derived_id"),
    ),
    _new(
        "broken_graph_find_exact_reports_last_value.py",
        "TestBrokenFindExactReportsLastValue",
        EXACT,
        ("test_find_exact_reports_the_first_given_value_that_matched",),
        must_pass=("test_find_exact_by_each_field", "test_find_exact_names_and_aliases_casefolded"),
    ),
    _new(
        "broken_graph_stats_valid_edges_only.py",
        "TestBrokenStatsValidEdgesOnly",
        r"test_scope_stats_.*",
        ("test_scope_stats_count_value_only_facts",),
        must_pass=("test_scope_stats_valid_facts_now", "test_scope_stats_counts"),
    ),
    _new(
        "broken_graph_clear_keeps_aliases.py",
        "TestBrokenClearKeepsAliases",
        r"test_(scope_clear_.*|entity_delete_.*|delete_then_recreate_brings_nothing_back)",
        ("test_scope_clear_then_recreate_brings_nothing_back",),
        must_pass=("test_scope_clear_then_reload", "test_delete_then_recreate_brings_nothing_back"),
    ),
    _new(
        "broken_graph_from_roots_in_leg_end_inclusive.py",
        "TestBrokenFromRootsInLegEndInclusive",
        r"test_facts_from_roots_.*",
        ("test_facts_from_roots_validity_in_every_direction",),
        must_pass=("test_facts_from_roots_validity_half_open", "test_facts_from_roots_valid_at_as_of"),
    ),
    _new(
        "broken_graph_from_roots_cut_without_subject.py",
        "TestBrokenFromRootsCutWithoutSubject",
        r"test_facts_from_roots_.*",
        ("test_facts_from_roots_limit_keeps_catalogue_order_across_roots",),
        must_pass=(r"test_facts_from_roots_limit_edges", "test_facts_from_roots_limit_80"),
    ),
    _new(
        "broken_graph_find_exact_fills_by_remainder.py",
        "TestBrokenFindExactFillsByRemainder",
        EXACT,
        ("test_find_exact_limit_fills_from_later_fields",),
        must_pass=("test_find_exact_honours_limit", "test_find_exact_limit_clamped"),
    ),
    _new(
        "broken_graph_upsert_counts_against_batch_start.py",
        "TestBrokenCountsAgainstBatchStart",
        TIMESTAMPS,
        (
            "test_entity_upsert_batch_repeating_an_id_applies_in_order",
            "test_fact_upsert_batch_repeating_an_id_applies_in_order",
        ),
        must_pass=("test_entity_upsert_counts_a_mixed_batch", "test_fact_upsert_at_hub_subject"),
    ),
    _new(
        "broken_lexical_ignores_indexed_only_text.py",
        "TestBrokenIgnoresIndexedOnlyText",
        r"test_upsert_.*",
        ("test_upsert_then_search_finds_by_indexed_only_text",),
        must_pass=(r"test_upsert_then_search_finds_by_summary_words",),
    ),
    _new(
        "broken_lexical_upsert_merges_aliases.py",
        "TestBrokenMergesAliases",
        r"test_(upsert_.*|delete_then_recreate_finds_only_the_new_text)",
        ("test_upsert_replaces_aliases",),
        must_pass=("test_upsert_replaces_by_id", "test_delete_then_recreate_finds_only_the_new_text"),
    ),
    _new(
        "broken_lexical_skips_unchanged_text.py",
        "TestBrokenSkipsUnchangedText",
        r"test_(upsert_.*|.*never_cross.*)",
        ("test_upsert_of_a_new_hash_alone_is_stored",),
        must_pass=("test_upsert_replaces_by_id", "test_upsert_is_idempotent"),
    ),
    _new(
        "broken_lexical_no_idf.py",
        "TestBrokenNoIdf",
        r"test_search_.*",
        ("test_search_rare_terms_weigh_more",),
        must_pass=("test_search_scores_descending", "test_search_ties_ordered_by_entity_id"),
    ),
    _new(
        "broken_lexical_whole_name_by_boost.py",
        "TestBrokenWholeNameByBoost",
        r"test_search_.*",
        ("test_search_whole_name_outranks_documents_full_of_the_word",),
        must_pass=("test_search_exact_identifier_ranks_first", "test_search_scores_descending"),
    ),
    _new(
        "broken_lexical_case_sensitive.py",
        "TestBrokenCaseSensitive",
        r"test_(upsert_then_search_.*|search_injection_.*)",
        ("test_upsert_then_search_ignores_letter_case",),
        must_pass=(r"test_upsert_then_search_finds_by_name", r"test_upsert_then_search_finds_by_alias"),
    ),
    _new(
        "broken_vector_skips_unchanged_vector.py",
        "TestBrokenSkipsUnchangedVector",
        r"test_(upsert_.*|.*never_cross.*)",
        ("test_upsert_of_a_new_hash_alone_is_stored",),
        must_pass=("test_upsert_replaces_by_id", "test_upsert_is_idempotent"),
    ),
]


# contract 1.5, second sweep (the vector and lexical ports): defects the suite passed before these
# tests; each is caught only by the 1.5 tests named
DELETES = r"test_(delete_.*|search_after_deletes_.*|close_then_.*|.*never_cross.*)"
CASES += [
    _new(
        "broken_vector_tie_fetch_capped.py",
        "TestBrokenTieFetchCapped",
        r"test_search_ties_.*",
        ("test_search_ties_past_any_fetch_page",),
        must_pass=(
            "test_search_ties_larger_than_k_and_any_overfetch",
            "test_search_ties_ordered_by_entity_id",
        ),
    ),
    _new(
        "broken_vector_batch_keeps_first.py",
        "TestBrokenBatchKeepsFirst",
        r"test_upsert_.*",
        ("test_upsert_batch_repeating_an_id_keeps_the_last",),
        must_pass=("test_upsert_replaces_by_id", "test_upsert_is_idempotent"),
    ),
    _new(
        "broken_vector_empty_batch_raises.py",
        "TestBrokenEmptyBatchRaises",
        r"test_(upsert_.*|delete_.*)",
        ("test_upsert_of_an_empty_batch_is_a_no_op",),
        must_pass=(
            "test_upsert_invalid_vector_raises_and_writes_nothing",
            "test_delete_unknown_id_is_a_no_op",
        ),
    ),
    _new(
        "broken_vector_deletes_filtered_after_cut.py",
        "TestBrokenVectorDeletesFilteredAfterCut",
        DELETES,
        ("test_search_after_deletes_still_returns_k",),
        must_pass=("test_delete_removes_from_search_and_hashes", "test_delete_never_crosses_scopes"),
    ),
    _new(
        "broken_vector_deletes_not_durable.py",
        "TestBrokenDeletesNotDurable",
        DELETES,
        ("test_close_then_reopen_keeps_every_write",),
        must_pass=("test_search_after_deletes_still_returns_k", "test_delete_removes_from_search_and_hashes"),
    ),
    _new(
        "broken_lexical_batch_deletes_then_adds.py",
        "TestBrokenBatchDeletesThenAdds",
        r"test_upsert_.*",
        ("test_upsert_batch_repeating_an_id_keeps_the_last",),
        must_pass=("test_upsert_replaces_by_id", "test_upsert_is_idempotent"),
    ),
    _new(
        "broken_lexical_deletes_filtered_after_cut.py",
        "TestBrokenLexicalDeletesFilteredAfterCut",
        DELETES,
        ("test_search_after_deletes_still_returns_k",),
        must_pass=("test_delete_removes_from_search_and_hashes", "test_delete_never_crosses_scopes"),
    ),
    _new(
        "broken_lexical_query_cut_to_first_words.py",
        "TestBrokenQueryCutToFirstWords",
        r"test_search_.*",
        ("test_search_query_at_its_bound_counts_every_word",),
        must_pass=("test_search_injection_payload_is_found_literally", "test_search_scores_descending"),
    ),
    _new(
        "broken_lexical_ascii_tokenizer.py",
        "TestBrokenAsciiTokenizer",
        r"test_(upsert_then_search_.*|search_injection_.*)",
        (
            r"test_upsert_then_search_finds_words_of_any_script\[cyrillic-name\]",
            r"test_upsert_then_search_finds_words_of_any_script\[greek-name\]",
            r"test_upsert_then_search_finds_words_of_any_script\[cjk-name\]",
        ),
        must_pass=(
            r"test_upsert_then_search_finds_words_of_any_script\[accented-name\]",
            "test_upsert_then_search_ignores_letter_case",
            "test_search_injection_payload_is_found_literally",
        ),
    ),
    _new(
        "broken_lexical_ascii_case_folding.py",
        "TestBrokenAsciiCaseFolding",
        r"test_upsert_then_search_.*",
        (
            r"test_upsert_then_search_finds_words_of_any_script\[cyrillic-name-upper\]",
            r"test_upsert_then_search_finds_words_of_any_script\[greek-name-upper\]",
        ),
        must_pass=(
            r"test_upsert_then_search_finds_words_of_any_script\[cyrillic-name\]",
            "test_upsert_then_search_ignores_letter_case",
        ),
    ),
    _new(
        "broken_lexical_stop_words_in_names.py",
        "TestBrokenStopWordsInNames",
        r"test_upsert_then_search_.*",
        (r"test_upsert_then_search_finds_names_made_of_stop_words\[it-upper\]",),
        must_pass=("test_upsert_then_search_finds_by_name", "test_upsert_then_search_finds_by_alias"),
    ),
    _new(
        "broken_lexical_analyser_only_at_creation.py",
        "TestBrokenAnalyserOnlyAtCreation",
        r"test_(close_then_.*|upsert_.*)",
        ("test_close_then_reopen_keeps_every_write",),
        must_pass=("test_upsert_replaces_by_id", "test_upsert_then_search_finds_by_name"),
        control="TestControlTantivyOnDisk",
    ),
]


# contract 1.6 (a mutation sweep of the three ports): defects the 1.5 suite passed; each is caught
# only by the 1.6 test named
CASES += [
    _new(
        "broken_graph_delete_empty_wipes.py",
        "TestBrokenDeleteEmptyWipes",
        r"test_entity_delete_.*",
        ("test_entity_delete_of_no_ids_deletes_nothing",),
        must_pass=("test_entity_delete_missing_ids_changes_nothing", "test_entity_delete_removes_entity"),
    ),
    _new(
        "broken_graph_invalidate_empty_ends_all.py",
        "TestBrokenInvalidateEmptyEndsAll",
        r"test_fact_invalidate_.*",
        ("test_fact_invalidate_of_no_ids_ends_nothing",),
        must_pass=("test_fact_invalidate_ends_validity",),
    ),
    _new(
        "broken_graph_clear_one_batch.py",
        "TestBrokenClearOneBatch",
        r"test_(scope_clear_.*|large_scope_.*)",
        ("test_large_scope_clear_removes_every_entity_and_fact",),
        must_pass=("test_scope_clear_removes_everything", "test_scope_clear_counts_entities_and_facts"),
    ),
    _new(
        "broken_graph_unchanged_ignores_alias_order.py",
        "TestBrokenAliasSet",
        r"test_entity_upsert_.*",
        ("test_entity_upsert_of_reordered_aliases_is_an_update",),
        must_pass=("test_entity_upsert_replaces_aliases", "test_entity_upsert_identical_reports_unchanged"),
    ),
    _new(
        "broken_graph_alias_case_duplicates_raise.py",
        "TestBrokenAliasCaseDup",
        r"test_(entity_upsert_.*|find_exact_.*)",
        ("test_entity_upsert_keeps_aliases_that_differ_only_in_case",),
        must_pass=("test_entity_upsert_replaces_aliases", "test_find_exact_names_and_aliases_casefolded"),
    ),
    _new(
        "broken_graph_ignores_utc_offset.py",
        "TestBrokenWallClock",
        r"test_(facts_from_roots_.*|fact_invalidate_.*)",
        ("test_facts_from_roots_compares_instants_not_wall_clocks",),
        must_pass=(
            r"test_facts_from_roots_validity_in_every_direction",
            "test_fact_invalidate_ends_validity",
        ),
    ),
    _new(
        "broken_lexical_colon_joined_key.py",
        "TestBrokenColonKey",
        r"test_(.*never_cross.*|scopes_whose_joined_.*|upsert_.*)",
        ("test_scopes_whose_joined_names_agree_never_share_a_document",),
        must_pass=("test_upsert_never_crosses_scopes", "test_delete_never_crosses_scopes"),
    ),
    _new(
        "broken_lexical_delete_first_1024.py",
        "TestBrokenDeleteCapped",
        DELETES,
        ("test_delete_of_more_ids_than_any_batch",),
        must_pass=("test_delete_removes_from_search_and_hashes", "test_search_after_deletes_still_returns_k"),
    ),
    _new(
        "broken_vector_colon_point_id.py",
        "TestBrokenColonPointId",
        r"test_(.*never_cross.*|scopes_whose_joined_.*|upsert_.*)",
        ("test_scopes_whose_joined_names_agree_never_share_a_point",),
        must_pass=("test_upsert_never_crosses_scopes", "test_delete_never_crosses_scopes"),
    ),
    _new(
        "broken_vector_delete_one_batch.py",
        "TestBrokenDeleteOneBatch",
        DELETES,
        ("test_delete_of_more_ids_than_any_batch",),
        must_pass=("test_delete_removes_from_search_and_hashes", "test_search_after_deletes_still_returns_k"),
    ),
]


# contract 1.6, second sweep (the read paths)
CASES += [
    _new(
        "broken_graph_cut_before_validity.py",
        "TestBrokenCutBeforeValidity",
        r"test_neighbourhood_.*",
        (r"test_neighbourhood_per_direction_limit_counts_only_valid_edges\[.*\]",),
        must_pass=(
            "test_neighbourhood_validity_half_open",
            r"test_neighbourhood_per_direction_limit_edges\[.*\]",
        ),
        control="TestControlHookedTraversal",
    ),
    _new(
        "broken_graph_cut_before_allowlist.py",
        "TestBrokenCutBeforeAllowlist",
        r"test_neighbourhood_.*",
        (r"test_neighbourhood_per_direction_limit_counts_only_allowed_edges\[.*\]",),
        must_pass=(r"test_neighbourhood_per_direction_limit_edges\[.*\]",),
        control="TestControlHookedTraversal",
    ),
    _new(
        "broken_graph_from_roots_predicates_after_limit.py",
        "TestBrokenFromRootsPredicatesAfterLimit",
        r"test_facts_from_roots_.*",
        (r"test_facts_from_roots_limit_counts_only_matching_predicates\[.*\]",),
        must_pass=("test_facts_from_roots_filters_predicates", "test_facts_from_roots_limit_80"),
    ),
    _new(
        "broken_graph_find_exact_fields_given_order.py",
        "TestBrokenFindExactGivenOrder",
        EXACT,
        ("test_find_exact_rank_ignores_the_order_fields_are_given",),
        must_pass=("test_find_exact_by_each_field",),
    ),
    _new(
        "broken_graph_find_exact_id_probes_folded.py",
        "TestBrokenFindExactIdProbesFolded",
        EXACT,
        ("test_find_exact_exact_fields_keep_probes_that_fold_alike",),
        must_pass=("test_find_exact_ids_and_qualified_names_are_never_folded",),
    ),
    _new(
        "broken_vector_ties_by_folded_id.py",
        "TestBrokenTiesByFoldedIdVector",
        r"test_search_ties_.*",
        (r"test_search_ties_ordered_by_code_point\[(3|9)\]",),
        must_pass=("test_search_ties_ordered_by_entity_id",),
    ),
    _new(
        "broken_lexical_ties_by_folded_id.py",
        "TestBrokenTiesByFoldedIdLexical",
        r"test_search_ties_.*",
        (r"test_search_ties_ordered_by_code_point\[(3|9)\]",),
        must_pass=("test_search_ties_ordered_by_entity_id",),
    ),
]


def check_bites(case: Case, tmp_path: Path) -> None:
    selected = sorted(n for n in contract_tests(case.contract) if re.fullmatch(case.select, n))
    assert selected, f"{case.select!r} selects no contract test: renamed in the suite?"
    for pattern in (*case.must_fail, *case.must_pass):
        base = pattern.split("\\[", 1)[0]
        assert any(re.fullmatch(base, n) for n in selected), f"{pattern!r} names no selected contract test"
    path = BROKEN / case.file
    node_ids = [f"{path}::{cls}::{n}" for cls in (case.broken, case.control) for n in [*selected, GUARD]]
    code, outcomes, console = run_pytest(node_ids, tmp_path / "report.xml")

    broken = [o for o in outcomes if o.cls == case.broken]
    control = [o for o in outcomes if o.cls == case.control]
    assert control, f"the control class {case.control} did not run:\n{console}"
    assert sorted(o.name for o in broken) == sorted(o.name for o in control), "different tests ran"
    assert [o for o in control if o.status == "failed"] == [], f"the control class fails:\n{console}"

    (guard,) = [o for o in broken if o.name == GUARD]
    assert guard.status == "passed", f"the guard did not pass on {case.broken}: {guard.message}"

    failed = [o for o in broken if o.status == "failed"]
    # a broken adapter must fail by misbehaving, not by crashing on an internal of the adapter it
    # subclasses that has since changed (which any contract would "catch")
    crashed = [o.name for o in failed if re.search(r"\b(AttributeError|NameError|ImportError)\b", o.message)]
    assert crashed == [], f"{case.broken} crashes instead of showing its defect: {crashed}\n{console}"
    for pattern in case.must_fail:
        assert names(pattern, failed), (
            f"{case.broken} should fail {pattern!r}; failed: {sorted(o.name for o in failed)}\n{console}"
        )
    stray = [o.name for o in failed if not any(names(p, [o]) for p in (*case.must_fail, *case.may_fail))]
    assert stray == [], f"{case.broken} also fails unrelated tests: {stray}"
    for pattern in case.must_pass:
        matched = names(pattern, broken)
        assert matched, f"no test named {pattern!r} ran"
        assert all(o.status == "passed" for o in matched), (
            f"{pattern!r} should still pass on {case.broken}: {[(o.name, o.status) for o in matched]}"
        )
    assert code == 1, f"pytest exit status {code}, expected 1 (tests failed):\n{console}"


@pytest.mark.parametrize("case", CASES, ids=[c.file.removesuffix(".py") for c in CASES])
def test_the_suite_fails_the_broken_adapter_on_the_right_tests(case: Case, tmp_path: Path) -> None:
    check_bites(case, tmp_path)


def test_every_broken_adapter_has_a_case() -> None:
    """Every broken file is checked here, and there are at least 30 of them across the three ports."""
    files = sorted(p.name for p in BROKEN.glob("broken_*.py"))
    assert sorted({c.file for c in CASES}) == files
    assert len(files) >= 30
    assert {f.split("_")[1] for f in files} == {"graph", "lexical", "vector"}


def test_broken_files_are_not_collected_by_the_normal_run() -> None:
    """The broken adapters must never run (and fail) in the repository's own test run."""
    files = sorted(p.name for p in BROKEN.glob("*.py"))
    assert {c.file for c in CASES} <= set(files)
    assert not [f for f in files if f.startswith("test_") or f.endswith("_test.py")], files
