"""The bundled mini-corpus (end-to-end golden, retrieval corruption, evidence removal)
and the load benchmark's byte-identical second run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _fc_corpus import CORPUS, SUPPORTED_DESIGNS, corpus_text, load
from _fc_fixtures import chunk

from assay.policies.engine._canonical import write_canonical_jsonl
from assay.policies.fail_closed import (
    Decision,
    FailClosedPolicy,
    FCResponse,
    RunContext,
    VerifierInfo,
    build_certificate,
    fail_closed_metrics,
)

GOLDEN = CORPUS.parent / "golden.json"
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_fail_closed.py"
CONTEXT = RunContext(
    run_id="fc-mini-run",
    verifier=VerifierInfo(verifier_id="nli", model="tiny-nli", model_sha256="0" * 64),
    retrieval_config_sha256="1" * 64,
)


def _write(out: Path, answers: list[FCResponse]) -> dict[str, str]:
    policy = FailClosedPolicy()
    decisions = policy.decide_all(answers)
    by_id = {a.answer_id: a for a in answers}
    certificates = [
        build_certificate(policy.config, by_id[d.response.answer_id], d, CONTEXT) for d in decisions
    ]
    return {
        "claims.jsonl": write_canonical_jsonl(
            out / "claims.jsonl", [c for d in decisions for c in d.claims]
        ),
        "responses.jsonl": write_canonical_jsonl(
            out / "responses.jsonl", [d.response for d in decisions]
        ),
        "certificates.jsonl": write_canonical_jsonl(out / "certificates.jsonl", certificates),
    }


def test_the_corpus_is_what_its_builder_writes() -> None:
    assert CORPUS.read_text(encoding="utf-8") == corpus_text()
    answers = load()
    assert len(answers) == 50 and len({a.question_id for a in answers}) == 50


def test_end_to_end_golden(tmp_path: Path) -> None:
    """The corpus decided end to end: every supported design verified, no unsupported
    claim shown, the same bytes in any input order, and the golden hashes."""
    answers = load()
    decisions = FailClosedPolicy().decide_all(answers)
    designs = {c.claim_id: c.fields["design"] for a in answers for c in a.claims}
    expected = sum(d in SUPPORTED_DESIGNS for d in designs.values())
    verified = [c for d in decisions for c in d.claims if c.native == "VERIFIED"]
    assert len(verified) >= expected > 0
    uer = fail_closed_metrics(decisions).metrics["uer@strict"]
    assert uer.numerator == 0 and uer.denominator == len(verified)
    first = _write(tmp_path / "one", answers)
    second = _write(tmp_path / "two", list(reversed(answers)))
    assert first == second
    for name in first:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert first == json.loads(GOLDEN.read_text(encoding="utf-8"))


def _verified(decisions: list[Decision]) -> set[str]:
    return {c.claim_id for d in decisions for c in d.claims if c.native == "VERIFIED"}


def _with_distractor(answer: FCResponse, p_contradict: float, target: str | None) -> FCResponse:
    data: dict[str, Any] = answer.model_dump(mode="python")
    prefix = answer.answer_id
    data["chunks"].append(
        chunk(
            f"{prefix}-noise", [(f"{prefix}-n0", "Unrelated."), (f"{prefix}-n1", "Noise.")], rank=0
        )
    )
    for claim in data["claims"]:
        contradict = p_contradict if claim["claim_id"] == target else 0.05
        claim["pairs"] += [
            {
                "span_id": f"{prefix}-n{k}",
                "p_entail": 0.02,
                "p_contradict": contradict,
                "p_neutral": round(0.98 - contradict, 3),
            }  # fmt: skip
            for k in range(2)
        ]
    return FCResponse.model_validate(data)


def test_retrieval_corruption_never_adds_a_verified_claim() -> None:
    """Retrieval corruption: distractors ranked first, with low entailment."""
    answers = load()
    policy = FailClosedPolicy()
    before = policy.decide_all(answers)
    after = policy.decide_all([_with_distractor(a, 0.05, None) for a in answers])
    assert _verified(after) <= _verified(before)
    uer = [fail_closed_metrics(x).metrics["uer@strict"].fraction for x in (before, after)]
    assert uer[1] is not None and uer[0] is not None and uer[1] <= uer[0]
    targets = {d.response.answer_id: d.claims[0].claim_id for d in before if d.claims}
    hostile = policy.decide_all(
        [_with_distractor(a, 0.70, targets.get(a.answer_id)) for a in answers]
    )
    for decision in hostile:
        if decision.claims and decision.claims[0].reason != "verification_not_ok":
            assert decision.claims[0].native == "BLOCKED"


def _without(answer: FCResponse, chunk_ids: set[str]) -> FCResponse:
    data: dict[str, Any] = answer.model_dump(mode="python")
    gone = {s["span_id"] for c in data["chunks"] if c["chunk_id"] in chunk_ids for s in c["spans"]}
    data["chunks"] = [c for c in data["chunks"] if c["chunk_id"] not in chunk_ids]
    for claim in data["claims"]:
        claim["pairs"] = [p for p in claim["pairs"] if p["span_id"] not in gone]
        claim["set_scores"] = [s for s in claim["set_scores"] if not set(s["span_ids"]) & gone]
    return FCResponse.model_validate(data)


def test_removing_the_evidence_unverifies_unless_another_unit_suffices() -> None:
    """Removing a VERIFIED claim's evidence unverifies it unless another unit suffices."""
    answers = load()
    policy = FailClosedPolicy()
    designs = {c.claim_id: c.fields["design"] for a in answers for c in a.claims}
    kept_by_other_unit = 0
    for answer, decision in zip(answers, policy.decide_all(answers), strict=True):
        span_chunk = {s.span_id: c.chunk_id for c in answer.chunks or () for s in c.spans}
        for index, record in enumerate(decision.claims):
            if record.native != "VERIFIED":
                continue
            removed = {span_chunk[s] for s in record.mse}
            again = policy.decide(_without(answer, removed)).claims[index]
            if designs[record.claim_id] in ("direct", "multihop"):
                assert again.native == "UNVERIFIED"
            if again.native == "VERIFIED":
                kept_by_other_unit += 1
                assert not {span_chunk[s] for s in again.mse} & removed
                assert again.mse_score is not None and again.mse_score.p_entail >= 0.85
    assert kept_by_other_unit == sum(d == "redundant" for d in designs.values())


def test_load_benchmark_second_run_is_byte_identical() -> None:
    """The load benchmark at a small scale: the script runs twice (second time in a fresh
    process)."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--questions", "12", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    report = json.loads(done.stdout)
    assert report["identical"] is True and report["questions"] == 12
    assert report["pairs"] == 12 * 12 * 20 and report["claims"] == 12 * 12
    assert (
        report["sha256"]["certificates.jsonl"] == report["second_run_sha256"]["certificates.jsonl"]
    )
