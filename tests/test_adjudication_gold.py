"""Gold after adjudication: `assay compare --gold`, `assay report --gold` (items metrics
recomputed in memory), the person as the rater `adjudicated`, and `assay labels export`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run

import assay
from assay.adjudication import LABELS_FILE, AdjudicationError, append_adjudication, gold_overlay
from assay.compare import ComparisonReport, compare_runs
from assay.datasets import load_items
from assay.runs.rebuild._metrics import compute_metrics

A = ["yes"] * 8 + ["no"] * 2  # right on 8 of 10 against the dataset's all-"yes" gold
B = ["yes"] * 4 + ["no"] * 6  # right on 4


def _run(tmp_path: Path, name: str = "r") -> Path:
    run = write_item_run(
        tmp_path / name, name, gold_items(["yes"] * 10), labelled("A", A) + labelled("B", B)
    )
    metrics = compute_metrics(run, n_boot=0)
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return run


def _adjudicate(run: Path, labels: dict[int, str], who: str = "ann") -> None:
    for i, label in labels.items():
        append_adjudication(run, dataset="d", item_id=f"item-{i}", annotator=who, label=label)


def _accuracy(report: ComparisonReport) -> tuple[float | None, float | None, int]:
    (row,) = [c for c in report.comparisons if c.metric == "accuracy"]
    return row.value_a, row.value_b, row.n


def test_compare_scores_judges_against_the_adjudicated_gold(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {8: "no", 9: "no"})  # the dataset was wrong on the last two items
    assert _accuracy(compare_runs([run], n_boot=50)) == pytest.approx((0.8, 0.4, 10))
    adjudicated = assay.compare_runs([run], n_boot=50, gold="adjudicated")  # the public API
    assert _accuracy(adjudicated) == pytest.approx((1.0, 0.6, 10))
    only = compare_runs([run], n_boot=50, gold="adjudicated-only")
    assert _accuracy(only) == pytest.approx((1.0, 1.0, 2))
    (note,) = [n for n in adjudicated.notes if n.startswith("gold:")]
    assert "2 of 10 items" in note and "annotators: ann" in note
    assert not any(n.startswith("gold:") for n in compare_runs([run], n_boot=50).notes)


def test_the_person_is_a_rater_in_the_kappa_matrix(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {0: "yes", 1: "no", 4: "no", 8: "no", 9: "yes"})
    kappa = compare_runs([run], n_boot=50, gold="adjudicated").kappa
    assert kappa is not None and kappa.raters == ["A", "B", "adjudicated"]
    human, a, b = (kappa.raters.index(x) for x in ("adjudicated", "A", "B"))
    assert kappa.n[a][human] == 5
    # A says yes,yes,yes,no,no on items 0,1,4,8,9 against yes,no,no,no,yes: 2 of 5 agree
    # (po 0.4, pe 0.6*0.4+0.4*0.6 = 0.48); B says yes,yes,no,no,no: 3 of 5 (po 0.6,
    # pe 0.4*0.4+0.6*0.6 = 0.52)
    assert kappa.values[a][human] == pytest.approx((0.4 - 0.48) / (1 - 0.48))
    assert kappa.values[b][human] == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    plain = compare_runs([run], n_boot=50).kappa  # the person is no rater without --gold
    assert plain is not None and plain.raters == ["A", "B"]


def test_two_annotators_make_one_rater_whose_latest_label_wins(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {0: "no", 1: "no"}, who="ann")
    _adjudicate(run, {1: "yes", 2: "no"}, who="bob")
    overlay = gold_overlay([run], "adjudicated")
    assert overlay.annotators == ("ann", "bob")
    assert {k[1]: a.label for k, a in overlay.latest.items()} == {
        "item-0": "no",
        "item-1": "yes",
        "item-2": "no",
    }
    kappa = compare_runs([run], n_boot=50, gold="adjudicated").kappa
    assert kappa is not None and kappa.raters == ["A", "B", "adjudicated"]
    assert kappa.n[0][2] == 3


def _pairwise_run(tmp_path: Path) -> Path:
    items = [{"item_id": f"p{i}", "pairwise": True, "gold_preference": "A"} for i in range(4)]
    prefs = {"pj": ["A", "A", "B", "B"], "qj": ["A", "B", "B", "B"]}
    judgments = [
        {"item_id": f"p{i}", "judge_id": j, "order": order, "preference": p}
        for j, by in prefs.items()
        for i, p in enumerate(by)
        for order in ("ab", "ba")
    ]
    return write_item_run(tmp_path / "pw", "pw", items, judgments)


def test_pairwise_adjudicated_preference_overrides_gold_preference(tmp_path: Path) -> None:
    run = _pairwise_run(tmp_path)
    for i in (2, 3):
        append_adjudication(run, dataset="d", item_id=f"p{i}", annotator="x", preference="B")
    assert _accuracy(compare_runs([run], n_boot=50)) == pytest.approx((0.5, 0.25, 4))
    assert _accuracy(compare_runs([run], n_boot=50, gold="adjudicated")) == pytest.approx(
        (1.0, 0.75, 4)
    )


def test_runs_compared_together_share_the_pooled_adjudications(tmp_path: Path) -> None:
    one, two = _run(tmp_path, "one"), _run(tmp_path, "two")
    _adjudicate(one, {8: "no"})
    _adjudicate(two, {9: "no"})
    report = compare_runs([one, two], n_boot=50, gold="adjudicated")  # same gold: no refusal
    values = {(r.judge, c): r.metrics[c].value for r in report.ablation for c in r.metrics}
    assert values[("one/A", "accuracy")] == values[("two/A", "accuracy")] == pytest.approx(1.0)
    # the later entry for an item wins across the runs' files
    _adjudicate(one, {9: "yes"})
    report = compare_runs([one, two], n_boot=50, gold="adjudicated")
    values = {(r.judge, c): r.metrics[c].value for r in report.ablation for c in r.metrics}
    assert values[("one/A", "accuracy")] == pytest.approx(0.9)


def test_gold_refusals_are_one_line(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with pytest.raises(AdjudicationError, match=f"--gold adjudicated: no {LABELS_FILE} in"):
        compare_runs([run], n_boot=50, gold="adjudicated")
    with pytest.raises(AdjudicationError, match="choose dataset, adjudicated, adjudicated-only"):
        compare_runs([run], n_boot=50, gold="human")
    code, out, err = invoke(["compare", str(run), "--gold", "adjudicated"])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "no labels.jsonl" in err
    for command in ("report", "compare"):
        code, out, err = invoke([command, str(run), "--gold", "people"])
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert "--gold 'people': not a gold source" in err
    for command in (["compare", str(run)], ["compare"], ["report"]):
        # a missing run is named as such, not as a run without a labels file
        code, _, err = invoke([*command, str(tmp_path / "gone"), "--gold", "adjudicated"])
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "gone: run directory not found" in err and LABELS_FILE not in err


def test_cli_compare_with_adjudicated_gold(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {8: "no", 9: "no"})
    code, out, err = invoke(["compare", str(run), "--gold", "adjudicated", "-f", "json"])
    assert code == 0, err
    (acc,) = [c for c in json.loads(out)["comparisons"] if c["metric"] == "accuracy"]
    assert (acc["value_a"], acc["value_b"]) == pytest.approx((1.0, 0.6))


def test_report_uses_adjudicated_gold_in_memory(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {8: "no", 9: "no"})
    stored = (run / "metrics.json").read_bytes()
    code, out, err = invoke(["report", str(run), "-f", "json", "--gold", "adjudicated"])
    assert code == 0, err
    data = json.loads(out)
    accuracy = {r["judge_id"]: r["accuracy"] for r in data["items"]["rows"]}
    assert accuracy == pytest.approx({"A": 1.0, "B": 0.6})
    assert data["items"]["raters"][0]["raters"] == ["adjudicated"]
    assert any("2 of 10 items" in n for n in data["notes"])
    assert (run / "metrics.json").read_bytes() == stored  # never rewritten
    code, out, _ = invoke(["report", str(run), "-f", "json"])
    plain = {r["judge_id"]: r["accuracy"] for r in json.loads(out)["items"]["rows"]}
    assert plain == pytest.approx({"A": 0.8, "B": 0.4}) and "notes" not in json.loads(out)
    code, out, _ = invoke(["report", str(run), "-f", "markdown", "--gold", "adjudicated"])
    assert code == 0 and "gold: adjudicated: 2 of 10 items" in out


def test_labels_export_is_an_items_dataset(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _adjudicate(run, {3: "maybe"})
    append_adjudication(
        run, dataset="d", item_id="item-8", annotator="bob", label="no", note="see, page 2"
    )
    target = tmp_path / "gold.csv"
    code, _, err = invoke(["labels", "export", str(run), "-o", str(target)])
    assert code == 0 and f"wrote 10 items to {target}" in err
    loaded = load_items(target)
    gold = {item.id: item.gold_label for item in loaded.items}
    assert gold == {f"item-{i}": {3: "maybe", 8: "no"}.get(i, "yes") for i in range(10)}
    by_id = {item.id: item.variables for item in loaded.items}
    assert by_id["item-8"]["annotator"] == "bob" and by_id["item-8"]["note"] == "see, page 2"
    assert by_id["item-8"]["previous"] is None and by_id["item-0"]["gold_source"] == "dataset"
    code, out, _ = invoke(["labels", "export", str(run), "--adjudicated-only"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["id"], r["gold_label"], r["gold_source"]) for r in rows] == [
        ("item-3", "maybe", "adjudicated"),
        ("item-8", "no", "adjudicated"),
    ]


def test_labels_export_refusals_are_one_line(tmp_path: Path) -> None:
    run = _run(tmp_path)
    code, out, err = invoke(["labels", "export", str(run)])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{LABELS_FILE}: no labels file" in err
    _adjudicate(run, {0: "no"})
    code, _, err = invoke(["labels", "export", str(run), "--dataset", "other"])
    assert code == 2 and "--dataset 'other': not in this run; its datasets: d" in err
    code, _, err = invoke(["labels", "export", str(tmp_path / "nowhere")])
    assert code == 2 and "nowhere: run directory not found" in err
    (tmp_path / "empty").mkdir()
    code, _, err = invoke(["labels", "export", str(tmp_path / "empty")])
    assert code == 2 and "not a run directory (no manifest.json)" in err
    assert len(err.strip().splitlines()) == 1


def test_labels_export_of_pairwise_items_reads_back_their_preferences(tmp_path: Path) -> None:
    run = _pairwise_run(tmp_path)
    append_adjudication(run, dataset="d", item_id="p1", annotator="x", preference="tie")
    append_adjudication(run, dataset="d", item_id="p1", annotator="y", preference="b")
    target = tmp_path / "pw.csv"
    code, _, err = invoke(["labels", "export", str(run), "-o", str(target)])
    assert code == 0, err
    loaded = {item.id: item for item in load_items(target).items}
    assert {k: item.gold_preference for k, item in loaded.items()} == {
        "p0": "A",
        "p1": "B",
        "p2": "A",
        "p3": "A",
    }
    assert loaded["p1"].gold_label is None and loaded["p1"].variables["previous"] == "tie"
