"""The bundled mini-corpus of the fail-closed policy: 50 questions about fictional
drugs, each with a retrieval set of three chunks (sentence spans from the project's
splitter), an answer of claims with recorded NLI pair scores, and gold claim labels.

Each claim is built to one design (kept in its `fields`, which the policy never reads):
`direct`, `multihop` (two weak spans, a strong set score), `redundant` (two spans that
each entail it) are gold-supported and meant to be VERIFIED; `weak` is supported but
scored below `tau_entail`; `unsupported`, `contradicted`, `flip` (entailed by one span,
contradicted by another) are hallucinated; `failed` has a non-ok verification.

`python tests/_fc_corpus.py` rewrites tests/fixtures/fail_closed/mini_corpus.jsonl; the
test checks the committed file equals what this builds.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from assay.policies import canonical_json
from assay.policies.fail_closed import FCChunk, FCResponse

CORPUS = Path(__file__).parent / "fixtures" / "fail_closed" / "mini_corpus.jsonl"
SUPPORTED_DESIGNS = ("direct", "multihop", "redundant")

_DRUGS = [
    "Corvalex",
    "Miratonin",
    "Pelbrazine",
    "Quintarol",
    "Sorbivant",
    "Teluprex",
    "Vandomir",
    "Zelcarin",
    "Abrevane",
    "Bexolid",
    "Cindaflor",
    "Dorvimab",
    "Elkatrin",
    "Fosquinol",
    "Gravatine",
    "Halepro",
    "Imbriscan",
    "Juvarone",
    "Kelsatrol",
    "Lumiprex",
    "Mordavine",
    "Nexaquil",
    "Orbazine",
    "Praxolid",
    "Ruvestra",
]
_CONDITIONS = ["migraine", "gout", "asthma", "psoriasis", "insomnia", "acne", "angina"]
_EFFECTS = ["nausea", "headache", "dizziness", "dry mouth", "fatigue", "rash"]
_CITIES = ["Lyon", "Basel", "Leiden", "Graz", "Turku", "Porto", "Aarhus"]


def _facts(rng: random.Random, q: int) -> dict[str, Any]:
    drug, other = _DRUGS[q % len(_DRUGS)], _DRUGS[(q * 7 + 3) % len(_DRUGS)]
    if other == drug:
        other = _DRUGS[(q + 1) % len(_DRUGS)]
    return {
        "drug": drug,
        "other": other,
        "year": rng.randint(1990, 2022),
        "dose": rng.choice([50, 100, 200, 250, 400, 500]),
        "condition": rng.choice(_CONDITIONS),
        "effect": rng.choice(_EFFECTS),
        "city": rng.choice(_CITIES),
    }


def _chunks(f: dict[str, Any], q: int) -> list[FCChunk]:
    texts = [
        f"{f['drug']} was approved in {f['year']}. The maximum daily dose of {f['drug']} is "
        f"{f['dose']} mg. {f['drug']} is indicated for {f['condition']}.",
        f"The most common side effect of {f['drug']} is {f['effect']}. {f['drug']} should "
        f"not be combined with {f['other']}. Doctors use {f['drug']} to treat {f['condition']}.",
        f"{f['other']} was approved in {f['year'] - 3}. {f['other']} is made in Oslo. "
        f"{f['drug']} is produced in {f['city']}.",
    ]
    return [
        FCChunk.from_text(
            f"q{q:02d}-k{k}",
            text,
            doc_id=f"label-{f['drug'].lower()}" if k < 2 else f"registry-{q:02d}",
            page=k + 1,
            retrieval_rank=k + 1,
            retrieval_score_raw=round(12.5 - 2.25 * k, 2),
            retrieval_score=round(1.0 - 0.2 * k, 2),
        )
        for k, text in enumerate(texts)
    ]


_CLAIMS = {
    "direct": ("{drug} was approved in {year}.", "supported"),
    "multihop": ("{drug}, approved in {year}, is produced in {city}.", "supported"),
    "redundant": ("{drug} is used for {condition}.", "supported"),
    "weak": ("{drug} rarely causes {effect}.", "supported"),
    "unsupported": ("{drug} is cheaper than {other}.", "unsupported"),
    "contradicted": ("The maximum daily dose of {drug} is {double} mg.", "contradicted"),
    "flip": ("{drug} may be combined with {other}.", "contradicted"),
    "failed": ("The most common side effect of {drug} is {effect}.", "supported"),
}
# the spans (chunk, sentence) each design rests on
_SUPPORT = {
    "direct": [(0, 0)],
    "multihop": [(0, 0), (2, 2)],
    "redundant": [(0, 2), (1, 2)],
    "weak": [(1, 0)],
    "contradicted": [(0, 1)],
    "flip": [(1, 1)],
    "failed": [(1, 0)],
}


def _score(rng: random.Random, design: str, key: tuple[int, int]) -> tuple[float, float]:
    """(p_entail, p_contradict) of one pair."""
    special = key in _SUPPORT.get(design, [])
    if not special:
        return round(rng.uniform(0.01, 0.30), 3), round(rng.uniform(0.0, 0.15), 3)
    if design in ("direct", "redundant", "failed"):
        return round(rng.uniform(0.86, 0.98), 3), round(rng.uniform(0.0, 0.05), 3)
    if design == "multihop":
        return round(rng.uniform(0.50, 0.70), 3), round(rng.uniform(0.0, 0.05), 3)
    if design == "weak":
        return round(rng.uniform(0.55, 0.84), 3), round(rng.uniform(0.0, 0.10), 3)
    return round(rng.uniform(0.02, 0.10), 3), round(rng.uniform(0.75, 0.95), 3)


def _claim(
    rng: random.Random, f: dict[str, Any], chunks: list[FCChunk], q: int, i: int, design: str
) -> dict[str, Any]:
    template, gold = _CLAIMS[design]
    pairs = []
    for c, chunk in enumerate(chunks):
        for s, span in enumerate(chunk.spans):
            entail, contradict = _score(rng, design, (c, s))
            if design == "flip" and (c, s) == (0, 0):
                entail = round(rng.uniform(0.86, 0.95), 3)  # entailed here, contradicted there
            contradict = min(contradict, round(1.0 - entail, 3))
            pairs.append(
                {
                    "span_id": span.span_id,  # chunk, rank and offsets: from the retrieval set
                    "p_entail": entail,
                    "p_contradict": contradict,
                    "p_neutral": round(1.0 - entail - contradict, 3),
                    "score_source": "nli",
                }
            )
    sets = []
    if design == "multihop":
        ids = sorted(chunks[c].spans[s].span_id for c, s in _SUPPORT["multihop"])
        entail = round(rng.uniform(0.86, 0.95), 3)
        sets.append({"span_ids": ids, "p_entail": entail, "p_contradict": 0.02,
                     "p_neutral": round(0.98 - entail, 3)})  # fmt: skip
    return {
        "claim_id": f"q{q:02d}-c{i}",
        "text": template.format(**f, double=f["dose"] * 2),
        "type": "fact",
        "fields": {"design": design},
        "evidence_candidates": [chunks[0].doc_id] if design != "unsupported" else ["doc 3"],
        "verification_status": "parse_error" if design == "failed" else "ok",
        "pairs": pairs,
        "set_scores": sets,
        "gold": gold,
    }


def _designs(rng: random.Random, q: int) -> list[str]:
    if q == 17:
        return ["failed", "failed"]  # every verification failed: refuse
    if q == 31:
        return []  # no claim: abstain
    designs = ["direct", rng.choice(["multihop", "redundant"])]
    designs += rng.sample(
        ["weak", "unsupported", "contradicted", "flip", "failed"], k=rng.randint(1, 4)
    )
    rng.shuffle(designs)
    return designs


def build() -> list[FCResponse]:
    rng = random.Random(20240610)
    answers = []
    for q in range(50):
        facts = _facts(rng, q)
        chunks = _chunks(facts, q)
        claims = [_claim(rng, facts, chunks, q, i, d) for i, d in enumerate(_designs(rng, q))]
        answers.append(
            FCResponse(
                dataset="fc-mini",
                answer_id=f"a{q:02d}",
                question_id=f"q{q:02d}",
                question=f"What should a patient know about {facts['drug']}?",
                claims=claims,  # type: ignore[arg-type]
                chunks=chunks,
            )
        )
    return answers


def corpus_text() -> str:
    """One canonical JSON line per answer, null fields left out."""
    return "".join(
        canonical_json(a.model_dump(mode="json", exclude_none=True)) + "\n" for a in build()
    )


def load() -> list[FCResponse]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [FCResponse.model_validate_json(line) for line in lines]


if __name__ == "__main__":
    CORPUS.parent.mkdir(parents=True, exist_ok=True)
    CORPUS.write_text(corpus_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {CORPUS} ({len(build())} questions)\n")
