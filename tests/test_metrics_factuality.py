"""Factuality metrics: hand-computed F(r), macro/micro, 0-claim and unscored responses,
length penalty, gold metrics, Spearman, Cohen's kappa, bootstrap seeding, input forms."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord
from assay.metrics import (
    AgreementReport,
    FactualityReport,
    FactualityRow,
    GoldRow,
    agreement,
    average_ranks,
    cohen_kappa,
    factuality_correlation,
    factuality_scores,
    gold_metrics,
    length_penalized,
    ratio_ci,
    response_table,
    spearman,
)
from assay.metrics._bootstrap import bootstrap_mean_cis
from assay.metrics._response_scores import RESPONSE_COLUMNS

approx = pytest.approx
DS = "fq"


def ver(
    answer_id: str,
    claim_id: str,
    label: str | None,
    *,
    verifier: str = "v1",
    status: str = "ok",
    gold: str | None = None,
    dataset: str = DS,
    **kw: Any,
) -> VerificationRecord:
    return VerificationRecord(
        dataset=dataset,
        answer_id=answer_id,
        claim_id=claim_id,
        claim=f"claim {claim_id}",
        verifier_id=verifier,
        status=status,
        label=label,
        gold_label=gold,
        **kw,
    )


def sent(
    answer_id: str, sentence_id: int, n_claims: int, *, status: str = "ok", **kw: Any
) -> SentenceRecord:
    return SentenceRecord(
        dataset=DS,
        answer_id=answer_id,
        sentence_id=sentence_id,
        sentence=f"sentence {sentence_id}",
        decomposer_id="d",
        status=status,
        n_claims=n_claims,
        **kw,
    )


def claim(answer_id: str, claim_id: str, gold: str | None = None) -> ClaimRecord:
    return ClaimRecord(
        dataset=DS,
        answer_id=answer_id,
        sentence_id=0,
        claim_id=claim_id,
        claim=f"claim {claim_id}",
        decomposer_id="d",
        gold_label=gold,
    )


def example() -> tuple[list[VerificationRecord], list[SentenceRecord], list[ClaimRecord]]:
    """Five responses, verifier v1 (an LLM, with metadata) and v2 (verified r1 only).

    r1  1 claim:   supported                                         F = 1/1
    r2  12 claims: 1 supported, 4 unsupported, 4 contradicted,       F = 1/9
                   2 parse_error (carrying label "supported"!), 1 refusal
    r3  0 claims:  two sentences, both ok with 0 claims              0-claim response
    r4  2 claims:  api_error, truncated                              unscored response
    r5  0 claims:  its only sentence failed (parse_error)            undecomposed

    Sentences: r1 1 (1 claim), r2 3 (4+4+4), r3 2 (0+0), r4 1 (2), r5 1 failed -> 8, 7 ok.
    """
    meta: dict[str, Any] = {"model": "openai/gpt-x", "prompt_id": "verify", "prompt_version": 3}
    vs = [ver("r1", "r1:c0", "supported", **meta)]
    labels = ["supported"] + ["unsupported"] * 4 + ["contradicted"] * 4
    vs += [ver("r2", f"r2:c{i}", lab, **meta) for i, lab in enumerate(labels)]
    vs += [
        ver("r2", "r2:c9", "supported", status="parse_error", **meta),
        ver("r2", "r2:c10", "supported", status="parse_error", **meta),
        ver("r2", "r2:c11", None, status="refusal", **meta),
        ver("r4", "r4:c0", None, status="api_error", **meta),
        ver("r4", "r4:c1", None, status="truncated", **meta),
    ]
    vs += [ver("r1", "r1:c0", "supported", verifier="v2")]
    ss = [
        sent("r1", 0, 1),
        *(sent("r2", i, 4) for i in range(3)),
        sent("r3", 0, 0),
        sent("r3", 1, 0),
        sent("r4", 0, 2),
        sent("r5", 0, 0, status="parse_error"),
    ]
    cs = [claim("r1", "r1:c0")] + [claim("r2", f"r2:c{i}") for i in range(12)]
    cs += [claim("r4", "r4:c0"), claim("r4", "r4:c1")]
    return vs, ss, cs


def row(report: FactualityReport, verifier: str) -> FactualityRow:
    (r,) = [r for r in report.rows if r.verifier_id == verifier]
    return r


# ------------------------------------------------------------------ factuality


def test_macro_and_micro_differ_hand_computed() -> None:
    vs, ss, cs = example()
    v1 = row(factuality_scores(vs, ss, cs, n_boot=200), "v1")
    # macro = mean(1/1, 1/9) = (9/9 + 1/9) / 2 = 5/9; micro = (1 + 1) / (1 + 9) = 0.2
    assert v1.macro == approx(5 / 9)
    assert v1.micro == approx(0.2)
    assert v1.macro is not None and v1.macro_lo is not None and v1.macro_hi is not None
    assert v1.macro_lo <= v1.macro <= v1.macro_hi
    assert v1.micro is not None and v1.micro_lo is not None and v1.micro_hi is not None
    assert v1.micro_lo <= v1.micro <= v1.micro_hi
    assert (v1.model, v1.prompt_id, v1.prompt_version) == ("openai/gpt-x", "verify", 3)
    # no length penalty requested -> no penalized field, macro untouched
    assert v1.macro_length_penalized is None


def test_parse_error_is_neither_supported_nor_in_the_denominator() -> None:
    vs, ss, cs = example()
    t = response_table(vs, ss, cs).set_index(["verifier_id", "answer_id"])
    r2 = t.loc[("v1", "r2")]
    # 12 claims; scored 1 + 4 + 4 = 9; unscored 2 parse_error + 1 refusal = 3
    assert (r2.n_claims, r2.n_scored, r2.n_unscored) == (12, 9, 3)
    assert (r2.n_parse_error, r2.n_refusal) == (2, 1)
    # the published bug would give (1 + 2) / 11 or (1 + 2) / 12; the right value is 1/9
    assert r2.n_supported == 1
    assert r2.factuality == approx(1 / 9)
    # contradicted and unsupported both count as not supported
    assert (r2.n_unsupported, r2.n_contradicted) == (4, 4)


def test_response_categories_and_counts() -> None:
    vs, ss, cs = example()
    v1 = row(factuality_scores(vs, ss, cs, n_boot=50), "v1")
    assert v1.n_responses == 5
    assert v1.n_responses_scored == 2  # r1, r2
    assert v1.n_zero_claim == 1  # r3
    assert v1.zero_claim_rate == approx(1 / 5)
    assert v1.n_responses_unscored == 1  # r4: has claims, none scored; NOT a 0-claim one
    assert v1.n_responses_undecomposed == 1  # r5
    assert v1.n_responses_with_failed_sentences == 1
    # claims: 1 + 12 + 0 + 2 + 0 = 15; scored 1 + 9 = 10
    assert (v1.n_claims, v1.n_scored, v1.n_unscored) == (15, 10, 5)
    assert (v1.n_supported, v1.n_unsupported, v1.n_contradicted) == (2, 4, 4)
    by_status = (v1.n_parse_error, v1.n_refusal, v1.n_truncated, v1.n_api_error, v1.n_missing)
    assert by_status == (2, 1, 1, 1, 0)
    assert v1.claims_per_response == approx(15 / 5)  # 0-claim responses included
    assert (v1.n_sentences, v1.n_sentences_ok, v1.n_sentences_failed) == (8, 7, 1)
    assert v1.claims_per_sentence == approx(15 / 7)

    t = response_table(vs, ss, cs).set_index(["verifier_id", "answer_id"])
    assert list(response_table(vs, ss, cs).columns) == RESPONSE_COLUMNS
    cats = t.loc["v1"].category.to_dict()
    assert cats == {
        "r1": "scored",
        "r2": "scored",
        "r3": "zero_claim",
        "r4": "unscored",
        "r5": "undecomposed",
    }
    assert t.loc["v1"].zero_claim.tolist() == [False, False, True, False, False]
    for aid in ("r3", "r4", "r5"):
        assert math.isnan(t.loc[("v1", aid)].factuality)
    assert t.loc[("v1", "r5")].n_sentences_failed == 1
    assert t.loc[("v1", "r2")].n_sentences == 3


def test_claims_a_verifier_never_saw_are_missing_for_it() -> None:
    vs, ss, cs = example()
    v2 = row(factuality_scores(vs, ss, cs, n_boot=50), "v2")
    # v2 verified r1's one claim only: F(r1) = 1; every other claim is missing
    assert (v2.macro, v2.micro, v2.n_responses_scored) == (1.0, 1.0, 1)
    assert (v2.macro_lo, v2.macro_hi) == (1.0, 1.0)  # n = 1 -> CI collapses
    assert v2.n_missing == 12 + 2  # r2 and r4
    assert v2.n_responses_unscored == 2
    assert (v2.n_zero_claim, v2.n_responses) == (1, 5)  # same universe for every verifier


def test_without_sentences_or_claims() -> None:
    vs, _, _ = example()
    v1 = row(factuality_scores(vs, n_boot=50), "v1")
    # only r1, r2, r4 are known; no sentence statistics
    assert v1.n_responses == 3
    assert (v1.n_zero_claim, v1.zero_claim_rate) == (0, 0.0)
    assert [v1.macro, v1.micro] == approx([5 / 9, 0.2])
    assert (v1.n_sentences, v1.claims_per_sentence) == (None, None)
    t = response_table(vs)
    assert t.n_sentences.isna().all()


def test_responses_with_no_records_are_zero_claim() -> None:
    vs, _, _ = example()
    v1 = row(factuality_scores(vs, responses=[(DS, "empty")], n_boot=50), "v1")
    # r1, r2, r4 + "empty" (no sentences at all) -> 1 of 4 is a 0-claim response
    assert (v1.n_responses, v1.n_zero_claim, v1.zero_claim_rate) == (4, 1, 0.25)


def test_sentence_declared_claims_without_records_are_unscored() -> None:
    vs = [ver("a", "a:c0", "supported")]
    # sentence 0 declares 3 claims (no claim list); sentence 1 lists one id never verified
    ss = [sent("a", 0, 3), sent("a", 1, 1, claims=[{"id": "a:c9", "text": "x", "sentence_id": 1}])]
    t = response_table(vs, ss)
    # claims: a:c0 (verified), a:c9 (listed), and 4 declared - 2 recorded = 2 unrecorded
    assert (t.n_claims[0], t.n_scored[0], t.n_missing[0]) == (4, 1, 3)
    assert t.factuality[0] == 1.0


def test_length_penalty_numbers() -> None:
    vs, ss, cs = example()
    rep = factuality_scores(vs, ss, cs, n_boot=50, length_penalty="factscore")
    v1 = row(rep, "v1")
    # r1: n_claims = 1 < 10 -> F' = 1 * exp(1 - 10/1) = exp(-9)
    # r2: n_claims = 12 >= 10 -> F' = F = 1/9
    assert v1.macro_length_penalized == approx((math.exp(-9) + 1 / 9) / 2)
    assert v1.macro == approx(5 / 9)  # unchanged, reported separately
    assert (rep.length_penalty, rep.gamma) == ("factscore", 10)
    t = response_table(vs, ss, cs, length_penalty="factscore").set_index("answer_id")
    # v1 and v2 both: r1 has 1 claim (the decomposition count, shared by all verifiers)
    assert t.loc["r1"].factuality_length_penalized.tolist() == approx([math.exp(-9)] * 2)
    assert t.loc["r2"].factuality_length_penalized.tolist()[0] == approx(1 / 9)
    # F = 0.8 with 5 claims -> 0.8 * exp(1 - 10/5) = 0.8 / e; 10 claims -> no penalty;
    # 0 claims or F undefined -> undefined
    out = length_penalized([0.8, 0.8, 0.5, np.nan], [5, 10, 0, 3])
    assert out[:2].tolist() == approx([0.8 / math.e, 0.8])
    assert np.isnan(out[2:]).all()
    assert length_penalized([1.0], [4], gamma=8)[0] == approx(math.exp(1 - 2))
    with pytest.raises(ValueError):
        factuality_scores(vs, length_penalty="bogus")  # type: ignore[arg-type]


def test_last_record_wins() -> None:
    ok = ver("a", "a:c0", "supported")
    bad = ver("a", "a:c0", "supported", status="parse_error")
    # ok then parse_error -> unscored
    t = response_table([ok, bad])
    assert (t.n_scored[0], t.n_parse_error[0]) == (0, 1)
    # parse_error then ok -> scored and supported
    t = response_table([bad, ok])
    assert (t.n_scored[0], t.n_supported[0]) == (1, 1)
    # sentences: failed then ok (0 claims) -> a 0-claim response
    rep = factuality_scores([ok], [sent("z", 0, 0, status="api_error"), sent("z", 0, 0)], n_boot=10)
    assert (rep.rows[0].n_zero_claim, rep.rows[0].n_sentences_failed) == (1, 0)


def test_dataframe_input_equivalence() -> None:
    vs, ss, cs = example()
    vdf = pd.DataFrame([v.model_dump(mode="json") for v in vs])
    sdf = pd.DataFrame([s.model_dump(mode="json") for s in ss])
    cdf = pd.DataFrame([c.model_dump(mode="json") for c in cs])
    kw: dict[str, Any] = {"n_boot": 300, "seed": 4, "length_penalty": "factscore"}
    assert factuality_scores(vdf, sdf, cdf, **kw) == factuality_scores(vs, ss, cs, **kw)
    pd.testing.assert_frame_equal(response_table(vdf, sdf, cdf), response_table(vs, ss, cs))
    # plain dicts work too
    dicts = [v.model_dump() for v in vs]
    assert factuality_scores(dicts, n_boot=50) == factuality_scores(vs, n_boot=50)
    with pytest.raises(ValueError, match="lacks required columns"):
        factuality_scores(vdf.drop(columns=["status"]))


def test_report_frame_and_roundtrip() -> None:
    vs, ss, cs = example()
    rep = factuality_scores(vs, ss, cs, n_boot=50)
    frame = rep.to_frame()
    assert list(frame.columns) == list(FactualityRow.model_fields)
    assert frame.verifier_id.tolist() == ["v1", "v2"]
    assert FactualityReport.model_validate_json(rep.model_dump_json()) == rep
    empty = factuality_scores([])
    assert empty.rows == [] and empty.to_frame().empty
    assert response_table([]).empty


def test_invalid_records_are_rejected() -> None:
    with pytest.raises(ValueError, match="status ok but label"):
        factuality_scores([{**ver("a", "c", "supported").model_dump(), "label": None}])
    with pytest.raises(ValueError, match="status ok but label"):
        factuality_scores([{**ver("a", "c", "supported").model_dump(), "label": "Supported"}])
    with pytest.raises(ValueError, match="unknown status"):
        factuality_scores([{**ver("a", "c", None).model_dump(), "status": "failed"}])
    for kw in ({"n_boot": -1}, {"seed": -1}, {"confidence": 1.0}):
        with pytest.raises(ValueError):
            factuality_scores([ver("a", "c", "supported")], **kw)


# ------------------------------------------------------------------- bootstrap


def random_verifications(n_responses: int, verifiers: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out = []
    labels = ["supported", "unsupported", "contradicted"]
    sizes = rng.integers(1, 12, size=n_responses)  # the same claims for every verifier
    for v in range(verifiers):
        for r in range(n_responses):
            for c in range(int(sizes[r])):
                failed = rng.random() < 0.05
                out.append(
                    {
                        "dataset": DS,
                        "answer_id": f"r{r}",
                        "claim_id": f"r{r}:c{c}",
                        "verifier_id": f"v{v}",
                        "status": "parse_error" if failed else "ok",
                        "label": None if failed else labels[int(rng.integers(0, 3))],
                    }
                )
    return out


def test_bootstrap_deterministic_by_seed() -> None:
    recs = random_verifications(100, 2)
    a = factuality_scores(recs, n_boot=400, seed=3)
    b = factuality_scores(recs, n_boot=400, seed=3)
    c = factuality_scores(recs, n_boot=400, seed=4)
    assert a == b
    cis = [(r.macro_lo, r.macro_hi, r.micro_lo, r.micro_hi) for r in a.rows]
    assert cis != [(r.macro_lo, r.macro_hi, r.micro_lo, r.micro_hi) for r in c.rows]
    assert [(r.macro, r.micro) for r in a.rows] == [(r.macro, r.micro) for r in c.rows]
    for r in a.rows:
        assert r.macro_lo is not None and r.macro_hi is not None and r.macro is not None
        assert r.macro_lo < r.macro < r.macro_hi
        assert r.micro_lo is not None and r.micro_hi is not None and r.micro is not None
        assert r.micro_lo < r.micro < r.micro_hi
    # a verifier's CIs do not depend on the other verifiers present
    only_v0 = factuality_scores([r for r in recs if r["verifier_id"] == "v0"], n_boot=400, seed=3)
    assert only_v0.rows[0] == a.rows[0]


def test_micro_uses_the_same_response_draws_as_macro() -> None:
    # one scored claim per response -> F(r) in {0, 1} and micro == macro for every resample
    recs = [
        ver(f"r{i}", f"r{i}:c0", "supported" if i % 3 else "unsupported", dataset="x")
        for i in range(40)
    ]
    r = factuality_scores(recs, n_boot=500, seed=9).rows[0]
    assert r.micro == approx(r.macro)
    assert (r.micro_lo, r.micro_hi) == approx((r.macro_lo, r.macro_hi))
    # ratio_ci draws rows exactly like bootstrap_mean_cis
    x = np.random.default_rng(0).random(30)
    lo, hi = bootstrap_mean_cis(x, n_boot=200, seed=5)
    assert ratio_ci(x, np.ones(30), n_boot=200, seed=5) == approx((lo[0], hi[0]))
    assert ratio_ci([1.0, 2.0], [2.0, 4.0]) == (0.5, 0.5)  # equal unit ratios collapse


def test_speed() -> None:
    recs = random_verifications(1000, 3)  # ~18k verifications
    t0 = time.perf_counter()
    rep = factuality_scores(recs, length_penalty="factscore")
    elapsed = time.perf_counter() - t0
    assert len(rep.rows) == 3
    assert elapsed < 6.0, elapsed  # ~0.6 s on a 2-core machine; generous bound for CI


# ------------------------------------------------------------------ gold labels


def gold_example() -> list[VerificationRecord]:
    """gold label        verdict                    binary (exclude)
    c1  supported         supported                  TP
    c2  supported         unsupported                FN
    c3  supported         contradicted               FN
    c4  not_supported     supported                  FP
    c5  contradicted      contradicted               TN
    c6  partially_supp.   unsupported                TN (default mapping)
    c7  unsupported       unsupported                TN
    c8  supported         parse_error, label "supported"   unscored
    c9  unsupported       api_error                  unscored
    c10 (none)            supported                  skipped: no gold
    """
    rows = [
        ("c1", "supported", "supported", "ok"),
        ("c2", "supported", "unsupported", "ok"),
        ("c3", "supported", "contradicted", "ok"),
        ("c4", "not_supported", "supported", "ok"),
        ("c5", "contradicted", "contradicted", "ok"),
        ("c6", "partially_supported", "unsupported", "ok"),
        ("c7", "unsupported", "unsupported", "ok"),
        ("c8", "supported", "supported", "parse_error"),
        ("c9", "unsupported", None, "api_error"),
        ("c10", None, "supported", "ok"),
    ]
    return [ver("a", cid, lab, gold=g, status=st) for cid, g, lab, st in rows]


def test_gold_metrics_exclude_hand_computed() -> None:
    rep = gold_metrics(gold_example())
    r = rep.row("v1")
    # TP 1 (c1), FN 2 (c2, c3), FP 1 (c4), TN 3 (c5, c6, c7); n = 7
    assert (r.tp, r.fn, r.fp, r.tn, r.n) == (1, 2, 1, 3, 7)
    assert (r.n_gold, r.n_scored, r.n_unscored, r.n_excluded_unscored) == (9, 7, 2, 2)
    assert r.n_no_gold == 1
    assert r.accuracy == approx(4 / 7)  # (1 + 3) / 7
    # recall 1/3, specificity 3/4 -> (1/3 + 3/4) / 2 = 13/24
    assert r.balanced_accuracy == approx(13 / 24)
    assert r.precision == approx(1 / 2)  # 1 / (1 + 1)
    assert r.recall == approx(1 / 3)
    assert r.f1 == approx(2 / 5)  # 2*1 / (2*1 + 1 + 2)
    assert r.confusion == {
        "supported": {"supported": 1, "not_supported": 2},
        "not_supported": {"supported": 1, "not_supported": 3},
    }
    cm = r.confusion_frame()
    assert cm.loc["supported", "not_supported"] == 2 and cm.loc["not_supported", "supported"] == 1
    assert (cm.index.name, cm.columns.name) == ("gold", "predicted")
    pd.testing.assert_frame_equal(rep.confusion_frame("v1"), cm)
    # raw labels, unscored ones shown by status (never as their stray label)
    assert r.label_confusion["supported"] == {
        "supported": 1,
        "unsupported": 1,
        "contradicted": 1,
        "parse_error": 1,
    }
    assert r.label_confusion["unsupported"] == {"unsupported": 1, "api_error": 1}
    frame = rep.to_frame()
    assert "confusion" not in frame.columns and frame.tp.tolist() == [1]
    assert list(frame.columns) == [c for c in GoldRow.model_fields if "confusion" not in c]


def test_gold_metrics_unscored_counted_wrong() -> None:
    r = gold_metrics(gold_example(), unscored="wrong").row("v1")
    # c8 (gold supported) -> FN; c9 (gold unsupported) -> FP
    # TP 1, FN 2 + 1 = 3, FP 1 + 1 = 2, TN 3; n = 9
    assert (r.tp, r.fn, r.fp, r.tn, r.n) == (1, 3, 2, 3, 9)
    assert (r.n_unscored, r.n_excluded_unscored) == (2, 0)
    assert r.accuracy == approx(4 / 9)
    # recall 1/4, specificity 3/5 -> (0.25 + 0.6) / 2 = 0.425
    assert r.balanced_accuracy == approx(0.425)
    assert r.precision == approx(1 / 3)
    assert r.f1 == approx(2 / 7)  # 2 / (2 + 2 + 3)


def test_gold_mapping_parameter_and_claim_records() -> None:
    # partially_supported counted positive: c6 (pred unsupported) becomes FN
    r = gold_metrics(gold_example(), positive=("supported", "partially_supported")).row("v1")
    assert (r.tp, r.fn, r.fp, r.tn) == (1, 3, 1, 2)
    # gold from claim records; a gold claim the verifier never saw is unscored ("missing")
    vs = [ver("a", "c1", "supported"), ver("a", "c2", "unsupported")]
    cs = [
        claim("a", "c1", "supported"),
        claim("a", "c2", "supported"),
        claim("a", "c3", "contradicted"),
    ]
    r = gold_metrics(vs, claims=cs).row("v1")
    assert (r.tp, r.fn, r.n_unscored) == (1, 1, 1)
    assert r.label_confusion["contradicted"] == {"missing": 1}
    assert r.balanced_accuracy is None  # no negative gold claim among the scored ones
    with pytest.raises(ValueError, match="conflicting gold"):
        gold_metrics(
            [ver("a", "c1", "supported", gold="supported")], claims=[claim("a", "c1", "u")]
        )


# ----------------------------------------------------------------- correlation


def test_spearman_with_ties_hand_computed() -> None:
    # x = [1, 2, 2, 3] -> ranks [1, 2.5, 2.5, 4]; y = [1, 3, 2, 4] -> ranks [1, 3, 2, 4]
    # centred (mean 2.5): [-1.5, 0, 0, 1.5] and [-1.5, 0.5, -0.5, 1.5]
    # sum xy = 2.25 + 2.25 = 4.5; sum x^2 = 4.5; sum y^2 = 5 -> 4.5 / sqrt(22.5) = 3 / sqrt(10)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == approx(3 / math.sqrt(10))
    assert average_ranks([3, 1, 3, 2, 3]).tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert spearman([1, 2, 3], [10, 20, 30]) == approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # constant side
    assert spearman([1], [2]) is None


def test_factuality_correlation_given_gold() -> None:
    # predicted F: a 0/1 = 0, b 1/2, c 1/2, d 1/1; e has only a failed claim (F undefined)
    vs = [
        ver("a", "a:0", "unsupported"),
        ver("b", "b:0", "supported"),
        ver("b", "b:1", "contradicted"),
        ver("c", "c:0", "unsupported"),
        ver("c", "c:1", "supported"),
        ver("d", "d:0", "supported"),
        ver("e", "e:0", None, status="parse_error"),
        ver("f", "f:0", "supported"),  # no gold value
    ]
    gold = {"a": 0.1, "b": 0.6, "c": 0.3, "d": 0.9, "e": 0.5}
    rep = factuality_correlation(vs, gold, n_boot=300)
    r = rep.rows[0]
    # ranks of F: [1, 2.5, 2.5, 4]; ranks of gold: [1, 3, 2, 4] -> 3 / sqrt(10), as above
    assert r.spearman == approx(3 / math.sqrt(10))
    assert (r.n, r.n_predicted, r.n_gold) == (4, 5, 5)
    assert r.spearman_lo is not None and r.spearman_hi is not None
    assert -1.0 <= r.spearman_lo <= r.spearman_hi <= 1.0
    assert rep.gold_source == "given"
    assert rep == factuality_correlation(vs, gold, n_boot=300)  # seeded
    # (dataset, answer_id) keys are equivalent
    keyed = {(DS, k): v for k, v in gold.items()}
    assert factuality_correlation(vs, keyed, n_boot=300).rows == rep.rows
    assert list(rep.to_frame().columns)[:2] == ["verifier_id", "model"]


def test_factuality_correlation_gold_from_claim_labels() -> None:
    # gold F: a 0/1, b 1/2, c 1/1; predicted F: a 0/1, b 1/1 (one claim failed), c 1/1
    vs = [
        ver("a", "a:0", "unsupported", gold="not_supported"),
        ver("b", "b:0", "supported", gold="supported"),
        ver("b", "b:1", None, status="truncated", gold="contradicted"),
        ver("c", "c:0", "supported", gold="supported"),
    ]
    r = factuality_correlation(vs, n_boot=100).rows[0]
    # pred ranks [1, 2.5, 2.5]; gold ranks [1, 2, 3]; centred (mean 2) [-1, .5, .5], [-1, 0, 1]
    # sum xy = 1 + 0 + 0.5 = 1.5; sum x^2 = 1.5; sum y^2 = 2 -> 1.5 / sqrt(3) = sqrt(3) / 2
    assert r.spearman == approx(math.sqrt(3) / 2)
    assert r.n == 3


# ------------------------------------------------------------------- agreement


def agreement_example() -> list[VerificationRecord]:
    """Claims 1..10 both scored; 11 only B scored; 12 only A; 13 neither.

    A: S S S S S U U U C C
    B: S S S U C U U S C U
    """
    a = ["supported"] * 5 + ["unsupported"] * 3 + ["contradicted"] * 2
    b = ["supported"] * 3 + ["unsupported", "contradicted", "unsupported", "unsupported"]
    b += ["supported", "contradicted", "unsupported"]
    recs = [ver("r", f"c{i}", lab, verifier="A") for i, lab in enumerate(a)]
    recs += [ver("r", f"c{i}", lab, verifier="B") for i, lab in enumerate(b)]
    recs += [
        ver("r", "c11", None, verifier="A", status="parse_error"),
        ver("r", "c11", "supported", verifier="B"),
        ver("r", "c12", "supported", verifier="A"),
        ver("r", "c13", None, verifier="A", status="refusal"),
        ver("r", "c13", None, verifier="B", status="api_error"),
    ]
    return recs


def test_agreement_kappa_hand_computed() -> None:
    recs = agreement_example()
    rep = agreement(recs, verifier_a="A", verifier_b="B")
    # confusion (A rows, B columns): S: 3 1 1 / U: 1 2 0 / C: 0 1 1 -> p_o = 6/10
    # marginals A .5 .3 .2, B .4 .4 .2 -> p_e = .20 + .12 + .04 = .36
    # kappa = (.6 - .36) / (1 - .36) = .24 / .64 = 0.375
    assert rep.confusion == {
        "supported": {"supported": 3, "unsupported": 1, "contradicted": 1},
        "unsupported": {"supported": 1, "unsupported": 2, "contradicted": 0},
        "contradicted": {"supported": 0, "unsupported": 1, "contradicted": 1},
    }
    assert (rep.n, rep.n_agree) == (10, 6)
    assert rep.raw_agreement == approx(0.6)
    assert rep.kappa == approx(0.375)
    assert (rep.n_claims, rep.n_only_a_scored, rep.n_only_b_scored, rep.n_neither_scored) == (
        13,
        1,
        1,
        1,
    )
    assert rep.confusion_frame().loc["supported", "contradicted"] == 1
    assert isinstance(rep, AgreementReport) and len(rep.to_frame()) == 1

    # binary: S vs not S. A: 5 S, 5 N; B on them: S S S N N | N N S N N
    # SS 3, SN 2, NS 1, NN 4 -> p_o = .7; p_e = .5*.4 + .5*.6 = .5 -> kappa = .2/.5 = 0.4
    binary = agreement(recs, verifier_a="A", verifier_b="B", binary=True)
    assert binary.kappa == approx(0.4) and binary.raw_agreement == approx(0.7)

    # two separate record sets, one verifier each: no names needed
    split = agreement(
        [r for r in recs if r.verifier_id == "A"], [r for r in recs if r.verifier_id == "B"]
    )
    assert split == rep
    with pytest.raises(ValueError, match="name"):
        agreement(recs)


def test_cohen_kappa_function() -> None:
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "a", "b", "b"]) == approx(1.0)
    # p_o = 0, p_e = .5 -> (0 - .5) / .5 = -1
    assert cohen_kappa(["a", "b"], ["b", "a"]) == approx(-1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # p_e == 1: undefined
    assert cohen_kappa([], []) is None


def test_spearman_matches_pandas_on_tie_heavy_samples() -> None:
    # pandas' DataFrame.corr(method="spearman") is its own Cython code (no scipy)
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 25))
        x = rng.integers(0, 5, n).astype(float)
        y = rng.integers(0, 4, n).astype(float)
        expected = pd.DataFrame({"x": x, "y": y}).corr(method="spearman").loc["x", "y"]
        got = spearman(x, y)
        assert (got is None and np.isnan(expected)) or got == approx(expected, abs=1e-12)
        assert average_ranks(x).tolist() == pd.Series(x).rank().tolist()
