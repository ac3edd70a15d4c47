"""Gold and raters' labels that do not fit the judges of an items dataset.

A gold value outside a judge's label set (after the case/separator normalisation labels
get everywhere) would score every item wrong and print accuracy 0.000 as if measured:
the run refuses it before any judgment, naming the column, the values and the judge's
labels, unless `gold_map` maps them. Empty gold cells are reported once, and every
statistic carries the n it is computed on (see test_items_report.py for the tables).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from sklearn.metrics import accuracy_score, cohen_kappa_score

from assay.core.judging import JudgeItem, Judgment, Status
from assay.core.records import ItemJudgmentRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, iter_jsonl, read_json
from assay.datasets import ItemsDatasetOptions, load_items
from assay.errors import AssayError
from assay.runs import Runner, RunOptions, load_spec

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "examples" / "items" / "claims.csv"
RUN_FILES = ("manifest.json", "item_judgments.jsonl", "items.jsonl", "metrics.json")


def _rows() -> list[dict[str, str]]:
    with CLAIMS.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


YES_NO = {"supported": "yes", "unsupported": "no"}


def _spec(tmp: Path, extra: str = "", *, raters: str = '["r1", "r2"]') -> Path:
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""name = "gold"
output_dir = "{tmp / "run"}"
bootstrap = 100
[[datasets]]
kind = "items"
name = "claims"
path = "claims.csv"
gold_label_column = "label"
raters = {raters}
variables = {{ claim = "response", evidence = "context" }}
{extra}
[[baselines]]
name = "token-overlap"
""",
        encoding="utf-8",
    )
    return spec


def _run_files(tmp: Path) -> list[Path]:
    return [p for p in tmp.rglob("*") if p.name in RUN_FILES]


@pytest.mark.parametrize("command", ["run", "validate"])
def test_yes_no_gold_against_supported_unsupported_is_refused_before_judging(
    tmp_path: Path, command: str
) -> None:
    _write(tmp_path / "claims.csv", [{**r, "label": YES_NO[r["label"]]} for r in _rows()])
    flags = ["--no-progress"] if command == "run" else []
    code, out, err = invoke([command, str(_spec(tmp_path)), *flags])
    assert code == 2, out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    line = lines[0]
    for needle in ("claims.csv:2", "'label'", "'yes'", "'no'", "baseline:token-overlap"):
        assert needle in line, (needle, line)
    assert "supported, unsupported" in line and "gold_map" in line, line
    assert _run_files(tmp_path) == []


def test_a_rater_column_outside_the_labels_is_refused_too(tmp_path: Path) -> None:
    rows = [{**r, "r2": {"supported": "Y", "unsupported": "N"}[r["r2"]]} for r in _rows()]
    _write(tmp_path / "claims.csv", rows)
    code, _, err = invoke(["run", str(_spec(tmp_path)), "--no-progress"])
    assert code == 2, err
    assert "'r2'" in err and "'Y'" in err and "'N'" in err and "rater" in err, err
    assert _run_files(tmp_path) == []


def test_gold_is_compared_after_the_label_normalisation(tmp_path: Path) -> None:
    """`Supported `, `UNSUPPORTED` are the judge's labels, as they are for metrics."""
    case = {"supported": " Supported ", "unsupported": "UNSUPPORTED"}
    _write(tmp_path / "claims.csv", [{**r, "label": case[r["label"]]} for r in _rows()])
    code, out, err = invoke(["validate", str(_spec(tmp_path))])
    assert code == 0, out + err


def test_gold_map_maps_gold_and_raters_and_the_accuracy_is_right(tmp_path: Path) -> None:
    rows = _rows()
    mapped = [{**r, "label": YES_NO[r["label"]].upper(), "r1": YES_NO[r["r1"]]} for r in rows]
    _write(tmp_path / "claims.csv", mapped)
    spec = _spec(tmp_path, 'gold_map = { yes = "supported", no = "unsupported" }')
    code, out, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, out + err
    run = tmp_path / "run"
    by_id = {r.item_id: r.label for r in iter_jsonl(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)}
    expected = accuracy_score([r["label"] for r in rows], [by_id[r["id"]] for r in rows])
    metrics = read_json(run / "metrics.json")["items"]
    assert metrics["rows"][0]["accuracy"] == pytest.approx(expected)
    assert 0.5 < expected < 1.0  # a real number, not the 0.000 of unmapped labels
    kappa = dict(
        zip(metrics["raters"][0]["kappa_names"], metrics["raters"][0]["kappa"][0], strict=True)
    )
    r1 = cohen_kappa_score([r["r1"] for r in rows], [by_id[r["id"]] for r in rows])
    assert kappa["r1"] == pytest.approx(r1) and r1 != 0
    manifest = read_json(run / "manifest.json")
    assert manifest["spec"]["datasets"][0]["gold_map"] == {"yes": "supported", "no": "unsupported"}


def test_gold_map_to_a_label_the_judge_does_not_have_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "claims.csv", [{**r, "label": YES_NO[r["label"]]} for r in _rows()])
    spec = _spec(tmp_path, 'gold_map = { yes = "true", no = "unsupported" }')
    code, _, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 2 and "'true'" in err and "gold_map" in err, err


def test_gold_map_keys_that_normalise_alike_are_refused(tmp_path: Path) -> None:
    _write(tmp_path / "claims.csv", _rows())
    spec = _spec(tmp_path, 'gold_map = { Yes = "supported", " yes" = "unsupported" }')
    code, _, err = invoke(["validate", str(spec)])
    assert code == 2 and "gold_map" in err and "spec.toml" in err, err


def test_empty_gold_cells_are_one_warning_line_and_the_n_of_the_statistics(
    tmp_path: Path,
) -> None:
    rows = [{**r, "label": "" if i < 5 else r["label"]} for i, r in enumerate(_rows())]
    _write(tmp_path / "claims.csv", rows)
    code, out, err = invoke(["run", str(_spec(tmp_path)), "--no-progress"])
    assert code == 0, out + err
    warnings = [ln for ln in err.splitlines() if "no gold" in ln]
    assert warnings == [
        "warning: 5 of 16 items of dataset 'claims' have no gold label (column 'label'); "
        "gold label statistics are over the other 11 at most"
    ], err
    row = read_json(tmp_path / "run" / "metrics.json")["items"]["rows"][0]
    assert row["n_items"] == 16 and row["n_gold"] == 11
    assert {row["n_of"][k] for k in ("accuracy", "cohen_kappa", "macro_f1")} == {11}
    manifest = read_json(tmp_path / "run" / "manifest.json")
    assert any("5 of 16" in w for w in manifest["warnings"]), json.dumps(manifest["warnings"])


def test_gold_scores_outside_the_judges_scale_are_a_warning_line(tmp_path: Path) -> None:
    """Gold scores on 1-5 against a judge scoring in [0, 1]: the MAE compares two scales
    (correlations do not care), so the run says so once before judging."""
    rows = [{**r, "stars": str(1 + i % 5)} for i, r in enumerate(_rows())]
    _write(tmp_path / "claims.csv", rows)
    code, out, err = invoke(
        ["run", str(_spec(tmp_path, 'gold_score_column = "stars"')), "--no-progress"]
    )
    assert code == 0, out + err
    lines = [ln for ln in err.splitlines() if "scale" in ln]
    assert lines == [
        "warning: gold scores of dataset 'claims' (column 'stars') span 1–5, outside the "
        "scale 0–1 of judge 'baseline:token-overlap': its MAE compares two scales "
        "(correlations do not depend on the scale)"
    ], err


def test_gold_scores_on_the_judges_scale_say_nothing(tmp_path: Path) -> None:
    rows = [{**r, "stars": str((i % 5) / 4)} for i, r in enumerate(_rows())]
    _write(tmp_path / "claims.csv", rows)
    code, out, err = invoke(
        ["run", str(_spec(tmp_path, 'gold_score_column = "stars"')), "--no-progress"]
    )
    assert code == 0 and "scale" not in err, out + err


def test_validate_lists_items_datasets_and_says_what_a_run_would_warn(tmp_path: Path) -> None:
    rows = [{**r, "label": "" if i < 5 else r["label"]} for i, r in enumerate(_rows())]
    _write(tmp_path / "claims.csv", rows)
    code, out, err = invoke(["validate", str(_spec(tmp_path))])
    assert code == 0, out + err
    assert f"{tmp_path / 'claims.csv'}: 16 items ok (claims)" in out.splitlines(), out
    assert "warning: 5 of 16 items of dataset 'claims' have no gold label" in out, out
    assert _run_files(tmp_path) == []


class _PassFail:
    """A Python judge that declares its labels: gold is checked against them too."""

    id = "pass-fail"
    labels = ("pass", "fail")

    def describe(self) -> dict[str, Any]:
        return {"kind": "python"}

    async def __call__(self, item: JudgeItem) -> Judgment:
        return Judgment(status=Status.OK, label="pass", score=1.0)


def test_a_python_judge_that_declares_labels_is_checked(tmp_path: Path) -> None:
    _write(tmp_path / "claims.csv", _rows())
    options = RunOptions(output_dir=str(tmp_path / "run"), progress=False, use_cache=False)
    with pytest.raises(AssayError, match=r"not labels of judge 'pass-fail' \(pass, fail\)"):
        Runner(load_spec(_spec(tmp_path)), options, judges=[_PassFail()])
    assert _run_files(tmp_path) == []


def test_gold_map_maps_gold_preferences_of_pairwise_items(tmp_path: Path) -> None:
    path = tmp_path / "duel.csv"
    path.write_text("id,response_a,response_b,winner\n1,x,y,Left\n2,x,y,right\n3,x,y,tie\n")
    opts = {"path": str(path), "task": "pairwise", "gold_preference_column": "winner"}
    with pytest.raises(AssayError, match=r"duel.csv:2: field 'winner': .*'Left'.*gold_map"):
        load_items(ItemsDatasetOptions(**opts))
    mapped = load_items(ItemsDatasetOptions(**opts, gold_map={"left": "A", "right": "B"}))
    assert [it.gold_preference for it in mapped.items] == ["A", "B", "tie"]
