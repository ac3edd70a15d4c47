"""Panel reliability (assay/metrics/_panel.py): alpha at every level and Fleiss' kappa of
all judges / judges + raters against the `krippendorff` package and statsmodels on
generated data with missing labels, each judge left out against a recomputation, the
batched bootstrap against the libraries resample by resample, and a planted bad judge
flagged; then through item_metrics and every report format."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from _cli import invoke
from _item_runs import write_item_run
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.metrics import ItemsReport, item_bootstrap_ci, item_metrics
from assay.metrics._panel import PanelRow, panel_rows
from assay.metrics._panel_stats import (
    CodeTable,
    alpha_from_coincidences,
    alpha_value,
    panel_intervals,
)

ORDER = ["1", "2", "4", "7"]  # numeric labels, unequal gaps: interval differs from ordinal


def _panel(seed: int, n: int = 120, accuracies: tuple[float, ...] = (0.9, 0.8, 0.7, 0.6)):
    """Judges that copy a true label with their accuracy, else guess; 15% missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(ORDER), n)
    judges = {}
    for j, acc in enumerate(accuracies):
        guess = rng.integers(0, len(ORDER), n)
        codes = np.where(rng.random(n) < acc, truth, guess)
        judges[f"j{j}"] = [None if rng.random() < 0.15 else ORDER[c] for c in codes]
    return judges


def _library_alpha(columns: dict[str, list[str | None]], level: str) -> float:
    """krippendorff.alpha on the labels: codes in ORDER (nominal/ordinal) or numbers."""
    if level == "interval":
        data = [[np.nan if v is None else float(v) for v in col] for col in columns.values()]
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    data = [[np.nan if v is None else ORDER.index(v) for v in col] for col in columns.values()]
    domain = list(range(len(ORDER)))
    return float(
        krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level)
    )


def _rows(judges, raters=None, **kw) -> dict[str, PanelRow]:
    kind = "judges+raters" if raters else "judges"
    kw = {"order": ORDER, "n_boot": 0, "seed": 0} | kw
    return {r.level: r for r in panel_rows("d", kind, judges, raters or {}, **kw)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_at_every_level_matches_krippendorff(seed: int) -> None:
    judges = _panel(seed)
    rows = _rows(judges)
    assert set(rows) == {"nominal", "ordinal", "interval"}
    for level, row in rows.items():
        assert row.krippendorff_alpha == pytest.approx(_library_alpha(judges, level), abs=1e-12)
    assert rows["ordinal"].krippendorff_alpha != pytest.approx(rows["interval"].krippendorff_alpha)


def test_levels_follow_what_the_labels_allow() -> None:
    words = {"a": ["yes", "no", "yes", None], "b": ["yes", "no", "no", "yes"]}
    assert set(_rows(words, order=None)) == {"nominal"}
    assert set(_rows(words, order=["no", "yes"])) == {"nominal", "ordinal"}
    numbers = {"a": ["1", "2", "2.5", None], "b": ["1", "2.5", "2", "1"]}
    assert set(_rows(numbers, order=None)) == {"nominal", "interval"}


def test_fleiss_kappa_matches_statsmodels_on_the_complete_items() -> None:
    judges = _panel(3)
    row = _rows(judges)["nominal"]
    table = np.array([[ORDER.index(v) if v else -1 for v in col] for col in judges.values()]).T
    complete = table[(table >= 0).all(axis=1)]
    counts, _ = aggregate_raters(complete, n_cat=len(ORDER))
    assert row.n_complete == len(complete) < row.n_items
    assert row.fleiss_kappa == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)
    assert _rows(judges)["ordinal"].fleiss_kappa is None  # a nominal statistic


def test_each_judge_left_out_is_a_recomputation_without_it() -> None:
    judges = _panel(4)
    for level, row in _rows(judges).items():
        assert [e.member for e in row.leave_one_out] == list(judges)
        for entry in row.leave_one_out:
            rest = {m: col for m, col in judges.items() if m != entry.member}
            expected = _library_alpha(rest, level)
            assert entry.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
            assert entry.delta == pytest.approx(expected - row.krippendorff_alpha, abs=1e-12)


def test_a_planted_bad_judge_is_the_one_flagged() -> None:
    judges = _panel(5, accuracies=(0.85, 0.85, 0.0, 0.85, 0.85))  # j2 only guesses
    rows = _rows(judges)
    for row in rows.values():
        assert row.lowers_most == "j2"
        best = max(row.leave_one_out, key=lambda e: e.delta or -1)
        assert best.member == "j2" and best.delta and best.delta > 0.1
    good = _panel(5, accuracies=(0.9, 0.9, 0.9))
    assert all(r.lowers_most is None for r in _rows({"a": good["j0"], "b": good["j1"]}).values())


def test_bootstrap_cis_equal_the_libraries_resample_by_resample() -> None:
    judges = _panel(6, n=60)
    codes = np.array(
        [[np.nan if v is None else ORDER.index(v) for v in c] for c in judges.values()]
    ).T
    values = np.array([float(v) for v in ORDER])
    tables = {
        "nominal": CodeTable(codes, 4),
        "ordinal": CodeTable(codes, 4),
        "interval": CodeTable(codes, 4, values),
    }
    ci = panel_intervals(tables, n_boot=150, seed=9)
    for level in ("nominal", "ordinal", "interval"):
        data = (
            codes
            if level != "interval"
            else np.where(np.isnan(codes), np.nan, values[np.nan_to_num(codes).astype(int)])
        )

        def lib(sample: np.ndarray, level: str = level) -> float:
            domain = None if level == "interval" else list(range(4))
            return float(
                krippendorff.alpha(
                    reliability_data=sample.T, value_domain=domain, level_of_measurement=level
                )
            )

        expected = item_bootstrap_ci(lib, data, n_boot=150, seed=9)
        assert ci[f"krippendorff_alpha_{level}"] == pytest.approx(expected, abs=1e-9)

    def lib_fleiss(sample: np.ndarray) -> float:
        complete = sample[~np.isnan(sample).any(axis=1)].astype(int)
        return float(fleiss_kappa(aggregate_raters(complete, n_cat=4)[0], method="fleiss"))

    assert ci["fleiss_kappa"] == pytest.approx(
        item_bootstrap_ci(lib_fleiss, codes, n_boot=150, seed=9), abs=1e-9
    )


def test_batched_alpha_of_one_matrix_is_the_library_value() -> None:
    rng = np.random.default_rng(7)
    pairs = rng.integers(0, 3, (40, 2))
    o = np.zeros((1, 3, 3))
    for a, b in pairs:  # two coders: each unit adds both ordered pairs
        o[0, a, b] += 1
        o[0, b, a] += 1
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(
            reliability_data=pairs.T, value_domain=[0, 1, 2], level_of_measurement=level
        )
        assert alpha_from_coincidences(o, level)[0] == pytest.approx(expected, abs=1e-12)


def test_cis_bracket_the_point_estimates() -> None:
    judges = _panel(8)
    raters = {"r1": _panel(8, accuracies=(0.9,))["j0"]}
    for row in _rows(judges, raters, n_boot=300, seed=1).values():
        lo, hi = row.ci["krippendorff_alpha"] or (np.nan, np.nan)
        assert lo <= row.krippendorff_alpha <= hi and lo < hi
        if row.level == "nominal":
            lo, hi = row.ci["fleiss_kappa"] or (np.nan, np.nan)
            assert lo <= (row.fleiss_kappa or np.nan) <= hi


def test_ordinal_alpha_treats_labels_outside_the_order_as_missing() -> None:
    judges = _panel(10)
    judges["j0"] = ["unclear" if i % 7 == 0 else v for i, v in enumerate(judges["j0"])]
    rows = _rows(judges)
    inside = {m: [v if v in ORDER else None for v in col] for m, col in judges.items()}
    assert rows["ordinal"].krippendorff_alpha == pytest.approx(_library_alpha(inside, "ordinal"))
    assert "interval" not in rows  # "unclear" is no number


def _records(judges: dict[str, list[str | None]]) -> list[ItemJudgmentRecord]:
    return [
        ItemJudgmentRecord(
            dataset="d", item_id=f"i{i}", judge_id=judge, label=label, status=Status.OK
        )
        for judge, labels in judges.items()
        for i, label in enumerate(labels)
        if label is not None
    ]


def test_item_metrics_panels_use_a_sampled_judges_majority_vote() -> None:
    judges = _panel(11, n=40, accuracies=(0.9, 0.8, 0.7, 0.7, 0.7))
    recs = {"a": judges["j0"], "b": judges["j1"]} | {
        f"s#{k}": judges[f"j{k + 2}"] for k in range(3)
    }
    items = [
        ItemRecord(dataset="d", item_id=f"i{i}", ratings={"r": v})
        for i, v in enumerate(judges["j0"])
    ]
    report = item_metrics(items, _records(recs), n_boot=50, seed=0)
    kinds = {(p.panel, p.level) for p in report.panels}
    assert kinds == {
        (k, lv) for k in ("judges", "judges+raters") for lv in ("nominal", "ordinal", "interval")
    }
    judges_row = next(p for p in report.panels if p.panel == "judges" and p.level == "nominal")
    assert judges_row.members == ["a", "b", "s#majority"]
    assert next(p for p in report.panels if p.panel == "judges+raters").members[-1] == "r"
    assert ItemsReport.model_validate({"rows": [], "n_boot": 0, "seed": 0}).panels == []


def test_panels_in_every_report_format(tmp_path: Path) -> None:
    judges = _panel(12, n=30, accuracies=(0.9, 0.9, 0.1))
    items = [{"item_id": f"i{i}", "ratings": {"r": v}} for i, v in enumerate(judges["j0"])]
    judgments = [r.model_dump() for r in _records(judges)]
    run = write_item_run(tmp_path / "run", "panels", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0
    code, markdown, err = invoke(["report", str(run), "-f", "markdown"])
    assert code == 0, err
    assert "Judge panels: agreement" in markdown and "each judge left out" in markdown
    assert "j2 (+" in markdown  # flagged with its Δ
    rows = list(csv.DictReader(io.StringIO(invoke(["report", str(run), "-f", "csv"])[1])))
    panels = [r for r in rows if r["section"] == "panels"]
    metrics = {(r["group"], r["group_by"], r["metric"]) for r in panels}
    assert ("judges", "panel", "krippendorff_alpha_nominal") in metrics
    assert ("judges+raters", "panel", "fleiss_kappa") in metrics
    assert any(
        r["metric"] == "lowers_most_nominal" and r["judge_or_verifier"] == "j2" for r in panels
    )
    data = json.loads(invoke(["report", str(run), "-f", "json"])[1])
    assert {p["panel"] for p in data["items"]["panels"]} == {"judges", "judges+raters"}
    assert invoke(["report", str(run), "-f", "html"])[0] == 0
    assert "Judge panels: agreement" in (run / "report.html").read_text(encoding="utf-8")


def test_compare_reports_the_panel_of_the_judges_compared(tmp_path: Path) -> None:
    from assay.compare import compare_runs, report_frames

    judges = _panel(13, n=30, accuracies=(0.9, 0.9, 0.1))
    items = [
        {"item_id": f"i{i}", "gold_label": v or "1", "ratings": {"r": v}}
        for i, v in enumerate(judges["j0"])
    ]
    judgments = [r.model_dump() for r in _records(judges)]
    run = write_item_run(tmp_path / "run", "panels", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0
    recorded = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["items"]["panels"]
    frames = report_frames(compare_runs([run], n_boot=100, seed=0))
    panels = frames["panels"].set_index(["panel", "level"])
    assert len(panels) == len(recorded) == 6
    for row in recorded:
        got = panels.loc[(row["panel"], row["level"])]
        assert got["krippendorff_alpha"] == pytest.approx(row["krippendorff_alpha"], abs=1e-12)
        assert got["lowers_most"] == row["lowers_most"] == "j2"
    left = frames["panels_left_out"]
    assert set(left["member"]) == {"j0", "j1", "j2"} and len(left) == 3 * 6
    code, markdown, err = invoke(["compare", str(run), "--n-boot", "50", "-f", "markdown"])
    assert code == 0, err
    assert "Judge panels: agreement" in markdown and "each judge left out" in markdown


def test_alpha_of_a_wide_panel_matches_krippendorff() -> None:
    """40 members: the row keys of `_panel_stats` are renumbered before they overflow."""
    rng = np.random.default_rng(14)
    codes = rng.integers(0, 4, (50, 40)).astype(float)
    codes[:, :20] = codes[:, [0]]  # half the panel agrees
    codes[rng.random(codes.shape) < 0.1] = np.nan
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(
            reliability_data=codes.T, value_domain=[0, 1, 2, 3], level_of_measurement=level
        )
        assert alpha_value(CodeTable(codes, 4), level) == pytest.approx(expected, abs=1e-12)
