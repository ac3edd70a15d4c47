"""The spec as a run used it (`manifest.json`'s `spec_resolved`): what a reader needs to
re-run it without knowing this version's defaults."""

from __future__ import annotations

from typing import Any

from assay.core.settings import resolve
from assay.runs.spec._blocks import ComponentBlock
from assay.runs.spec._spec import RunSpec


def _model_blocks(spec: RunSpec, dumped: dict[str, Any]) -> list[tuple[ComponentBlock, Any]]:
    """Each model block beside its dumped copy: judges, decomposer, verifiers."""
    pairs: list[tuple[ComponentBlock, Any]] = list(
        zip(spec.judges, dumped.get("judges") or [], strict=False)
    )
    fact, fact_dumped = spec.factuality, dumped.get("factuality")
    if fact is not None and isinstance(fact_dumped, dict):
        pairs.append((fact.decomposer, fact_dumped.get("decomposer")))
        pairs += zip(fact.verifiers, fact_dumped.get("verifiers") or [], strict=False)
    return pairs


def resolved_spec(spec: RunSpec) -> dict[str, Any]:
    """The validated spec with every key (defaults filled in), each block that calls a
    chat model carrying its settings resolved over `[defaults]` (what its requests were
    built from). Secrets are redacted when the manifest is written, as for `spec`."""
    dumped: dict[str, Any] = spec.model_dump(mode="json")
    for block, out in _model_blocks(spec, dumped):
        if isinstance(out, dict) and block.calls_chat_model():
            out.update(resolve(spec.defaults, block).model_dump(mode="json"))
    return dumped
