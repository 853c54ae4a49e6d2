from graphctx.retrieval.fusion import rrf


def test_scores_are_reciprocal_ranks_with_k_60():
    fused = rrf({"bm25": ["a", "b"], "dense": ["b", "c"]})
    by_id = {f.entity_id: f for f in fused}
    assert by_id["b"].score == 1 / 62 + 1 / 61
    assert by_id["a"].score == 1 / 61
    assert by_id["b"].ranks == {"bm25": 2, "dense": 1}
    assert fused[0].entity_id == "b"


def test_ties_are_broken_by_id():
    fused = rrf({"bm25": ["z", "y"], "dense": ["y", "z"]})
    assert [f.entity_id for f in fused] == ["y", "z"]
    assert fused[0].score == fused[1].score


def test_duplicate_ids_in_one_leg_count_once():
    fused = rrf({"bm25": ["a", "a", "b"]})
    assert [(f.entity_id, f.ranks["bm25"]) for f in fused] == [("a", 1), ("b", 2)]


def test_empty_legs_give_nothing():
    assert rrf({"bm25": [], "dense": []}) == []
