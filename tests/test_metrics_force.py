"""ForceBench metrics: hand-computed MVR/FS, failure policy, grouping, bootstrap CIs."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

from assay.core.records import JudgmentRecord
from assay.metrics import (
    ForceReport,
    ForceRow,
    bootstrap_ci,
    force_metrics,
    force_metrics_frame,
    pair_table,
)
from assay.metrics._bootstrap import bootstrap_mean_cis

approx = pytest.approx


def rec(
    pair_id: str,
    member: Any,
    judge_id: str,
    score: float | None,
    *,
    status: Any = "ok",
    axis: Any = "scope",
    severity: int | None = 1,
    dataset: str = "fb",
    **kw: Any,
) -> JudgmentRecord:
    return JudgmentRecord(
        dataset=dataset,
        pair_id=pair_id,
        member=member,
        judge_id=judge_id,
        axis=axis,
        severity=severity,
        status=status,
        score=score,
        **kw,
    )


def pair(
    pair_id: str, judge_id: str, s_cal: float | None, s_raised: float | None, **kw: Any
) -> list[JudgmentRecord]:
    return [
        rec(pair_id, "calibrated", judge_id, s_cal, **kw),
        rec(pair_id, "raised", judge_id, s_raised, **kw),
    ]


J1_META: dict[str, Any] = {"model": "openai/gpt-x", "prompt_id": "force", "prompt_version": 2}


def example_records() -> list[JudgmentRecord]:
    """Four pairs, two judges.

    pair  axis      sev   | j1 cal  raised          | j2 cal  raised
    p1    scope     1     | 0.9     0.2             | 0.6     0.4
    p2    scope     2     | 0.5     0.5  (tie)      | 0.8     0.3
    p3    modality  None  | 0.8     0.9             | 0.7     (never judged)
    p4    modality  2     | 0.7     parse_error     | 0.1     api_error, then retried: 0.0
    """
    recs: list[JudgmentRecord] = []
    # judge j1 (an LLM judge: carries model/prompt metadata)
    recs += pair("p1", "j1", 0.9, 0.2, axis="scope", severity=1, **J1_META)
    recs += pair("p2", "j1", 0.5, 0.5, axis="scope", severity=2, **J1_META)
    recs += pair("p3", "j1", 0.8, 0.9, axis="modality", severity=None, **J1_META)
    recs += [
        rec("p4", "calibrated", "j1", 0.7, axis="modality", severity=2, **J1_META),
        rec(
            "p4",
            "raised",
            "j1",
            None,
            status="parse_error",
            axis="modality",
            severity=2,
            **J1_META,
        ),
    ]
    # judge j2 (a baseline: no model/prompt metadata)
    recs += pair("p1", "j2", 0.6, 0.4, axis="scope", severity=1)
    recs += pair("p2", "j2", 0.8, 0.3, axis="scope", severity=2)
    recs += [rec("p3", "calibrated", "j2", 0.7, axis="modality", severity=None)]
    recs += [
        rec("p4", "calibrated", "j2", 0.1, axis="modality", severity=2),
        rec("p4", "raised", "j2", None, status="api_error", axis="modality", severity=2),
        # the same key again (a retry): the last record wins
        rec("p4", "raised", "j2", 0.0, axis="modality", severity=2),
    ]
    return recs


def rows_by(report: ForceReport, judge_id: str) -> dict[tuple[str, str], ForceRow]:
    return {
        (r.group_by, r.group): r
        for r in report.rows
        if r.judge_id == judge_id and r.dataset == "all"
    }


# ------------------------------------------------------------------------ pair table


def test_pair_table_hand_computed() -> None:
    t = pair_table(example_records()).set_index(["judge_id", "pair_id"])
    assert len(t) == 8  # 2 judges x 4 pairs
    assert list(t.columns) == [
        "dataset",
        "axis",
        "severity",
        "s_cal",
        "s_raised",
        "status_cal",
        "status_raised",
        "failed",
        "violation",
        "margin",
    ]

    # j1 p1: 0.2 < 0.9 -> no violation, margin 0.9 - 0.2 = 0.7
    r = t.loc[("j1", "p1")]
    assert (r.violation, r.failed, r.margin) == (0, False, approx(0.7))
    # j1 p2: tie 0.5 >= 0.5 -> violation, margin 0
    r = t.loc[("j1", "p2")]
    assert (r.violation, r.failed, r.margin) == (1, False, 0.0)
    # j1 p3: 0.9 >= 0.8 -> violation, margin 0.8 - 0.9 = -0.1
    r = t.loc[("j1", "p3")]
    assert (r.violation, r.failed, r.margin) == (1, False, approx(-0.1))
    # j1 p4: raised member parse_error -> failed: violation 1, margin 0
    r = t.loc[("j1", "p4")]
    assert (r.violation, r.failed, r.margin) == (1, True, 0.0)
    assert (r.status_cal, r.status_raised) == ("ok", "parse_error")
    assert r.s_cal == 0.7 and np.isnan(r.s_raised)

    # j2 p3: raised member never judged -> failed, status None, score NaN
    r = t.loc[("j2", "p3")]
    assert (r.violation, r.failed, r.margin) == (1, True, 0.0)
    assert r.status_raised is None and np.isnan(r.s_raised)
    # j2 p4: api_error superseded by the later ok record -> 0.0 < 0.1, margin 0.1
    r = t.loc[("j2", "p4")]
    assert (r.violation, r.failed, r.margin) == (0, False, approx(0.1))
    assert r.status_raised == "ok"

    # axis / severity carried per pair; None severity stays missing
    assert t.loc[("j1", "p3")].axis == "modality"
    assert pd.isna(t.loc[("j1", "p3")].severity)
    assert t.loc[("j2", "p2")].severity == 2


def test_last_record_wins_in_both_directions() -> None:
    # ok then error -> the error wins: the pair is failed
    recs = [*pair("p1", "j", 0.9, 0.1), rec("p1", "raised", "j", None, status="refusal")]
    t = pair_table(recs)
    assert t.failed.tolist() == [True]
    assert t.status_raised.tolist() == ["refusal"]
    # error then ok -> the ok wins
    recs = [rec("p1", "raised", "j", None, status="truncated"), *pair("p1", "j", 0.9, 0.1)]
    t = pair_table(recs)
    assert t.failed.tolist() == [False]
    assert t.margin.tolist() == [approx(0.8)]


def test_ok_status_with_none_score_is_failed() -> None:
    t = pair_table(pair("p1", "j", 0.9, None))
    assert (t.failed[0], t.violation[0], t.margin[0]) == (True, 1, 0.0)


# --------------------------------------------------------------------------- metrics


def test_overall_hand_computed() -> None:
    report = force_metrics(example_records(), n_boot=200)
    j1 = rows_by(report, "j1")[("overall", "all")]
    # violations 0,1,1,1 -> MVR 3/4; margins 0.7, 0, -0.1, 0 -> FS 0.6/4 = 0.15
    assert (j1.n, j1.n_failed) == (4, 1)  # N unchanged by the failed pair p4
    assert j1.mvr == approx(0.75)
    assert j1.fs == approx(0.15)
    assert (j1.model, j1.prompt_id, j1.prompt_version) == ("openai/gpt-x", "force", 2)

    j2 = rows_by(report, "j2")[("overall", "all")]
    # violations 0,0,1(p3 missing),0 -> MVR 1/4; margins 0.2, 0.5, 0, 0.1 -> FS 0.8/4 = 0.2
    assert (j2.n, j2.n_failed) == (4, 1)
    assert j2.mvr == approx(0.25)
    assert j2.fs == approx(0.2)
    assert (j2.model, j2.prompt_id, j2.prompt_version) == (None, None, None)


def test_per_axis_hand_computed() -> None:
    rows = rows_by(force_metrics(example_records(), n_boot=200), "j1")
    scope, modality = rows[("axis", "scope")], rows[("axis", "modality")]
    # scope = p1, p2: violations 0,1 -> 0.5; margins 0.7, 0 -> 0.35
    assert (scope.n, scope.n_failed, scope.mvr, scope.fs) == approx((2, 0, 0.5, 0.35))
    # modality = p3, p4: violations 1,1 -> 1.0; margins -0.1, 0 -> -0.05
    assert (modality.n, modality.n_failed) == (2, 1)
    assert (modality.mvr, modality.fs) == approx((1.0, -0.05))
    # MVR is constant 1 on modality -> its CI collapses
    assert modality.mvr_lo == modality.mvr_hi == 1.0
    # only axes that occur are reported
    assert {g for (by, g) in rows if by == "axis"} == {"scope", "modality"}


def test_per_severity_hand_computed() -> None:
    report = force_metrics(example_records(), n_boot=200)
    rows = rows_by(report, "j1")
    s1, s2, unrated = (
        rows[("severity", "1")],
        rows[("severity", "2")],
        rows[("severity", "unrated")],
    )
    # "1" = p1: violation 0, margin 0.7 (N=1 -> CI collapses to the point)
    assert (s1.n, s1.mvr, s1.fs) == approx((1, 0.0, 0.7))
    assert (s1.mvr_lo, s1.mvr_hi, s1.fs_lo, s1.fs_hi) == (0.0, 0.0, s1.fs, s1.fs)
    # "2" = p2 (tie), p4 (failed): violations 1,1 -> 1.0; margins 0, 0 -> 0.0
    assert (s2.n, s2.n_failed, s2.mvr, s2.fs) == (2, 1, 1.0, 0.0)
    assert (s2.mvr_lo, s2.mvr_hi, s2.fs_lo, s2.fs_hi) == (1.0, 1.0, 0.0, 0.0)
    # "unrated" = p3 (severity None): violation 1, margin -0.1
    assert (unrated.n, unrated.mvr, unrated.fs) == approx((1, 1.0, -0.1))

    # row order: overall, axes (enum order), severities ascending then "unrated"
    order = [(r.group_by, r.group) for r in report.rows if r.judge_id == "j1"]
    assert order == [
        ("overall", "all"),
        ("axis", "modality"),
        ("axis", "scope"),
        ("severity", "1"),
        ("severity", "2"),
        ("severity", "unrated"),
    ]
    assert [r.judge_id for r in report.rows] == ["j1"] * 6 + ["j2"] * 6


def test_pair_universe_is_shared_across_judges() -> None:
    # j3 judged only p1 (0.9 > 0.3); the run has 4 pairs, so p2..p4 are failed for j3.
    recs = [*example_records(), *pair("p1", "j3", 0.9, 0.3, axis="scope", severity=1)]
    row = rows_by(force_metrics(recs, n_boot=100), "j3")[("overall", "all")]
    # violations 0,1,1,1 -> 0.75; margins 0.6, 0, 0, 0 -> 0.15
    assert (row.n, row.n_failed) == (4, 3)
    assert row.mvr == approx(0.75)
    assert row.fs == approx(0.15)
    # adding j3 does not change j1's numbers or CIs (per-judge random streams)
    before = rows_by(force_metrics(example_records(), n_boot=100), "j1")
    after = rows_by(force_metrics(recs, n_boot=100), "j1")
    assert before == after


def test_pairs_from_several_datasets_are_distinct() -> None:
    # same pair_id in two datasets: two pairs
    recs = [*pair("1", "j", 0.9, 0.1, dataset="a"), *pair("1", "j", 0.1, 0.9, dataset="b")]
    row = rows_by(force_metrics(recs, n_boot=50), "j")[("overall", "all")]
    # violations 0,1 -> 0.5; margins 0.8, -0.8 -> 0.0
    assert (row.n, row.mvr, row.fs) == approx((2, 0.5, 0.0))


def test_empty_input_reports_nothing() -> None:
    report = force_metrics([])
    assert report.rows == []
    frame = report.to_frame()
    assert frame.empty and list(frame.columns) == list(ForceRow.model_fields)
    assert pair_table([]).empty


def test_dataframe_input_equivalence() -> None:
    recs = example_records()
    df = pd.DataFrame([r.model_dump(mode="json") for r in recs])
    pd.testing.assert_frame_equal(pair_table(df), pair_table(recs))
    assert force_metrics(df, n_boot=300) == force_metrics(recs, n_boot=300)
    pd.testing.assert_frame_equal(
        force_metrics_frame(df, n_boot=300), force_metrics(recs, n_boot=300).to_frame()
    )


def test_report_settings_and_frame() -> None:
    report = force_metrics(example_records(), n_boot=123, seed=7, confidence=0.9)
    assert (report.n_boot, report.seed, report.confidence) == (123, 7, 0.9)
    frame = report.to_frame()
    assert len(frame) == len(report.rows) == 12
    assert list(frame.columns) == list(ForceRow.model_fields)
    assert ForceReport.model_validate_json(report.model_dump_json()) == report


@pytest.mark.parametrize(
    "kw", [{"n_boot": -1}, {"seed": -1}, {"confidence": 1.0}, {"confidence": 0.0}]
)
def test_bad_settings_rejected(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        force_metrics(example_records(), **kw)


# ------------------------------------------------------------------------- bootstrap


def random_records(n_pairs: int, judges: int, seed: int = 1) -> list[JudgmentRecord]:
    rng = np.random.default_rng(seed)
    axes = ["relation", "modality", "scope", "temporal", "numeric"]
    recs = []
    for j in range(judges):
        for i in range(n_pairs):
            kw: dict[str, Any] = {"axis": axes[i % 5], "severity": [1, 2, 3, None][i % 4]}
            s_cal, s_raised = float(rng.random()), float(rng.random())
            recs += pair(str(i), f"j{j}", s_cal, s_raised, **kw)
    return recs


def test_bootstrap_deterministic_given_seed() -> None:
    recs = random_records(200, 2)
    a = force_metrics(recs, n_boot=500, seed=3)
    b = force_metrics(recs, n_boot=500, seed=3)
    c = force_metrics(recs, n_boot=500, seed=4)
    assert a == b
    cis = [(r.mvr_lo, r.mvr_hi, r.fs_lo, r.fs_hi) for r in a.rows]
    other = [(r.mvr_lo, r.mvr_hi, r.fs_lo, r.fs_hi) for r in c.rows]
    assert cis != other
    # points don't depend on the seed
    assert [(r.mvr, r.fs) for r in a.rows] == [(r.mvr, r.fs) for r in c.rows]


def test_ci_contains_point_estimate() -> None:
    report = force_metrics(random_records(200, 3), n_boot=1000, seed=0)
    for r in report.rows:
        assert r.mvr_lo <= r.mvr <= r.mvr_hi
        assert r.fs_lo <= r.fs <= r.fs_hi
        assert r.mvr_lo >= 0.0 and r.mvr_hi <= 1.0
    overall = rows_by(report, "j0")[("overall", "all")]
    assert overall.mvr_lo < overall.mvr_hi  # non-degenerate for varied data


def test_ci_narrows_with_lower_confidence() -> None:
    x = np.random.default_rng(0).random(100)
    lo95, hi95 = bootstrap_ci(x, seed=1, confidence=0.95)
    lo50, hi50 = bootstrap_ci(x, seed=1, confidence=0.50)
    assert lo95 <= lo50 <= x.mean() <= hi50 <= hi95


def test_bootstrap_ci_collapses_for_constant_data_and_single_value() -> None:
    assert bootstrap_ci([0.3] * 50) == approx((0.3, 0.3))
    lo, hi = bootstrap_ci([0.1] * 7)
    assert lo == hi == float(np.mean([0.1] * 7))
    assert bootstrap_ci([0.42]) == (0.42, 0.42)
    # per column: a constant column collapses even if another varies
    lo_a, hi_a = bootstrap_mean_cis(np.column_stack([np.ones(30), np.arange(30.0)]))
    assert (lo_a[0], hi_a[0]) == (1.0, 1.0)
    assert lo_a[1] < hi_a[1]


def test_bootstrap_ci_seeding_and_validation() -> None:
    x = np.random.default_rng(5).random(40)
    assert bootstrap_ci(x, seed=11) == bootstrap_ci(x, seed=11)
    assert bootstrap_ci(x, seed=11) != bootstrap_ci(x, seed=12)
    # a column's CI is the same alone or alongside others (shared row draws)
    lo, hi = bootstrap_mean_cis(np.column_stack([x, x[::-1]]), seed=11)
    assert (lo[0], hi[0]) == bootstrap_ci(x, seed=11)
    for bad in ([], [np.nan, 1.0]):
        with pytest.raises(ValueError):
            bootstrap_ci(bad)
    with pytest.raises(ValueError):
        bootstrap_ci(x, n_boot=0)
    with pytest.raises(ValueError):
        bootstrap_ci(x, confidence=1.5)


def test_chunked_resampling_matches_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    # force many small chunks: still deterministic and in range
    import assay.metrics._bootstrap as bs
    import assay.metrics._resampling as rs

    x = np.random.default_rng(2).random(500)
    monkeypatch.setattr(rs, "_MAX_CELLS", 1000)
    lo, hi = bs.bootstrap_ci(x, n_boot=300, seed=0)
    assert (lo, hi) == bs.bootstrap_ci(x, n_boot=300, seed=0)
    assert lo < x.mean() < hi


def test_speed_ten_judges_thousand_pairs() -> None:
    recs = random_records(1000, 10)
    t0 = time.perf_counter()
    report = force_metrics(recs)  # default n_boot=1000
    elapsed = time.perf_counter() - t0
    assert len(report.rows) == 10 * (1 + 5 + 4)
    assert elapsed < 2.0, elapsed  # ~0.4 s on a laptop-class CPU; generous bound for CI
