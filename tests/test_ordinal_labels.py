"""Ordinal labels that are words: the order's sources (dataset `label_order`, a prompt's
`ordered = true`, integers), the statistics against scikit-learn and krippendorff on
generated three-level data, and the errors a user sees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _ordinal_library import library_ordinal
from pydantic import ValidationError
from sklearn.metrics import cohen_kappa_score

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.datasets import ItemsDatasetOptions, load_items
from assay.errors import DatasetError, PromptError
from assay.metrics import item_metrics
from assay.metrics._agreement_stats import confusion_stack
from assay.metrics._ordinal import (
    ORDINAL_STATISTICS,
    label_orders_from_manifest,
    ordinal_agreement,
    ordinal_statistics,
    resolve_order,
)
from assay.prompts import load_prompt_file

LEVELS = ["unsupported", "partially_supported", "supported"]


def _generated(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gold ranks and judge ranks mostly within one level of gold."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    pred = np.clip(gold + rng.choice([-1, 0, 0, 1, 2], n), 0, 2)
    return gold, pred


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_statistics_match_sklearn_and_krippendorff(seed: int) -> None:
    gold, pred = _generated(300, seed)
    got = ordinal_agreement([LEVELS[p] for p in pred], [LEVELS[g] for g in gold], LEVELS)
    assert got.n == 300
    for name, value in library_ordinal(gold, pred).items():
        assert got.stats[name] == pytest.approx(value, abs=1e-12), name


@pytest.mark.parametrize("seed", [3, 4])
def test_batched_statistics_behind_the_cis_match_the_libraries(seed: int) -> None:
    gold, pred = _generated(150, seed)
    batched = ordinal_statistics(confusion_stack(pred, gold, 3))
    for name, value in library_ordinal(gold, pred).items():
        assert batched[name][0] == pytest.approx(value, abs=1e-10), name


def test_labels_outside_the_order_leave_the_item_out() -> None:
    gold, pred = _generated(120, 5)
    labels = [LEVELS[p] for p in pred]
    labels[0], labels[1] = "unclear", None
    got = ordinal_agreement(labels, [LEVELS[g] for g in gold], LEVELS, n_boot=200, seed=0)
    assert got.n == 118
    expected = library_ordinal(gold[2:], pred[2:])
    assert got.stats["quadratic_kappa"] == pytest.approx(expected["quadratic_kappa"])
    lo, hi = got.ci["ordinal_alpha"] or (np.nan, np.nan)
    assert lo < got.stats["ordinal_alpha"] < hi  # type: ignore[operator]


def test_resolve_order_prefers_the_declared_order_then_integers() -> None:
    assert resolve_order(["b", "a"], ["Supported", "Partially Supported"]) == [
        "supported",
        "partially_supported",
    ]
    assert resolve_order(["10", "9", None], None) == ["9", "10"]
    assert resolve_order(["yes", "no"], None) is None


def _records(order: list[str], seed: int) -> tuple[list[ItemRecord], list[ItemJudgmentRecord]]:
    gold, pred = _generated(80, seed)
    items = [
        ItemRecord(dataset="d", item_id=f"i{k}", gold_label=order[g]) for k, g in enumerate(gold)
    ]
    recs = [
        ItemJudgmentRecord(
            dataset="d", item_id=f"i{k}", judge_id="j", status=Status.OK, label=order[p]
        )
        for k, p in enumerate(pred)
    ]
    return items, recs


def test_item_metrics_adds_ordinal_statistics_for_a_declared_order() -> None:
    items, recs = _records(LEVELS, 6)
    nominal = item_metrics(items, recs, n_boot=0).rows_flat()[0]
    assert not set(ORDINAL_STATISTICS) & set(nominal)
    report = item_metrics(items, recs, n_boot=100, label_orders={"d": LEVELS})
    row = report.rows[0]
    gold = np.array([LEVELS.index(it.gold_label or "") for it in items])
    pred = np.array([LEVELS.index(r.label or "") for r in recs])
    for name, value in library_ordinal(gold, pred).items():
        assert row.stats[name] == pytest.approx(value), name
        assert row.n_of[name] == 80 and row.ci[name] is not None
    assert row.stats["cohen_kappa"] == pytest.approx(cohen_kappa_score(gold, pred))
    assert row.labels == LEVELS  # the confusion matrix follows the order


def test_integer_labels_keep_their_quadratic_kappa_and_ci() -> None:
    items, recs = _records(["1", "2", "3"], 7)
    row = item_metrics(items, recs, n_boot=200, seed=3).rows[0]
    gold = [it.gold_label for it in items]
    pred = [r.label for r in recs]
    assert row.stats["quadratic_kappa"] == pytest.approx(
        cohen_kappa_score(gold, pred, weights="quadratic")
    )
    assert row.ci["quadratic_kappa"] is not None and "ordinal_alpha" in row.stats


def test_manifest_orders_dataset_first_then_prompts_and_conflicts_noted() -> None:
    manifest = {
        "spec": {
            "datasets": [
                {"kind": "items", "path": "data/rated.csv", "label_order": ["lo", "hi"]},
                {"kind": "items", "path": "x.csv", "name": "other"},
            ]
        },
        "judges": [
            {"id": "a#0", "prompt": {"label_order": LEVELS}},
            {"id": "b", "prompt": {"label_order": LEVELS[::-1]}},
            {"id": "c", "prompt": {"labels": LEVELS}},
        ],
    }
    orders, notes = label_orders_from_manifest(
        manifest, {"rated": ["a#0", "b"], "other": ["a#0", "a#majority", "c"]}
    )
    assert orders == {"rated": ["lo", "hi"], "other": LEVELS}
    orders, notes = label_orders_from_manifest(manifest, {"third": ["a#1", "b"]})
    assert "third" not in orders
    assert "different label orders" in notes[0] and "third" in notes[0]


def test_dataset_label_order_refuses_a_gold_value_outside_it(tmp_path: Path) -> None:
    path = tmp_path / "rated.jsonl"
    rows = [
        {"id": "1", "text": "t", "gold_label": "supported", "r1": "Unsupported"},
        {"id": "2", "text": "t", "gold_label": "maybe", "r1": "supported"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ok = ItemsDatasetOptions(path=str(path), raters=["r1"], label_order=LEVELS, gold_map={})
    with pytest.raises(DatasetError) as err:
        load_items(ok)
    assert err.value.line == 2 and err.value.field == "gold_label" and "maybe" in str(err.value)
    mapped = ok.model_copy(update={"gold_map": {"maybe": "partially_supported"}})
    assert [it.gold_label for it in load_items(mapped).items] == [
        "supported",
        "partially_supported",
    ]


@pytest.mark.parametrize(
    ("order", "task", "message"),
    [
        (["a", "A"], "single", "listed twice"),
        (["a"], "single", "two or more"),
        (["a", "b"], "pairwise", "not pairwise"),
    ],
)
def test_label_order_option_is_checked(order: list[str], task: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ItemsDatasetOptions(path="x.csv", task=task, label_order=order)  # type: ignore[arg-type]


def _prompt(tmp_path: Path, output: str) -> Path:
    path = tmp_path / "rubric.prompt"
    head = 'id = "rubric"\nversion = 1\ntask = "judge"\nvariables = ["text"]\n'
    path.write_text(f"+++\n{head}{output}+++\n=== user ===\n{{{{ text }}}}\n")
    return path


def test_prompt_ordered_enum_records_its_order(tmp_path: Path) -> None:
    output = (
        "[scores]\nunsupported = 0.0\npartially_supported = 0.5\nsupported = 1.0\n"
        '[output.label]\ntype = "enum"\nordered = true\n'
        'values = ["unsupported", "partially_supported", "supported"]\n'
    )
    prompt = load_prompt_file(_prompt(tmp_path, output))
    assert prompt.identity()["label_order"] == LEVELS
    unordered = load_prompt_file(_prompt(tmp_path, output.replace("ordered = true\n", "")))
    assert "label_order" not in unordered.identity()


def test_ordered_on_a_non_enum_field_is_refused(tmp_path: Path) -> None:
    output = '[output.label]\ntype = "string"\nordered = true\n'
    with pytest.raises(PromptError, match="only for enum"):
        load_prompt_file(_prompt(tmp_path, output))
