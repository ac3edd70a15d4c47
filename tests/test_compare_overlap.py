"""`assay compare` of runs that share no item, or only some kinds of item, and
`--reference` values that name no comparable judge: one `error:` line (exit 2) or a
report whose Holm families and notes say what was compared with what."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run

from assay.compare import compare_runs
from assay.metrics import PairedComparison
from assay.metrics._paired import holm
from assay.runs import read_json

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
FACT_FILES = ("sentences.jsonl", "claims.jsonl", "verifications.jsonl", "answers.jsonl")


def _items_run(tmp_path: Path, name: str, ids: list[str] | None = None) -> Path:
    ids = ids or [f"item-{i}" for i in range(8)]
    a = ["yes"] * 6 + ["no"] * 2
    b = ["yes"] * 3 + ["no"] * 5
    judgments = labelled("A", a, ids) + labelled("B", b, ids)
    return write_item_run(tmp_path / name, name, gold_items(["yes"] * 8, ids), judgments)


def _force_only(tmp_path: Path) -> Path:
    """The demo fixture without its factuality records: ForceBench pairs only."""
    run = Path(shutil.copytree(FIXTURES / "demo", tmp_path / "pairs-only"))
    for name in FACT_FILES:
        (run / name).unlink()
    return run


def _error(argv: list[str]) -> str:
    code, out, err = invoke(argv)
    assert (code, out) == (2, ""), (code, out, err)
    (line,) = err.splitlines()
    assert line.startswith("error: ")
    return line


def test_runs_with_no_common_item_exit_2_naming_them(tmp_path: Path) -> None:
    items = _items_run(tmp_path, "labelled")
    line = _error(["compare", str(items), str(FIXTURES / "demo")])
    assert "no item in common" in line
    assert (
        "labelled (8 items)" in line
        and "demo (60 ForceBench pairs, 8 factuality responses)" in line
    )


def test_a_third_run_sharing_nothing_is_named_alone(tmp_path: Path) -> None:
    one, two = _items_run(tmp_path, "one"), _items_run(tmp_path, "two")
    line = _error(["compare", str(one), str(two), str(FIXTURES / "demo")])
    assert "demo (60 ForceBench pairs" in line and "one" not in line.split("in common")[0]


def test_items_that_do_not_overlap_at_all_are_refused(tmp_path: Path) -> None:
    one = _items_run(tmp_path, "one")
    two = _items_run(tmp_path, "two", [f"other-{i}" for i in range(8)])
    line = _error(["compare", str(one), str(two)])
    assert "one (8 items)" in line and "two (8 items)" in line


def test_partly_shared_runs_holm_per_family_and_say_so(tmp_path: Path) -> None:
    """Two runs share their items; only one also judged ForceBench pairs. The pairs are
    compared within that run, a note says so, and Holm adjusts each family of
    comparisons (the same items) on its own; the caption names the families."""
    both = _items_run(tmp_path, "both")
    shutil.copy(FIXTURES / "demo" / "judgments.jsonl", both)
    items = _items_run(tmp_path, "items")
    report = compare_runs([both, items], n_boot=200, seed=0)
    assert "ForceBench pairs: only in run both; compared within that run" in "".join(report.notes)
    families: dict[str, list[PairedComparison]] = {}
    for c in report.comparisons:
        families.setdefault("pair" if c.metric in ("mvr", "fs") else "item", []).append(c)
    assert len(families["pair"]) == 20 and len(families["item"]) > 1
    for rows in families.values():
        assert [c.p_holm for c in rows] == pytest.approx(holm([c.p_value for c in rows]))
    everything = holm([c.p_value for c in report.comparisons])
    assert [c.p_holm for c in report.comparisons] != pytest.approx(everything)
    code, out, _ = invoke(["compare", str(both), str(items), "--n-boot", "200"])
    assert code == 0
    caption = "p_holm: Holm within each family of comparisons on the same items (pairs: 20, "
    assert caption + f"items: {len(families['item'])})" in out


def test_reference_with_nothing_to_compare_is_an_error(tmp_path: Path) -> None:
    """A reference that shares no metric with any other judge (a verifier among
    ForceBench judges) would give an empty comparison table."""
    run = _force_only(tmp_path)
    shutil.copy(FIXTURES / "demo" / "verifications.jsonl", run)
    shutil.copy(FIXTURES / "demo" / "claims.jsonl", run)
    verifier = "baseline:overlap"
    line = _error(
        ["compare", str(run), "--reference", verifier, "--metric", "mvr", "--metric", "fs"]
    )
    assert f"--reference {verifier!r}" in line and "no metric" in line


def test_reference_by_its_bare_id_when_runs_share_it_names_the_shown_ids(tmp_path: Path) -> None:
    pairs_only = _force_only(tmp_path)
    judge = "baseline:token-overlap"
    line = _error(["compare", str(FIXTURES / "demo"), str(pairs_only), "--reference", judge])
    assert f"did you mean demo/{judge} or pairs-only/{judge}" in line


def test_pairwise_slot_labels_are_compared_as_the_run_metrics_read_them(tmp_path: Path) -> None:
    """Records with a slot label (`a`/`b`/`tie` as the judge saw the order) and no
    `preference`: the run's metrics read them, so the comparison must too (it showed
    n/a and compared nothing)."""
    items = [{"item_id": f"i{k}", "pairwise": True, "gold_preference": "A"} for k in range(12)]
    judgments = [
        {"item_id": f"i{k}", "judge_id": judge, "order": order, "label": label}
        for judge, flip in (("duel", 2), ("fair", 3))
        for k in range(12)
        for order, label in (("ab", "a"), ("ba", "b" if k % flip else "a"))
    ]
    run = write_item_run(tmp_path / "pw", "pw", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0
    rows = {r["judge_id"]: r for r in read_json(run / "metrics.json")["items"]["rows"]}
    report = compare_runs([run], n_boot=200, seed=0)
    for row in report.ablation:
        for metric in ("accuracy", "position_consistency"):
            assert row.metrics[metric].value == pytest.approx(rows[row.judge][metric]), metric
    assert {c.metric for c in report.comparisons} == {"accuracy", "position_consistency"}


def test_a_judge_with_fewer_verdicts_than_the_others_is_noted(tmp_path: Path) -> None:
    """A judge present in one run that judged only part of the items the runs share is
    compared on those; a note says on how many, next to the others' count."""
    ids = [f"item-{i}" for i in range(10)]
    one = write_item_run(
        tmp_path / "one",
        "one",
        gold_items(["yes"] * 10),
        labelled("X", ["yes"] * 8 + ["no"] * 2) + labelled("Y", ["yes"] * 5 + ["no"] * 5),
    )
    late = labelled("Z", ["yes", "no", "yes"], ids[:3])
    two = write_item_run(tmp_path / "two", "two", gold_items(["yes"] * 10), late)
    report = compare_runs([one, two], metrics=["accuracy"], n_boot=100, seed=0)
    assert "Z: accuracy on 3 items, the other judges on 10" in "\n".join(report.notes)
    assert not any(n.startswith(("X:", "Y:")) for n in report.notes)
