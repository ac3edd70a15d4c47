"""Cost caps and deterministic degradation (capped pairs count as never scored,
`cap_exceeded`), the four allocations, the set-score budget, pairs outside the retrieval
set, and the property that caps always bound the work."""

from __future__ import annotations

from typing import Any

from _fc_fixtures import C1, chunk, claim, pair, response, set_score
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.policies.fail_closed import FailClosedPolicy, FCResponse, round_robin


def _spans(claim_id: str, n: int, *, p_entail: float = 0.3) -> list[dict[str, Any]]:
    return [pair(f"{claim_id}-{k:02d}", p_entail, 0.0) for k in range(n)]


def _kept(answer: FCResponse, **caps: int) -> list[int]:
    decided = FailClosedPolicy.from_spec({"caps": caps}).decide(answer)
    return [len(c.spans_scored) for c in decided.claims]


def test_round_robin_examples_of_the_spec() -> None:
    assert round_robin([20, 20, 20], 50) == [17, 17, 16]
    assert round_robin([20, 5, 20], 40) == [18, 5, 17]
    assert round_robin([], 10) == [] and round_robin([3], 0) == [0]


def test_the_four_cap_allocations() -> None:
    three = response([claim(c, _spans(c, 20)) for c in "abc"])
    assert _kept(three, max_pairs=50) == [17, 17, 16]
    uneven = response([claim(c, _spans(c, n)) for c, n in (("a", 30), ("b", 5), ("c", 30))])
    assert _kept(uneven, max_pairs=40) == [18, 5, 17]
    twelve = response([claim(f"c{i:02d}", _spans(f"c{i:02d}", 25)) for i in range(12)])
    decided = FailClosedPolicy().decide(twelve)
    assert [len(c.spans_scored) for c in decided.claims] == [20] * 12
    assert decided.response.n_pairs_used == 240 and all(c.truncated for c in decided.claims)
    thirteen = response([claim(f"c{i:02d}", _spans(f"c{i:02d}", 3)) for i in range(13)])
    decided = FailClosedPolicy().decide(thirteen)
    assert [len(c.spans_scored) for c in decided.claims] == [3] * 12 + [0]
    assert decided.response.n_pairs_used == 36
    assert decided.claims[-1].reason == "cap_exceeded" and decided.claims[-1].truncated


def test_a_claim_beyond_max_claims_is_never_verified() -> None:
    claims = [claim(f"c{i:02d}", [pair(f"s{i:02d}", 0.99, 0.0)]) for i in range(13)]
    decided = FailClosedPolicy().decide(response(claims))
    assert [c.native.value for c in decided.claims] == ["VERIFIED"] * 12 + ["UNVERIFIED"]
    assert decided.response.outcome == "answer_partial"


def test_spans_are_kept_by_chunk_rank_then_offset_never_by_score() -> None:
    chunks = [
        chunk("late", [(f"l{k}", f"Late {k}.") for k in range(3)], rank=2),
        chunk("early", [(f"e{k}", f"Early {k}.") for k in range(3)], rank=1),
    ]
    pairs = [pair(f"l{k}", 0.99, 0.0) for k in range(3)] + [
        pair(f"e{k}", 0.1, 0.0) for k in range(3)
    ]
    answer = response([claim("c", pairs)], chunks=chunks)
    decided = FailClosedPolicy.from_spec({"caps": {"max_spans_per_claim": 3}}).decide(answer)
    assert decided.claims[0].spans_scored == ["e0", "e1", "e2"]
    assert (decided.claims[0].reason, decided.claims[0].truncated) == ("below_tau_entail", True)


def test_chunk_caps_drop_whole_chunks_and_late_spans() -> None:
    chunks = [chunk(f"k{r:02d}", [(f"s{r:02d}", f"S{r}.")], rank=r) for r in range(1, 12)]
    support_in_11th = response([claim("c", [pair("s11", 0.95, 0.0)])], chunks=chunks)
    decided = FailClosedPolicy().decide(support_in_11th).claims[0]
    assert (decided.native, decided.reason) == ("UNVERIFIED", "cap_exceeded")
    wider = FailClosedPolicy.from_spec({"caps": {"max_chunks": 11}}).decide(support_in_11th)
    assert wider.claims[0].native == "VERIFIED"
    nine = [chunk("k", [(f"s{i}", f"Sentence {i}.") for i in range(9)], rank=1)]
    last_span = response([claim("c", [pair("s0", 0.2, 0.0), pair("s8", 0.95, 0.0)])], chunks=nine)
    decided = FailClosedPolicy().decide(last_span).claims[0]
    assert decided.spans_scored == ["s0"] and decided.reason == "below_tau_entail"
    assert decided.truncated


def test_no_pairs_is_no_evidence_but_all_pairs_capped_is_cap_exceeded() -> None:
    """The reason says whether there was nothing or the caps took it."""
    answer = response([claim("a", _spans("a", 2)), claim("b", []), claim("c", _spans("c", 2))])
    decided = FailClosedPolicy.from_spec({"caps": {"max_pairs": 2}}).decide(answer)
    assert [(len(c.spans_scored), c.reason.value) for c in decided.claims] == [
        (1, "below_tau_entail"),
        (0, "no_evidence"),
        (1, "below_tau_entail"),
    ]
    decided = FailClosedPolicy.from_spec({"caps": {"max_pairs": 1}}).decide(answer)
    assert decided.claims[2].reason == "cap_exceeded"


def test_a_set_score_costs_one_pair_of_the_budget() -> None:
    status, pairs, sets, _ = C1["c5"]
    c5 = claim("c5", [pair(*p) for p in pairs], set_scores=[set_score(*sets[0])])
    tight = FailClosedPolicy.from_spec({"caps": {"max_pairs": 2}}).decide(response([c5]))
    assert tight.claims[0].native == "UNVERIFIED" and tight.response.n_pairs_used == 2
    enough = FailClosedPolicy.from_spec({"caps": {"max_pairs": 3}}).decide(response([c5]))
    assert enough.claims[0].mse == ["s8", "s9"] and enough.response.n_pairs_used == 3
    assert enough.claims[0].n_pairs_scored == 3


def test_unscored_and_foreign_references_are_ignored_and_logged() -> None:
    """A pair naming a span outside the retrieval set counts for nothing."""
    chunks = [chunk("k1", [("s1", "One."), ("s2", "Two.")], rank=1, doc_id="d1")]
    pairs = [pair("s1", 0.3, 0.0), pair("ghost", 0.99, 0.0)]
    candidates = ["d1", "s1", "doc-x", "k1"]
    answer = response(
        [
            claim(
                "c",
                pairs,
                evidence_candidates=candidates,
                set_scores=[set_score(("ghost", "s1"), 0.95)],
            )
        ],
        chunks=chunks,
    )
    decided = FailClosedPolicy().decide(answer)
    assert decided.claims[0].native == "UNVERIFIED" and decided.claims[0].spans_scored == ["s1"]
    notes = {(n.reference, n.source, n.code) for n in decided.references}
    assert notes == {
        ("ghost", "pair", "unscored_reference"),
        ("ghost+s1", "set_score", "unscored_reference"),
        ("doc-x", "evidence_candidates", "unscored_reference"),
    }


@st.composite
def _capped_answers(draw: st.DrawFn) -> tuple[FCResponse, dict[str, int]]:
    n_claims = draw(st.integers(0, 15))
    claims = []
    for i in range(n_claims):
        n = draw(st.integers(0, 25))
        p = [
            pair(
                f"k{draw(st.integers(0, 12))}-s{i}-{k}",
                draw(st.sampled_from([0.0, 0.5, 0.85, 0.99])),
                0.0,
                chunk_id=f"k{k % 13}",
                retrieval_rank=k % 13,
                start=k,
            )
            for k in range(n)
        ]
        claims.append(claim(f"c{i:02d}", p))
    caps = {
        "max_claims": draw(st.integers(1, 15)),
        "max_spans_per_claim": draw(st.integers(1, 25)),
        "max_pairs": draw(st.integers(1, 300)),
        "max_chunks": draw(st.integers(1, 13)),
        "max_spans_per_chunk": draw(st.integers(1, 10)),
    }
    return response(claims), caps


@settings(max_examples=60, deadline=None)
@given(_capped_answers())
def test_caps_always_bound_the_work(case: tuple[FCResponse, dict[str, int]]) -> None:
    """Whatever the caps and the answer, pairs used, spans per claim and claims scored stay
    within them, and no claim verifies outside its scored spans."""
    answer, caps = case
    decided = FailClosedPolicy.from_spec({"caps": caps}).decide(answer)
    assert decided.response.n_pairs_used <= caps["max_pairs"]
    assert all(len(c.spans_scored) <= caps["max_spans_per_claim"] for c in decided.claims)
    scored = [c for c in decided.claims if c.spans_scored]
    assert len(scored) <= caps["max_claims"]
    for record in decided.claims:
        if not record.spans_scored:
            assert record.native != "VERIFIED"
        if record.native == "VERIFIED":
            assert set(record.mse) <= set(record.spans_scored)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=15), st.integers(0, 400))
def test_round_robin_is_fair_and_fills_the_budget(counts: list[int], budget: int) -> None:
    taken = round_robin(counts, budget)
    assert sum(taken) == min(budget, sum(counts))
    assert all(0 <= t <= c for t, c in zip(taken, counts, strict=True))
    open_levels = [t for t, c in zip(taken, counts, strict=True) if t < c]
    if open_levels:  # unsaturated claims sit on one level, earlier claims one above
        assert max(open_levels) - min(open_levels) <= 1
        assert open_levels == sorted(open_levels, reverse=True)
        low = min(open_levels)
        assert all(min(c, low) <= t <= low + 1 for t, c in zip(taken, counts, strict=True))
