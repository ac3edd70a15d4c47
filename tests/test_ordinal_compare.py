"""Ordinal word labels through `assay compare` (paired CIs, Holm) and through a run on the
loopback server (the prompt's `ordered = true` reaching metrics.json; conflicting
orders refused before any request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _item_runs import gold_items, labelled, write_item_run
from _ordinal_library import library_ordinal

from assay.compare import compare_runs
from assay.core.rundir import read_json
from assay.errors import SpecError
from assay.metrics._ordinal import ORDINAL_STATISTICS
from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer, reply

LEVELS = ["unsupported", "partially_supported", "supported"]


def _ordinal_run(tmp_path: Path, name: str = "o", *, declare: bool = True) -> tuple[Path, Any]:
    rng = np.random.default_rng(11)
    n = 120
    gold = rng.integers(0, 3, n)
    ranks = {
        "a": np.clip(gold + rng.choice([0, 0, 0, 1, -1], n), 0, 2),
        "b": np.clip(gold + rng.choice([0, 2, -2, 1, -1], n), 0, 2),
    }
    words = {j: [LEVELS[r] for r in v] for j, v in ranks.items()}
    words["b"][0] = "unclear"  # outside the order: item 0 is not comparable for b
    judgments = [row for j, v in words.items() for row in labelled(j, v)]
    run = write_item_run(
        tmp_path / name, name, gold_items([LEVELS[g].upper() for g in gold]), judgments
    )
    if declare:
        spec = {
            "datasets": [{"kind": "items", "name": "d", "path": "d.csv", "label_order": LEVELS}]
        }
        (run / "manifest.json").write_text(json.dumps({"name": name, "spec": spec}))
    return run, (gold, ranks)


def test_compare_reports_ordinal_statistics_with_paired_cis(tmp_path: Path) -> None:
    run, (gold, ranks) = _ordinal_run(tmp_path)
    report = compare_runs([run], n_boot=300, seed=2)
    assert set(ORDINAL_STATISTICS) <= set(report.metrics)
    by = {c.metric: c for c in report.comparisons}
    both = np.arange(1, len(gold))  # item 0: b's label is outside the order
    for name in ORDINAL_STATISTICS:
        row = by[name]
        assert (row.judge_a, row.judge_b, row.n, row.test) == ("a", "b", 119, "paired-bootstrap")
        assert row.value_a == pytest.approx(library_ordinal(gold[both], ranks["a"][both])[name])
        assert row.value_b == pytest.approx(library_ordinal(gold[both], ranks["b"][both])[name])
        assert row.ci_low <= row.diff <= row.ci_high
        assert row.p_holm >= row.p_value
    own = next(r for r in report.ablation if r.judge == "a").metrics["ordinal_alpha"]
    assert own.n == 120 and own.value == pytest.approx(
        library_ordinal(gold, ranks["a"])["ordinal_alpha"]
    )
    # Holm adjusts the ordinal rows with kappa's: one family of comparisons on the items
    assert report.holm_families["item"] == len(report.comparisons)
    assert by["quadratic_kappa"].diff > 0  # a is within one level, b often two off


def test_mae_rank_difference_ci_is_the_paired_bootstrap_of_rank_errors(tmp_path: Path) -> None:
    """By hand: draws of all 120 items in key order (numpy's generator, as scipy draws);
    in each, the drawn items where both judges have a rank: mean rank error a minus b."""
    run, (gold, ranks) = _ordinal_run(tmp_path)
    report = compare_runs([run], metrics=["mae_rank"], n_boot=500, seed=4)
    (row,) = report.comparisons
    keyed = sorted(range(len(gold)), key=lambda i: f"item-{i}")  # items in key order
    per_item = (np.abs(ranks["a"] - gold) - np.abs(ranks["b"] - gold))[keyed]
    inside = np.array(keyed) != 0  # item 0: b's label is outside the order
    draws = np.random.default_rng(4).integers(0, len(gold), size=(500, len(gold)))
    diffs = [per_item[d][inside[d]].mean() for d in draws]
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.quantile(diffs, [0.025, 0.975])))


def test_word_labels_without_an_order_stay_nominal(tmp_path: Path) -> None:
    run, _ = _ordinal_run(tmp_path, declare=False)
    report = compare_runs([run], n_boot=50)
    assert not set(ORDINAL_STATISTICS) & set(report.metrics)
    assert "cohen_kappa" in report.metrics


def test_datasets_declaring_different_orders_are_compared_nominally(tmp_path: Path) -> None:
    gold = ["supported", "unsupported", "partially_supported", "supported"]
    items = [{**it, "dataset": d} for d in ("d", "e") for it in gold_items(gold)]
    judgments = [
        {**j, "dataset": d}
        for d in ("d", "e")
        for j in labelled("a", gold) + labelled("b", gold[::-1])
    ]
    run = write_item_run(tmp_path / "two", "two", items, judgments)
    blocks = [
        {"kind": "items", "name": d, "path": f"{d}.csv", "label_order": order}
        for d, order in (("d", LEVELS), ("e", LEVELS[::-1]))
    ]
    (run / "manifest.json").write_text(json.dumps({"name": "two", "spec": {"datasets": blocks}}))
    report = compare_runs([run], n_boot=50)
    assert not set(ORDINAL_STATISTICS) & set(report.metrics)
    assert any("declare different label orders" in note for note in report.notes)


# ---- a run on the loopback server --------------------------------------------------

KEY_ENV = "ORDINAL_RUN_KEY"


def _prompt(order: list[str], pid: str) -> str:
    values = ", ".join(f'"{v}"' for v in order)
    scores = "\n".join(f"{v} = {i / 2}" for i, v in enumerate(LEVELS))
    return (
        f'+++\nid = "{pid}"\nversion = 1\ntask = "judge"\nvariables = ["claim"]\n'
        f"[scores]\n{scores}\n"
        f'[output.label]\ntype = "enum"\nordered = true\nvalues = [{values}]\n'
        "+++\n=== user ===\nCLAIM: {{ claim }}\n"
    )


def _one_level_up(body: dict[str, Any]) -> Any:
    """Says the level after the claim's own (the top level stays)."""
    claim = body["messages"][-1]["content"].split("CLAIM: ")[1].strip()
    return reply(json.dumps({"label": LEVELS[min(LEVELS.index(claim) + 1, 2)]}))


def _spec(tmp: Path, base_url: str, prompts: dict[str, list[str]]) -> Path:
    (tmp / "prompts").mkdir()
    for pid, order in prompts.items():
        (tmp / "prompts" / f"{pid}.prompt").write_text(_prompt(order, pid))
    gold = [LEVELS[i % 3] for i in range(9)]
    rows = "".join(f"q{i},{gold[(i + 1) % 9]},{g}\n" for i, g in enumerate(gold))
    (tmp / "rated.csv").write_text("id,claim,gold_label\n" + rows)
    refs = ", ".join(f'"{p}@1"' for p in prompts)
    spec = tmp / "spec.toml"
    spec.write_text(
        f'name = "ordinal"\nbootstrap = 100\nprompt_dirs = ["prompts"]\n'
        f'[[datasets]]\nkind = "items"\npath = "rated.csv"\n'
        f"[defaults]\nmax_attempts = 1\ntimeout_s = 5\n"
        f'[[judges]]\nmodels = ["openai/ordinal"]\nprompts = [{refs}]\n'
        f'api_base = "{base_url}"\napi_key_env = "{KEY_ENV}"\n'
    )
    return spec


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY_ENV, "sk-ordinal-test-key-123456")
    with FakeOpenAIServer(responder=_one_level_up) as server:
        yield server


def test_a_prompt_declared_order_reaches_the_run_metrics(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    outcome = run_spec(
        _spec(tmp_path, srv.base_url, {"rubric": LEVELS}), RunOptions(output_dir=str(out))
    )
    assert outcome.status == "complete", outcome.message
    (row,) = read_json(out / "metrics.json")["items"]["rows"]
    claims = [LEVELS[((i + 1) % 9) % 3] for i in range(9)]
    gold = np.array([i % 3 for i in range(9)])
    pred = np.array([min(LEVELS.index(c) + 1, 2) for c in claims])
    for name, value in library_ordinal(gold, pred).items():
        assert row[name] == pytest.approx(value), name
    assert row[f"{'quadratic_kappa'}_lo"] is not None


def test_prompts_declaring_different_orders_are_refused_before_any_request(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    spec = _spec(tmp_path, srv.base_url, {"up": LEVELS, "down": LEVELS[::-1]})
    with pytest.raises(SpecError, match="different label orders") as err:
        run_spec(spec, RunOptions(output_dir=str(tmp_path / "run")))
    assert "label_order" in str(err.value) and not srv.requests
