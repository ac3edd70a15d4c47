"""bench_throughput's workload: the synthetic ForceBench pairs, the spec and the exact
messages assay sends, shared with bench_memory, bench_batch and profile_phase so every
benchmark measures the same judgments."""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import json
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

CONTENT = '{"label": "fully_supported", "confidence": 0.9, "rationale": "ok"}'
MODEL = "openai/bench"
PROMPT_REF = "generic-support@1"

_AXES = ["relation", "modality", "scope", "temporal", "numeric"]
_EVIDENCE = (
    "A {year} cohort study that followed {n:,} adults in {place} for {years} years found that "
    "participants who {exposure} had a {pct}% lower incidence of {outcome} than those who did "
    "not. The authors stressed that the study was observational and could not rule out "
    "confounding by diet or physical activity. (record {i:06d})"
)
_PLACES = ["Denmark", "Ohio", "Japan", "Chile", "Kenya", "Norway", "Quebec", "Bavaria"]
_EXPOSURES = [
    "drank three or more cups of coffee daily",
    "walked at least 30 minutes a day",
    "ate fish twice a week",
    "slept seven to eight hours a night",
]
_OUTCOMES = ["type 2 diabetes", "stroke", "hip fracture", "depression", "heart failure"]


# --------------------------------------------------------------------------- helpers


def _pkg(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "n/a"


def machine_info() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "litellm": _pkg("litellm"),
        "openai": _pkg("openai"),
        "httpx": _pkg("httpx"),
        "aiohttp": _pkg("aiohttp"),
        "pydantic": _pkg("pydantic"),
        "assay": _pkg("assay"),
    }


def make_pairs(n_pairs: int, tag: str = "") -> list[dict[str, Any]]:
    """Distinct ForceBench pairs; every claim and passage carries a unique record number."""
    pairs = []
    for i in range(n_pairs):
        exposure = _EXPOSURES[i % len(_EXPOSURES)]
        outcome = _OUTCOMES[i % len(_OUTCOMES)]
        place = _PLACES[i % len(_PLACES)]
        evidence = _EVIDENCE.format(
            year=2000 + i % 24,
            n=1000 + (i * 37) % 9000,
            place=place,
            years=3 + i % 9,
            exposure=exposure,
            pct=5 + i % 30,
            outcome=outcome,
            i=i,
        )
        pairs.append(
            {
                "id": f"bench{tag}-{i:06d}",
                "question": f"Is {exposure.split(' ', 1)[1]} linked to {outcome} risk? (#{tag}{i})",
                "evidence": evidence,
                "calibrated_claim": (
                    f"In a cohort from {place}, people who {exposure} were observed to have a "
                    f"lower incidence of {outcome} (record {tag}{i:06d})."
                ),
                "raised_claim": (
                    f"In a cohort from {place}, {exposure.replace('drank', 'drinking')} was shown "
                    f"to prevent {outcome} (record {tag}{i:06d})."
                ),
                "axis": _AXES[i % len(_AXES)],
                "severity": 1 + i % 3,
            }
        )
    return pairs


def write_dataset(path: Path, pairs: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p) + "\n")


def write_spec(
    path: Path,
    *,
    dataset: Path,
    api_base: str,
    concurrency: int,
    bootstrap: int | None,
    name: str = "bench",
    transport: str = "litellm",
) -> None:
    lines = [
        f'name = "{name}"',
        'description = "assay throughput benchmark (fake server)"',
    ]
    if bootstrap is not None:
        lines.append(f"bootstrap = {bootstrap}")
    lines += [
        "",
        "[[datasets]]",
        f'name = "{name}-data"',
        f"path = {json.dumps(str(dataset))}",
        "",
        "[[judges]]",
        f'models = ["{MODEL}"]',
        f'prompts = ["{PROMPT_REF}"]',
        f"api_base = {json.dumps(api_base)}",
        f"max_concurrency = {concurrency}",
        'structured_output = "off"',
        f'transport = "{transport}"',
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def render_messages(pairs: list[dict[str, Any]]) -> list[list[dict[str, str]]]:
    """The exact chat messages assay sends for each pair member, in plan order."""
    from assay.prompts import PromptRegistry

    prompt = PromptRegistry().get(PROMPT_REF)
    out = []
    for p in pairs:
        for claim in (p["calibrated_claim"], p["raised_claim"]):
            msgs = prompt.render(
                {"claim": claim, "evidence": p["evidence"], "question": p["question"]}
            )
            out.append([m.model_dump() for m in msgs])
    return out
