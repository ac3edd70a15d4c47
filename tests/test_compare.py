"""`compare_runs`: judges of one or more run directories compared on the same items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run
from scipy import stats
from sklearn import metrics as skm

from assay.compare import AblationRow, ComparisonReport, compare_runs, report_frames
from assay.core.outcomes import Status
from assay.core.records import JudgmentRecord, VerificationRecord
from assay.errors import AssayError
from assay.metrics import bootstrap_ci, gold_metrics, mcnemar_exact, pair_table
from assay.metrics._majority import Vote, majority_of, majority_records, majority_vote

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"


def _row(report: ComparisonReport, judge: str) -> AblationRow:
    return next(r for r in report.ablation if r.judge == judge)


def test_hand_computed_difference_mcnemar_and_ci(tmp_path: Path) -> None:
    # A right on 8 of 10, B on 4; A right where B is wrong on 4 items, never the reverse
    a = ["yes"] * 8 + ["no"] * 2
    b = ["yes"] * 4 + ["no"] * 6
    run = write_item_run(
        tmp_path / "r", "r", gold_items(["yes"] * 10), labelled("A", a) + labelled("B", b)
    )
    report = compare_runs([run], metrics=["accuracy"], n_boot=1000, seed=0)
    (row,) = report.comparisons
    assert (row.judge_a, row.judge_b, row.n, row.test) == ("A", "B", 10, "mcnemar-exact")
    assert (row.value_a, row.value_b, row.diff) == pytest.approx((0.8, 0.4, 0.4))
    assert row.p_value == pytest.approx(2 * 0.5**4)  # 4 discordant pairs, all one way
    assert row.p_holm == row.p_value  # a single comparison
    per_item = np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 0], dtype=float)  # A minus B
    assert (row.ci_low, row.ci_high) == pytest.approx(bootstrap_ci(per_item, n_boot=1000, seed=0))
    assert 0.0 <= row.ci_low <= row.diff <= row.ci_high <= 1.0


def _random_run(tmp_path: Path, seed: int = 0, n: int = 150) -> tuple[Path, dict[str, list]]:
    rng = np.random.default_rng(seed)
    names = ["Supported", "not supported", "mixed"]  # normalised: supported, not_supported
    gold = [names[g] for g in rng.integers(0, 3, n)]
    labels: dict[str, list] = {}
    for judge, skill in (("a", 0.7), ("b", 0.5)):
        own = [g if rng.random() < skill else names[rng.integers(0, 3)] for g in gold]
        labels[judge] = [None if rng.random() < 0.05 else x for x in own]
    items = [
        {**item, "ratings": {"r1": gold[i] if rng.random() < 0.8 else "mixed"}}
        for i, item in enumerate(gold_items(gold))
    ]
    judgments = labelled("a", labels["a"]) + labelled("b", labels["b"])
    return write_item_run(tmp_path / f"run{seed}", "random", items, judgments), {
        "gold": gold,
        **labels,
        "r1": [it["ratings"]["r1"] for it in items],
    }


def _norm(values: list) -> np.ndarray:
    return np.array([None if v is None else v.lower().replace(" ", "_") for v in values], object)


def test_kappa_and_friends_against_sklearn_through_compare(tmp_path: Path) -> None:
    run, data = _random_run(tmp_path)
    report = compare_runs([run], n_boot=200, seed=1)
    gold, a, b = _norm(data["gold"]), _norm(data["a"]), _norm(data["b"])
    both = np.array([x is not None and y is not None for x, y in zip(a, b, strict=True)])
    by = {(c.metric, c.judge_a): c for c in report.comparisons}
    sk = {
        "accuracy": skm.accuracy_score,
        "balanced_accuracy": skm.balanced_accuracy_score,
        "macro_f1": lambda g, p: skm.f1_score(g, p, average="macro"),
        "cohen_kappa": skm.cohen_kappa_score,
    }
    for name, function in sk.items():
        row = by[(name, "a")]
        assert row.n == both.sum()
        assert row.value_a == pytest.approx(function(list(gold[both]), list(a[both])), abs=1e-12)
        assert row.value_b == pytest.approx(function(list(gold[both]), list(b[both])), abs=1e-12)
        own = _row(report, "a").metrics[name]  # a alone: every item it labelled
        mine = np.array([x is not None for x in a])
        assert own.n == mine.sum()
        assert own.value == pytest.approx(function(list(gold[mine]), list(a[mine])), abs=1e-12)
        assert own.ci_low <= own.value <= own.ci_high
    assert by[("accuracy", "a")].test == "mcnemar-exact"
    assert by[("cohen_kappa", "a")].test == "paired-bootstrap"
    assert "quadratic_kappa" not in report.metrics  # labels are not integers


def test_kappa_matrix_and_confusions(tmp_path: Path) -> None:
    run, data = _random_run(tmp_path, seed=2, n=80)
    report = compare_runs([run], n_boot=50)
    assert report.kappa is not None and report.kappa.raters == ["a", "b", "r1"]
    a, r1 = _norm(data["a"]), _norm(data["r1"])
    keep = np.array([x is not None for x in a])
    i, k = report.kappa.raters.index("a"), report.kappa.raters.index("r1")
    assert report.kappa.n[i][k] == keep.sum()
    expected = skm.cohen_kappa_score(list(a[keep]), list(r1[keep]))
    assert report.kappa.values[i][k] == pytest.approx(expected)
    table = next(t for t in report.confusions if t.judge == "b")
    b, gold = _norm(data["b"]), _norm(data["gold"])
    labelled_b = np.array([x is not None for x in b])
    assert table.labels == ["mixed", "not_supported", "supported"]
    expected_counts = skm.confusion_matrix(
        list(gold[labelled_b]), list(b[labelled_b]), labels=table.labels
    )
    assert table.counts == expected_counts.tolist()


def test_runs_with_different_items_compare_on_the_intersection(tmp_path: Path) -> None:
    ids_1 = [f"q{i}" for i in range(10)]
    ids_2 = [f"q{i}" for i in range(2, 14)]
    gold = {f"q{i}": "yes" if i % 3 else "no" for i in range(14)}

    def run(name: str, ids: list[str], flip: int) -> Path:
        labels = [gold[i] if n % flip else "no" for n, i in enumerate(ids)]
        items = gold_items([gold[i] for i in ids], ids)
        judgments = labelled("judge", labels, ids) + labelled(f"only-{name}", labels, ids)
        return write_item_run(tmp_path / name, name, items, judgments)

    first, second = run("first", ids_1, 2), run("second", ids_2, 3)
    report = compare_runs([first, second], metrics=["accuracy"], n_boot=100)
    assert "items: compared on the 8 every run has (first 10, second 12)" in report.notes
    assert any("first/judge" in note and "prefixed" in note for note in report.notes)
    assert [r.judges for r in report.runs] == [
        ["first/judge", "only-first"],
        ["second/judge", "only-second"],
    ]
    assert {c.n for c in report.comparisons} == {8}
    with pytest.raises(AssayError, match=r"--strict: runs first, second differ in their items"):
        compare_runs([first, second], strict=True, n_boot=10)


def test_reference_gives_deltas_in_comparisons_and_ablation(tmp_path: Path) -> None:
    run, _ = _random_run(tmp_path, seed=3, n=60)
    report = compare_runs([run], reference="b", n_boot=100)
    assert report.reference == "b"
    assert {(c.judge_a, c.judge_b) for c in report.comparisons} == {("a", "b")}
    a_row, b_row = _row(report, "a"), _row(report, "b")
    assert b_row.reference and not a_row.reference
    for c in report.comparisons:
        cell = a_row.metrics[c.metric]
        assert (cell.diff, cell.diff_ci_low, cell.diff_ci_high) == (c.diff, c.ci_low, c.ci_high)
        assert (cell.p_value, cell.p_holm) == (c.p_value, c.p_holm)
    assert all(cell.diff is None for cell in b_row.metrics.values())
    with pytest.raises(AssayError, match="--reference 'c' is not a judge here; judges: a, b"):
        compare_runs([run], reference="c", n_boot=10)


def test_majority_vote_judge_of_samples(tmp_path: Path) -> None:
    gold = ["a", "a", "b", "b", "a"]
    samples = {
        "m::p@1#0": ["a", "b", "b", "a", None],
        "m::p@1#1": ["a", "b", "a", "b", "b"],
        "m::p@1#2": ["b", "a", "a", None, None],
    }
    # votes: a, b, a, a (a-b tie: first in sorted order), b -> right on item 0 only
    judgments = [j for judge, labels in samples.items() for j in labelled(judge, labels)]
    run = write_item_run(tmp_path / "s", "s", gold_items(gold), judgments)
    report = compare_runs([run], metrics=["accuracy"], n_boot=50)
    cell = _row(report, "m::p@1#majority").metrics["accuracy"]
    assert (cell.value, cell.n) == (pytest.approx(1 / 5), 5)
    assert any(n.startswith("m::p@1#majority: majority vote") for n in report.notes)
    assert report.kappa is None  # the samples give way to their vote: one column is left


def test_majority_rules() -> None:
    assert majority_vote(["b", "a", "b"]) == "b"
    assert majority_vote(["b", "a"]) == "a"  # tie: first in sorted order
    assert majority_vote(["A", "B"], tie="tie") == "tie"
    assert majority_vote([None, None]) is None
    vote = majority_of(
        [Vote(True, "x", 0.2), Vote(True, "y", 0.9), Vote(False), Vote(True, "x", 0.4)]
    )
    assert vote == Vote(True, "x", 0.4, None)  # median of 0.2, 0.9, 0.4
    assert majority_of([Vote(False), Vote(False)]).ok is False


def test_majority_records_for_forcebench_samples() -> None:
    def record(judge: str, score: float | None, status: Status = Status.OK) -> JudgmentRecord:
        return JudgmentRecord(
            dataset="d", pair_id="p", member="calibrated", judge_id=judge, status=status,
            label=None if score is None else ("supported" if score > 0.5 else "unsupported"),
            score=score, raw_output="text",
        )  # fmt: skip

    records = [record("j#0", 0.9), record("j#1", 0.2), record("j#2", 0.7), record("k", 0.1)]
    records.append(record("j#3", None, Status.PARSE_ERROR))
    (voted,) = majority_records(records)
    assert voted.judge_id == "j#majority" and voted.status is Status.OK
    assert (voted.label, voted.score, voted.raw_output) == ("supported", 0.7, None)


def test_pairwise_items_accuracy_and_position_consistency(tmp_path: Path) -> None:
    verdicts = {  # item: (gold, {judge: (ab, ba)}); None = a failed judgment
        "p0": ("A", {"pj": ("A", "A"), "qj": ("B", "B")}),
        "p1": ("B", {"pj": ("A", "B"), "qj": ("B", "B")}),
        "p2": ("tie", {"pj": ("tie", "tie"), "qj": ("A", "B")}),
        "p3": ("A", {"pj": ("B", None), "qj": ("A", "A")}),
    }
    items = [
        {"item_id": i, "pairwise": True, "gold_preference": g} for i, (g, _) in verdicts.items()
    ]
    judgments = [
        {"item_id": i, "judge_id": j, "order": order, "preference": p}
        if p is not None
        else {"item_id": i, "judge_id": j, "order": order, "status": "api_error"}
        for i, (_, by) in verdicts.items()
        for j, pair in by.items()
        for order, p in zip(("ab", "ba"), pair, strict=True)
    ]
    report = compare_runs([write_item_run(tmp_path / "pw", "pw", items, judgments)], n_boot=100)
    by = {c.metric: c for c in report.comparisons}
    consistency, accuracy = by["position_consistency"], by["accuracy"]
    assert (consistency.n, consistency.value_a, consistency.value_b) == (
        3,
        pytest.approx(2 / 3),
        pytest.approx(2 / 3),
    )
    assert consistency.test == "mcnemar-exact" and consistency.p_value == 1.0
    assert (accuracy.n, accuracy.test) == (3, "paired-bootstrap")
    assert (accuracy.value_a, accuracy.value_b) == pytest.approx(((1 + 0.5 + 1) / 3, 1 / 3))
    assert _row(report, "qj").metrics["position_consistency"].value == pytest.approx(3 / 4)
    assert _row(report, "qj").metrics["accuracy"].value == pytest.approx(2 / 4)


def test_numeric_scores_against_gold_scores(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    gold = rng.integers(1, 6, 40).astype(float)
    items = [{"item_id": f"item-{i}", "gold_score": g} for i, g in enumerate(gold)]
    raw = {
        j: np.clip(np.round(gold + rng.normal(0, s, 40)), 1, 5) for j, s in (("x", 0.6), ("y", 1.5))
    }
    judgments = [
        {"item_id": f"item-{i}", "judge_id": j, "score": (v - 1) / 4, "raw_score": v}
        for j, values in raw.items()
        for i, v in enumerate(values)
    ]
    judgments[3] = {"item_id": "item-3", "judge_id": "x", "status": "refusal"}
    report = compare_runs([write_item_run(tmp_path / "n", "n", items, judgments)], n_boot=100)
    keep = np.arange(40) != 3
    by = {c.metric: c for c in report.comparisons}
    assert by["mae"].n == 39
    assert by["mae"].value_a == pytest.approx(np.abs(raw["x"] - gold)[keep].mean())
    assert by["pearson"].value_b == pytest.approx(stats.pearsonr(raw["y"][keep], gold[keep])[0])
    assert by["spearman"].value_a == pytest.approx(stats.spearmanr(raw["x"][keep], gold[keep])[0])
    assert _row(report, "y").metrics["mae"].n == 40


def _force_spec(tmp_path: Path, *baselines: str) -> Path:
    blocks = "".join(f'\n[[baselines]]\nname = "{b}"\n' for b in baselines)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "fb"\noutput_dir = "{(tmp_path / "run").as_posix()}"\nbootstrap = 100\n'
        f'[[datasets]]\nname = "forcebench-demo"\npath = "builtin:forcebench-demo"\n{blocks}',
        encoding="utf-8",
    )
    return spec


def test_a_real_forcebench_run_of_baselines(tmp_path: Path) -> None:
    spec = _force_spec(tmp_path, "token-overlap", "forcecheck-rule", "citation-presence")
    code, _, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 0, err
    run = tmp_path / "run"
    report = compare_runs([run], reference="baseline:token-overlap", n_boot=300)
    assert report.metrics == ["mvr", "fs"]
    rows = json.loads((run / "metrics.json").read_text())["forcebench"]["rows"]
    overall = {r["judge_id"]: r for r in rows if r["group"] == "all" and r["dataset"] == "all"}
    for row in report.ablation:
        assert row.metrics["mvr"].value == pytest.approx(overall[row.judge]["mvr"])
        assert row.metrics["fs"].value == pytest.approx(overall[row.judge]["fs"])
    pairs = pair_table(
        JudgmentRecord.model_validate_json(line)
        for line in (run / "judgments.jsonl").read_text().splitlines()
    )
    violations = pairs.pivot(index="pair_id", columns="judge_id", values="violation")
    mvr = next(
        c
        for c in report.comparisons
        if c.metric == "mvr" and c.judge_a == "baseline:forcecheck-rule"
    )
    expected = mcnemar_exact(
        violations["baseline:forcecheck-rule"].to_numpy(float),
        violations["baseline:token-overlap"].to_numpy(float),
    )
    assert mvr.p_value == pytest.approx(expected) and mvr.n == len(violations)
    assert [p.judge for p in report.force] == [r.judge for r in report.ablation]


def test_factuality_fixtures_macro_micro_match_the_run_metrics() -> None:
    report = compare_runs([FIXTURES / "demo", FIXTURES / "hosted"], n_boot=100)
    demo = json.loads((FIXTURES / "demo" / "metrics.json").read_text())
    (scores,) = demo["factuality"]["scores"]["rows"]
    cell = _row(report, "demo/baseline:overlap").metrics
    assert cell["factuality_macro"].value == pytest.approx(scores["macro"])
    assert cell["factuality_micro"].value == pytest.approx(scores["micro"])
    assert cell["factuality_macro"].n == scores["n_responses_scored"]
    macro = [c for c in report.comparisons if c.metric == "factuality_macro"]
    assert len(macro) == 3 and all(c.test == "paired-bootstrap" for c in macro)


def test_verifier_balanced_accuracy_matches_gold_metrics(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    records = []
    for c in range(30):
        gold = "supported" if rng.random() < 0.5 else "unsupported"
        for verifier, skill in (("v1", 0.8), ("v2", 0.6)):
            label = (
                gold
                if rng.random() < skill
                else ("unsupported" if gold == "supported" else "supported")
            )
            status = Status.PARSE_ERROR if rng.random() < 0.1 else Status.OK
            records.append(VerificationRecord(
                dataset="f", answer_id=f"ans{c // 3}", claim_id=f"c{c}", claim="x",
                verifier_id=verifier, status=status, label=label if status is Status.OK else None,
                gold_label=gold,
            ))  # fmt: skip
    run = tmp_path / "facts"
    run.mkdir()
    (run / "manifest.json").write_text('{"name": "facts"}')
    (run / "verifications.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    report = compare_runs([run], metrics=["balanced_accuracy"], n_boot=100)
    expected = {r.verifier_id: r for r in gold_metrics(records).rows if r.dataset == "all"}
    for verifier in ("v1", "v2"):
        cell = _row(report, verifier).metrics["balanced_accuracy"]
        assert cell.value == pytest.approx(expected[verifier].balanced_accuracy)
        assert cell.n == expected[verifier].n


def test_report_frames(tmp_path: Path) -> None:
    run, _ = _random_run(tmp_path, seed=4, n=50)
    report = compare_runs([run], reference="a", n_boot=50)
    frames = report_frames(report)
    parts = {"comparisons", "ablation", "kappa", "confusions", "force", "panels"}
    assert set(frames) == parts | {"panels_left_out", "reliability"}
    assert frames["reliability"].empty  # no label probabilities
    assert set(frames["panels"]["panel"]) == {"judges", "judges+raters"}  # a, b and r1
    assert len(frames["comparisons"]) == len(report.comparisons)
    wide = frames["ablation"].pivot(index="judge", columns="metric", values="value")
    assert wide.loc["b", "accuracy"] == _row(report, "b").metrics["accuracy"].value
    assert frames["kappa"].shape == (3, 3)
    assert frames["confusions"]["count"].sum() == sum(
        sum(map(sum, t.counts)) for t in report.confusions
    )
    assert frames["force"].empty


def test_integer_labels_are_ordinal_and_add_quadratic_kappa(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    gold = rng.integers(1, 6, 60)
    labels = {j: np.clip(gold + rng.integers(-s, s + 1, 60), 1, 5) for j, s in (("x", 1), ("y", 2))}
    judgments = [row for j, v in labels.items() for row in labelled(j, [str(x) for x in v])]
    run = write_item_run(tmp_path / "o", "o", gold_items([str(g) for g in gold]), judgments)
    report = compare_runs([run], metrics=["quadratic_kappa"], n_boot=50)
    (row,) = report.comparisons
    expected = skm.cohen_kappa_score(gold, labels["x"], weights="quadratic")
    assert row.value_a == pytest.approx(expected)


def test_forcebench_samples_get_a_majority_judge(tmp_path: Path) -> None:
    records = []
    for p in range(6):
        for member, base in (("calibrated", 0.8), ("raised", 0.5)):
            for k, shift in enumerate((0.0, 0.4, -0.1)):  # sample 1 often inverts the pair
                score = base + (shift if member == "raised" else 0.0)
                records.append(JudgmentRecord(
                    dataset="fb", pair_id=f"p{p}", member=member, judge_id=f"j#{k}",
                    status=Status.OK, score=round(score + 0.01 * p, 3),
                ))  # fmt: skip
    run = tmp_path / "fb"
    run.mkdir()
    (run / "manifest.json").write_text('{"name": "fb"}')
    (run / "judgments.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    report = compare_runs([run], metrics=["mvr"], n_boot=50)
    majority = _row(report, "j#majority").metrics["mvr"]
    # per member the median of the three samples: calibrated 0.8, raised 0.5 -> no violation
    assert (majority.value, majority.n) == (0.0, 6)
    assert _row(report, "j#1").metrics["mvr"].value == 1.0
