"""Load test of the fail-closed policy (T-P2): synthetic answers of 12 claims x 20 spans
(the design's caps: 240 pairs per question), decided, certified and written as canonical
JSON lines; prints the throughput, then runs the same thing again in a fresh process
(another PYTHONHASHSEED) and checks the outputs are byte-identical (exit 1 if not).

    python benchmarks/bench_fail_closed.py [--questions 500] [--claims 12] [--spans 20]
        [--seed 0] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from assay.policies.engine._canonical import write_canonical_jsonl
from assay.policies.fail_closed import (
    FailClosedPolicy,
    FCChunk,
    FCResponse,
    RunContext,
    build_certificate,
)

SPANS_PER_CHUNK = 4
FILES = ("claims.jsonl", "responses.jsonl", "certificates.jsonl")


def _chunks(q: int, spans: int) -> list[FCChunk]:
    out = []
    for c in range((spans + SPANS_PER_CHUNK - 1) // SPANS_PER_CHUNK):
        n = min(SPANS_PER_CHUNK, spans - c * SPANS_PER_CHUNK)
        text = " ".join(f"Sentence {j} of chunk {c} in question {q}." for j in range(n))
        out.append(FCChunk.from_text(f"q{q}-k{c}", text, doc_id=f"d{q}-{c}", retrieval_rank=c + 1))
    return out


def _claim(rng: np.random.Generator, q: int, i: int, span_ids: list[str]) -> dict[str, Any]:
    entail = np.round(rng.random(len(span_ids)) ** 2, 3)
    contradict = np.round(np.minimum(rng.random(len(span_ids)) ** 8, 1.0 - entail), 3)
    pairs = [
        {
            "span_id": s,
            "p_entail": float(e),
            "p_contradict": float(c),
            "p_neutral": float(np.round(max(0.0, 1.0 - e - c), 3)),
        }  # fmt: skip
        for s, e, c in zip(span_ids, entail, contradict, strict=True)
    ]
    top = sorted(span_ids[k] for k in np.argsort(-entail, kind="stable")[:2])
    set_entail = float(np.round(rng.random(), 3))
    sets = [{"span_ids": top, "p_entail": set_entail, "p_contradict": 0.0,
             "p_neutral": round(1.0 - set_entail, 3)}]  # fmt: skip
    status = "ok" if rng.random() > 0.03 else "parse_error"
    return {
        "claim_id": f"q{q}-c{i}",
        "text": f"Claim {i} of question {q}.",
        "verification_status": status,
        "pairs": pairs,
        "set_scores": sets,
        "gold": ["supported", "unsupported", "contradicted"][int(rng.integers(0, 3))],
    }


def build(questions: int, claims: int, spans: int, seed: int) -> list[FCResponse]:
    rng = np.random.Generator(np.random.PCG64(seed))
    answers = []
    for q in range(questions):
        chunks = _chunks(q, spans)
        span_ids = [s.span_id for c in chunks for s in c.spans]
        answers.append(
            FCResponse.model_validate(
                {
                    "dataset": "bench",
                    "answer_id": f"a{q:05d}",
                    "question_id": f"q{q:05d}",
                    "question": f"Question {q}?",
                    "claims": [_claim(rng, q, i, span_ids) for i in range(claims)],
                    "chunks": chunks,
                }
            )
        )
    return answers


def apply(answers: list[FCResponse], out: Path) -> tuple[dict[str, str], dict[str, float]]:
    """Decide, certify and write; the files' sha256 and the seconds of each phase."""
    policy = FailClosedPolicy()
    start = time.perf_counter()
    decisions = policy.decide_all(answers)
    decided = time.perf_counter()
    by_id = {a.answer_id: a for a in answers}
    context = RunContext(run_id="bench")
    certificates = [
        build_certificate(policy.config, by_id[d.response.answer_id], d, context) for d in decisions
    ]
    certified = time.perf_counter()
    digests = {
        "claims.jsonl": write_canonical_jsonl(
            out / "claims.jsonl", [c for d in decisions for c in d.claims]
        ),
        "responses.jsonl": write_canonical_jsonl(
            out / "responses.jsonl", [d.response for d in decisions]
        ),
        "certificates.jsonl": write_canonical_jsonl(out / "certificates.jsonl", certificates),
    }
    written = time.perf_counter()
    return digests, {
        "decide_s": decided - start,
        "certify_s": certified - decided,
        "write_s": written - certified,
    }


def _second_run(args: argparse.Namespace, out: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    command = [sys.executable, __file__, "--child", str(out), "--questions", str(args.questions)]
    command += ["--claims", str(args.claims), "--spans", str(args.spans), "--seed", str(args.seed)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    digests: dict[str, str] = json.loads(done.stdout)
    return digests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--claims", type=int, default=12)
    parser.add_argument("--spans", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    answers = build(args.questions, args.claims, args.spans, args.seed)
    built = time.perf_counter() - started
    if args.child is not None:
        sys.stdout.write(json.dumps(apply(answers, args.child)[0]) + "\n")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-fc-") as tmp:
        first, phases = apply(answers, Path(tmp) / "one")
        second = _second_run(args, Path(tmp) / "two")
        same = all(
            (Path(tmp) / "one" / f).read_bytes() == (Path(tmp) / "two" / f).read_bytes()
            for f in FILES
        )
    report = _report(args, built, phases, first, second, same and first == second)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        for key, value in report.items():
            sys.stdout.write(f"{key:>22}: {value}\n")
    return 0 if report["identical"] else 1


def _report(
    args: argparse.Namespace,
    built: float,
    phases: dict[str, float],
    first: dict[str, str],
    second: dict[str, str],
    identical: bool,
) -> dict[str, Any]:
    pairs = args.questions * args.claims * args.spans
    policy_s = phases["decide_s"] + phases["certify_s"]
    return {
        "questions": args.questions,
        "claims": args.questions * args.claims,
        "pairs": pairs,
        "build_inputs_s": round(built, 3),
        **{k: round(v, 3) for k, v in phases.items()},
        "questions_per_s": round(args.questions / policy_s, 1) if policy_s else None,
        "pairs_per_s": round(pairs / policy_s) if policy_s else None,
        "sha256": first,
        "second_run_sha256": second,
        "identical": identical,
    }


if __name__ == "__main__":
    raise SystemExit(main())
