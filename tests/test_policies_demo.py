"""The no-key demo of `examples/policies.toml`, exactly as a user runs it:
`assay run examples/policies.toml` then `assay policies apply runs/policies-demo --policy
examples/policies.toml`. The demo's answers carry gold labels, so every metric printed
here is checked against counts recomputed from the written records and the gold labels
of `examples/policies-answers.jsonl` (never against pinned numbers); the labels
themselves are checked for coherence; and the example's thresholds are what `tune
--split dev` selects."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay
from sklearn.metrics import accuracy_score, confusion_matrix, precision_score, recall_score

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE = EXAMPLES / "policies.toml"
ANSWERS = EXAMPLES / "policies-answers.jsonl"
FILES = {
    "cert": ("claims.jsonl", "responses.jsonl", "certificates.jsonl"),
    "gate": ("gate_decisions.jsonl",),
    "render": ("claims.jsonl", "responses.jsonl", "certificates.jsonl"),
}
USABLE = {"certified", "condition_limited"}
STATUS_OF_LABEL = {"supported": USABLE, "unsupported": {"omitted"}, "contradicted": {"conflicting"}}
OUTCOME_ACTION = {"answer_full": "full", "answer_partial": "partial", "conflict": "conflict"}
Key = tuple[str, str]


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


ROWS = _read(ANSWERS)
GOLD = {(r["id"], c["id"]): c for r in ROWS for c in r["gold_claims"]}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The run directory and what `policies apply` printed, run from a fresh folder."""
    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        code, _, err = assay("run", EXAMPLE)
        assert code == 0, err
        code, out, err = assay("policies", "apply", "runs/policies-demo", "--policy", EXAMPLE)
    assert code == 0, err
    assert "no entailment probability" not in err
    return root / "runs" / "policies-demo", out


@pytest.fixture
def fresh_run(demo: tuple[Path, str], tmp_path: Path) -> Path:
    """A copy of the demo run without its policy outputs, for commands that write."""
    run = tmp_path / "run"
    shutil.copytree(demo[0], run, ignore=shutil.ignore_patterns("policies"))
    return run


def _policy(name: str) -> dict[str, Any]:
    blocks = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))["policies"]
    found: dict[str, Any] = next(b for b in blocks if b["name"] == name)
    return found


def _metrics(run_dir: Path, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run_dir / "policies" / name / "metrics.json").read_text())
    return found


def _ratio(metric: dict[str, Any]) -> Fraction | None:
    if metric["denominator"] == 0:
        return None
    return Fraction(metric["numerator"], metric["denominator"])


def _share(hits: int, total: int) -> Fraction | None:
    return Fraction(hits, total) if total else None


def test_every_policy_prints_its_metrics_and_writes_its_files(demo: tuple[Path, str]) -> None:
    run_dir, out = demo
    for name in FILES:
        kind = _policy(name)["kind"]
        assert f"{name} ({kind} v1) · {len(ROWS)} responses" in out
        folder = run_dir / "policies" / name
        manifest = json.loads((folder / "manifest.json").read_text())
        assert set(manifest["outputs"]) == {*FILES[name], "metrics.json"}
        for file, digest in manifest["outputs"].items():
            assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
    printed = {tuple(line.split()[:2]) for line in out.splitlines()}
    for name in ("cert", "render"):
        metrics = _metrics(run_dir, name)
        for key, metric in metrics.get("metrics", metrics).items():
            if isinstance(metric, dict) and metric.get("value") is not None:
                assert (key, f"{metric['value']:.4f}") in printed, (name, key)


def test_the_gold_labels_are_coherent() -> None:
    """Claim labels agree with claim statuses; a has_evidence answer's gold action is the
    action rule applied to its claims' gold statuses, a no_evidence answer's is
    abstain; gold_support is 1, 0.5 or 0 as all, some or none of its claims are supported.
    Both splits, every gold action and both evidence labels occur."""
    for row in ROWS:
        claims = row["gold_claims"]
        for c in claims:
            assert c["gold_status"] in STATUS_OF_LABEL[c["label"]], (row["id"], c["id"])
        assert row["gold_action"] == _gold_action(row), row["id"]
        supported = [c["label"] == "supported" for c in claims]
        assert row["gold_support"] == (1 if all(supported) else 0.5 if any(supported) else 0)
    assert {r["split"] for r in ROWS} == {"dev", "test"}
    assert {r["gold_action"] for r in ROWS} == {"full", "partial", "conflict", "abstain"}
    assert {r["evidence_label"] for r in ROWS} == {"has_evidence", "no_evidence"}
    assert {c["label"] for c in GOLD.values()} == set(STATUS_OF_LABEL)


def _gold_action(row: dict[str, Any]) -> str:
    if row["evidence_label"] == "no_evidence":
        return "abstain"
    claims = row["gold_claims"]
    critical = [c.get("critical", True) for c in claims]
    if not any(c["gold_status"] in USABLE for c in claims):
        return "abstain"
    if any(c["gold_status"] == "conflicting" and k for c, k in zip(claims, critical, strict=True)):
        return "conflict"
    required = [c.get("required", k) for c, k in zip(claims, critical, strict=True)]
    needed = [c for c, r in zip(claims, required, strict=True) if r] or claims
    return "full" if all(c["gold_status"] == "certified" for c in needed) else "partial"


def test_the_gate_corpus_holds_every_cited_passage() -> None:
    """The gate searches the passages the answers cite, under the same ids, and no more
    than one passage per id."""
    corpus = _read(EXAMPLES / "policies-passages.jsonl")
    by_id = {p["id"]: p for p in corpus}
    assert len(by_id) == len(corpus)
    for row in ROWS:
        for passage in row["evidence"]:
            assert by_id[passage["id"]] == passage, passage["id"]


def test_claim_selective_metrics_match_the_gold_counts(demo: tuple[Path, str]) -> None:
    """PAU, PAU precision, F1, UCCR (gold), critical coverage and action accuracy from the
    written claim statuses and response outcomes against the dataset's gold labels."""
    run_dir, _ = demo
    claims = _read(run_dir / "policies" / "cert" / "claims.jsonl")
    expressed = {(c["answer_id"], c["claim_id"]) for c in claims if c["native"] in USABLE}
    usable = {k for k, g in GOLD.items() if g["gold_status"] in USABLE}
    critical = {k for k, g in GOLD.items() if g.get("critical", True)}
    shown_critical = expressed & critical
    m = _metrics(run_dir, "cert")
    assert _ratio(m["pau"]) == _share(len(expressed & usable), len(usable))
    assert _ratio(m["pau_precision"]) == _share(len(expressed & usable), len(expressed))
    f1 = _share(2 * len(expressed & usable), len(expressed) + len(usable))
    assert _ratio(m["f1"]) == f1
    assert _ratio(m["uccr_gold"]) == _share(len(shown_critical - usable), len(shown_critical))
    assert _ratio(m["critical_coverage"]) == _share(len(shown_critical), len(critical))
    gold = {r["id"]: r["gold_action"] for r in ROWS}
    responses = _read(run_dir / "policies" / "cert" / "responses.jsonl")
    actions = [OUTCOME_ACTION.get(r["outcome"], r["outcome"]) for r in responses]
    right = sum(a == gold[r["answer_id"]] for a, r in zip(actions, responses, strict=True))
    assert _ratio(m["action_accuracy"]) == _share(right, len(ROWS))
    assert 0 < right < len(ROWS)  # the lexical baseline gets some, not all, actions right


def test_gate_metrics_match_sklearn_on_the_gold_labels(demo: tuple[Path, str]) -> None:
    """Abstention is the positive class: accuracy, precision, recall, specificity
    and coverage agree with scikit-learn on (evidence_label, outcome); factuality is the
    mean gold_support over the questions the gate passed."""
    run_dir, _ = demo
    label = {r["id"]: r["evidence_label"] == "no_evidence" for r in ROWS}
    decisions = _read(run_dir / "policies" / "gate" / "gate_decisions.jsonl")
    assert {d["outcome"] for d in decisions} == {"pass", "abstain"}
    y_true = [label[d["question_id"]] for d in decisions]
    y_pred = [d["outcome"] == "abstain" for d in decisions]
    m = _metrics(run_dir, "gate")["metrics"]
    approx: Callable[[float], Any] = pytest.approx
    assert m["abstention_accuracy"]["value"] == approx(accuracy_score(y_true, y_pred))
    assert m["abstention_precision"]["value"] == approx(precision_score(y_true, y_pred))
    assert m["abstention_recall"]["value"] == approx(recall_score(y_true, y_pred))
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[False, True]).ravel()
    assert _ratio(m["specificity"]) == Fraction(int(tn), int(tn + fp))
    assert _ratio(m["coverage"]) == Fraction(int(tn + fn), len(decisions))
    assert _ratio(m["selective_risk_label"]) == _share(int(fn), int(tn + fn))
    support = {r["id"]: Fraction(r["gold_support"]) for r in ROWS}
    passed = [support[d["question_id"]] for d in decisions if d["outcome"] == "pass"]
    assert m["factuality"]["value"] == approx(float(sum(passed) / len(passed)))
    assert tp > 0 and fn > 0  # the lexical gate catches some no_evidence questions, not all


def test_fail_closed_metrics_match_the_gold_counts(demo: tuple[Path, str]) -> None:
    """VCP, VC, UER, CER and the catch rate from the written render states and the
    dataset's claim labels; the demo verifies only supported claims and blocks some."""
    run_dir, _ = demo
    claims = _read(run_dir / "policies" / "render" / "claims.jsonl")
    state = {(c["answer_id"], c["claim_id"]): c["native"] for c in claims}
    assert set(state) == set(GOLD)
    gold = {k: g["label"] for k, g in GOLD.items()}
    verified = {k for k, s in state.items() if s == "VERIFIED"}
    mixed = {k for k, s in state.items() if s in ("VERIFIED", "UNVERIFIED")}
    supported = {k for k, g in gold.items() if g == "supported"}
    contradicted = {k for k, g in gold.items() if g == "contradicted"}
    m = _metrics(run_dir, "render")["metrics"]
    assert _ratio(m["vcp"]) == _share(len(verified & supported), len(verified))
    assert _ratio(m["vc"]) == _share(len(verified & supported), len(supported))
    assert _ratio(m["uer@strict"]) == _share(len(verified - supported), len(verified))
    assert _ratio(m["uer@mixed"]) == _share(len(mixed - supported), len(mixed))
    assert _ratio(m["cer@mixed"]) == _share(len(mixed & contradicted), len(mixed))
    hallucinated = set(gold) - supported
    assert _ratio(m["catch_rate"]) == _share(len(hallucinated - verified), len(hallucinated))
    blocked = [k for k, s in state.items() if s == "BLOCKED"]
    assert _ratio(m["blocked_rate"]) == _share(len(blocked), len(state))
    assert verified and blocked


def test_gate_decisions_follow_the_recorded_scores(demo: tuple[Path, str]) -> None:
    """pass iff s_initial >= tau_min and max(s_initial, s_expanded) >= tau; a
    pass cites the candidates scored at tau_min or more; no question is refused."""
    run_dir, _ = demo
    block = _policy("gate")
    tau, tau_min = float(block["tau"]), float(block["tau_min"])
    records = {r["question_id"]: r for r in _read(run_dir / "gates.jsonl")}
    decisions = _read(run_dir / "policies" / "gate" / "gate_decisions.jsonl")
    assert len(decisions) == len(records) == len(ROWS)
    for d in decisions:
        r = records[d["question_id"]]
        s_initial, s_expanded = r["s_initial"] or 0.0, r["s_expanded"] or 0.0
        passes = s_initial >= tau_min and max(s_initial, s_expanded) >= tau
        assert d["outcome"] == ("pass" if passes else "abstain"), d["question_id"]
        admissible = {c["passage_id"] for c in r["candidates"] if c["rerank_score"] >= tau_min}
        cited = {c["passage_id"] for c in d["citations"]}
        assert cited == (admissible if passes else set()), d["question_id"]


def test_fail_closed_behind_the_gate_verifies_only_on_kept_evidence(
    demo: tuple[Path, str],
) -> None:
    """VERIFIED needs a pair on the gate's evidence with p_entail >= tau_entail, and no
    pair with p_contradict >= tau_contradict; an abstained question shows no claim."""
    run_dir, _ = demo
    block = _policy("render")
    assert block["after"] == "gate"
    tau_e, tau_c = float(block["tau_entail"]), float(block["tau_contradict"])
    verifications = _read(run_dir / "verifications.jsonl")
    pairs = {(v["answer_id"], v["claim_id"]): v.get("pairs", []) for v in verifications}
    gate = {d["question_id"]: d for d in _read(run_dir / "policies/gate/gate_decisions.jsonl")}
    for c in _read(run_dir / "policies" / "render" / "claims.jsonl"):
        decision = gate[c["answer_id"]]
        kept = {x["passage_id"] for x in decision["citations"]}
        on_kept = [p for p in pairs[c["answer_id"], c["claim_id"]] if p["passage_id"] in kept]
        expected = any(p["p_entail"] >= tau_e for p in on_kept) and all(
            p["p_contradict"] < tau_c for p in on_kept
        )
        assert (c["native"] == "VERIFIED") == expected, c["claim_id"]
        if decision["outcome"] == "abstain":
            assert c["reason"] == "gate_abstained"
    responses = _read(run_dir / "policies" / "render" / "responses.jsonl")
    abstained = {q for q, d in gate.items() if d["outcome"] == "abstain"}
    assert {r["answer_id"] for r in responses if r["reason"] == "gate_abstained"} == abstained


def _selected_on(run: Path, name: str) -> dict[str, str]:
    code, _, err = assay(
        "policies", "tune", run, "--policy", EXAMPLE, "--name", name, "--split", "dev"
    )
    assert code == 0, err
    result = json.loads((run / "policies" / name / "tune" / "result.json").read_text())
    assert result["split"] == "dev"
    selected: dict[str, str] = result["selected"]
    return selected


def test_the_example_thresholds_are_what_tune_selects_on_dev(fresh_run: Path) -> None:
    """The comments of examples/policies.toml say its thresholds come from `tune --split
    dev`: each kind's default tuning on the dev answers selects exactly them."""
    block = _policy("cert")
    assert _selected_on(fresh_run, "cert") == block["thresholds"]
    assert block["tuned"] == {"split": "dev"}
    gate = _policy("gate")
    assert _selected_on(fresh_run, "gate") == {"tau": gate["tau"], "tau_min": gate["tau_min"]}
    render = _policy("render")
    wanted = {k: render[k] for k in ("tau_entail", "tau_contradict")}
    assert _selected_on(fresh_run, "render") == wanted


def test_split_test_holds_out_the_dev_answers(fresh_run: Path) -> None:
    """`apply --split test` decides only test answers, out of sample; `--split dev` is
    the split cert was tuned on, so its metrics say in_sample."""
    for split in ("test", "dev"):
        code, out, err = assay(
            "policies", "apply", fresh_run, "--policy", EXAMPLE, "--split", split
        )
        assert code == 0, err
        wanted = {r["id"] for r in ROWS if r["split"] == split}
        for name in FILES:
            assert f"{name} ({_policy(name)['kind']} v1) · {len(wanted)} responses" in out
        responses = _read(fresh_run / "policies" / "cert" / "responses.jsonl")
        assert {r["answer_id"] for r in responses} == wanted
        assert _metrics(fresh_run, "cert")["in_sample"] is (split == "dev")
        assert ("in-sample" in err) is (split == "dev")


OTHERS = """
[[policies]]
name = "cert-b"
kind = "claim_selective"
[policies.thresholds]
support = "0.35"
conflict = "0.55"
condition_limited = "0.30"
limitation = "0.50"

[[policies]]
name = "gate-b"
kind = "evidence_gate"
tau = "0.60"
tau_min = "0.30"

[[policies]]
name = "render-b"
kind = "fail_closed"
after = "gate-b"
tau_entail = "0.90"
tau_contradict = "0.50"
"""


def _compare(run: Path, a: str, b: str) -> dict[str, Any]:
    code, _, err = assay("policies", "compare", run, "--a", a, "--b", b, "--resamples", "0")
    assert code == 0, err
    found: dict[str, Any] = json.loads((run / "policies" / a / "compare" / f"{b}.json").read_text())
    return found


def test_compare_decides_the_answers_both_policies_were_applied_to(fresh_run: Path) -> None:
    """After `apply --split test`, compare's a and b values are each policy's own metrics
    on the test answers; policies applied to different splits are refused (exit 2)."""
    others = fresh_run.parent / "others.toml"
    others.write_text(OTHERS, encoding="utf-8")
    for policy in (EXAMPLE, others):
        code, _, err = assay("policies", "apply", fresh_run, "--policy", policy, "--split", "test")
        assert code == 0, err
    for a in FILES:
        result = _compare(fresh_run, a, f"{a}-b")
        for side, name in (("a", a), ("b", f"{a}-b")):
            applied = _metrics(fresh_run, name)
            applied = applied.get("metrics", applied)
            for delta in result["deltas"]:
                want = applied[delta["metric"]]
                got = delta[side]
                assert (got["numerator"], got["denominator"]) == (
                    want["numerator"],
                    want["denominator"],
                ), (name, delta["metric"])
    code, _, err = assay("policies", "apply", fresh_run, "--policy", others, "--split", "dev")
    assert code == 0, err
    code, _, err = assay("policies", "compare", fresh_run, "--a", "cert", "--b", "cert-b")
    assert code == 2 and "--split" in err and len(err.strip().splitlines()) == 1


def test_the_tutorial_shows_the_example_spec() -> None:
    """The policies tutorial shows examples/policies.toml (comments left out): the block
    must say what the file says."""
    page = EXAMPLES.parent / "docs" / "tutorials" / "policies.md"
    chapter = page.read_text(encoding="utf-8").split("## The demo: 24 answers", 1)[1]
    block = chapter.split("```toml\n", 1)[1].split("\n```", 1)[0]
    assert tomllib.loads(block) == tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
