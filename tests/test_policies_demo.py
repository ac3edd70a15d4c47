"""The no-key demo of `examples/policies.toml`, exactly as a user runs it:
`assay run examples/policies.toml` then `assay policies apply runs/policies-demo --policy
examples/policies.toml`. All three kinds write their files and print their metrics; the
gate's decisions follow from its recorded scores and the example's thresholds; the
fail-closed rendering behind it verifies claims only on evidence the gate kept."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay, lines

from assay.datasets import load_answers

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE = EXAMPLES / "policies.toml"
FILES = {
    "cert": ("claims.jsonl", "responses.jsonl", "certificates.jsonl"),
    "gate": ("gate_decisions.jsonl",),
    "render": ("claims.jsonl", "responses.jsonl", "certificates.jsonl"),
}


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


def _policy(name: str) -> dict[str, Any]:
    blocks = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))["policies"]
    found: dict[str, Any] = next(b for b in blocks if b["name"] == name)
    return found


def test_every_policy_prints_its_metrics_and_writes_its_files(demo: tuple[Path, str]) -> None:
    run_dir, out = demo
    for header in (
        "cert (claim_selective v1)",
        "gate (evidence_gate v1)",
        "render (fail_closed v1)",
    ):
        assert f"{header} · 8 responses" in out
    for metric in ("uccr_cert", "coverage", "abstention_rate", "verified_rate", "blocked_rate"):
        assert metric in out
    for name, records in FILES.items():
        folder = run_dir / "policies" / name
        manifest = json.loads((folder / "manifest.json").read_text())
        assert set(manifest["outputs"]) == {*records, "metrics.json"}
        for file, digest in manifest["outputs"].items():
            assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
        assert json.loads((folder / "metrics.json").read_text())


def test_the_gate_corpus_is_the_demo_evidence() -> None:
    """The gate searches the passages the bundled answers cite, under the same ids."""
    corpus = [
        json.loads(x) for x in (EXAMPLES / "policies-passages.jsonl").read_text().splitlines()
    ]
    dataset = load_answers("builtin:factuality-demo")
    cited = [(p.id, p.title, p.text) for item in dataset.items for p in item.evidence]
    assert [(p["id"], p["title"], p["text"]) for p in corpus] == cited


def test_gate_decisions_follow_the_recorded_scores(demo: tuple[Path, str]) -> None:
    """pass iff s_initial >= tau_min and max(s_initial, s_expanded) >= tau (§3.2); the
    demo answers some questions and abstains on others, refusing none."""
    run_dir, _ = demo
    block = _policy("gate")
    tau, tau_min = float(block["tau"]), float(block["tau_min"])
    records = {r["question_id"]: r for r in lines(run_dir / "gates.jsonl")}
    decisions = lines(run_dir / "policies" / "gate" / "gate_decisions.jsonl")
    assert len(decisions) == len(records) == 8
    for d in decisions:
        r = records[d["question_id"]]
        s_initial, s_expanded = r["s_initial"] or 0.0, r["s_expanded"] or 0.0
        passes = s_initial >= tau_min and max(s_initial, s_expanded) >= tau
        assert d["outcome"] == ("pass" if passes else "abstain"), d["question_id"]
        if passes:  # the evidence set is the question's own passage, nothing off-topic
            assert [c["passage_id"] for c in d["citations"]] == [f"{d['question_id']}-p1"]
    outcomes = [d["outcome"] for d in decisions]
    assert outcomes.count("pass") >= 1 and outcomes.count("abstain") >= 1
    assert "refuse" not in outcomes


def test_fail_closed_behind_the_gate_verifies_only_on_kept_evidence(
    demo: tuple[Path, str],
) -> None:
    """VERIFIED needs a pair on the gate's evidence with p_entail >= tau_entail, and no
    pair with p_contradict >= tau_contradict; an abstained question shows no claim."""
    run_dir, _ = demo
    block = _policy("render")
    assert block["after"] == "gate"
    tau_e, tau_c = float(block["tau_entail"]), float(block["tau_contradict"])
    pairs = {v["claim_id"]: v["pairs"] for v in lines(run_dir / "verifications.jsonl")}
    gate = {d["question_id"]: d for d in lines(run_dir / "policies/gate/gate_decisions.jsonl")}
    claims = lines(run_dir / "policies" / "render" / "claims.jsonl")
    for c in claims:
        decision = gate[c["answer_id"]]
        kept = {x["passage_id"] for x in decision["citations"]}
        entailing = [p for p in pairs[c["claim_id"]] if p["passage_id"] in kept]
        expected = any(p["p_entail"] >= tau_e for p in entailing) and all(
            p["p_contradict"] < tau_c for p in entailing
        )
        assert (c["native"] == "VERIFIED") == expected, c["claim_id"]
        if decision["outcome"] == "abstain":
            assert c["reason"] == "gate_abstained"
    natives = [c["native"] for c in claims]
    assert natives.count("VERIFIED") >= 1 and natives.count("BLOCKED") >= 1
    responses = lines(run_dir / "policies" / "render" / "responses.jsonl")
    abstained = {q for q, d in gate.items() if d["outcome"] == "abstain"}
    assert {r["answer_id"] for r in responses if r["reason"] == "gate_abstained"} == abstained
