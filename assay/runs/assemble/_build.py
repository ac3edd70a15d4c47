"""What a run checks before it starts (local extras, credentials, the output directory),
and the judges of a spec for callers that hold a cache (building itself lives in
`assay.runs.assemble._components`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.judging import Judge
from assay.datasets import ItemsDataset, PairsFile, load_items, scan_pairs
from assay.errors import AssayError, SpecError
from assay.models import ResponseCache, is_local
from assay.runs.assemble._components import (
    ClientPool,
    ComponentContext,
    at_spec_field,
    decoding_for,
    model_config_for,
)
from assay.runs.assemble._components import build_judges as build_spec_judges
from assay.runs.spec._spec import DatasetSpec, ItemsDatasetSpec, LoadedSpec
from assay.runs.store._rundir import check_new_dir

__all__ = [
    "ClientPool",
    "at_spec_field",
    "build_judges",
    "check_before_run",
    "check_local_extra",
    "decoding_for",
    "factuality_clients_to_check",
    "load_forcebench_datasets",
    "load_items_datasets",
    "model_config_for",
    "preflight_clients",
]


def build_judges(
    loaded: LoadedSpec,
    *,
    cache: ResponseCache | None,
    use_cache: bool = True,
    refresh_cache: bool = False,
    pool: ClientPool | None = None,
) -> list[Judge]:
    """All judges of a spec (see `assay.runs.assemble._components.build_judges`, which takes a
    ready `ComponentContext`); kept for callers that hold a cache, not a context."""
    ctx = ComponentContext(
        loaded, pool or ClientPool(cache), use_cache=use_cache, refresh_cache=refresh_cache
    )
    return build_spec_judges(loaded, ctx)


LOCAL_MODULES = ("torch", "transformers", "sentence_transformers")


def _local_uses(loaded: LoadedSpec) -> list[tuple[str, str]]:
    """(field, what) for every part of the spec that runs a transformers model locally:
    an hf/, hf-nli/ or hf-ce/ model in any block (the gate's reranker, unless it is the
    lexical baseline), or a dense retrieval model."""
    spec = loaded.spec
    uses = [
        (f"judges[{i}].models[{k}]", f"model {m!r}")
        for i, block in enumerate(spec.judges)
        for k, m in enumerate(block.models)
        if is_local(m)
    ]
    if spec.gate is not None and spec.gate.local_model:
        uses.append(("gate.model", f"reranker {spec.gate.model!r}"))
    if spec.gate is not None and spec.gate.dense_model:
        uses.append(("gate.dense_model", "dense retrieval"))
    fact = spec.factuality
    if fact is None:
        return uses
    if is_local(fact.decomposer.model):
        uses.append(("factuality.decomposer.model", f"model {fact.decomposer.model!r}"))
    for i, v in enumerate(fact.verifiers):
        if is_local(v.model):
            uses.append((f"factuality.verifiers[{i}]", f'verifier kind "{v.kind}"'))
        elif v.params().get("dense_model"):
            uses.append((f"factuality.verifiers[{i}].dense_model", "dense retrieval"))
    return uses


def check_local_extra(loaded: LoadedSpec) -> None:
    """Stop before the run directory exists when a local model needs torch/transformers
    that are not installed, instead of failing mid-run with a half-written directory."""
    from importlib.util import find_spec

    uses = _local_uses(loaded)
    if not uses:
        return
    missing = [name for name in LOCAL_MODULES if find_spec(name) is None]
    if missing:
        field, what = uses[0]
        raise SpecError(
            f"{what} needs the local extra ({' and '.join(missing)} not installed): "
            "pip install 'assay[local]'",
            file=loaded.path,
            field=field,
        )


def check_before_run(loaded: LoadedSpec, output_override: str | None) -> None:
    """Everything that can be refused before the run directory is created."""
    check_new_dir(
        loaded.output_dir(output_override),
        what="output directory",
        fix="choose a directory path with --output-dir or `output_dir` in the spec",
        spec=None if output_override is not None else loaded.path,
        field=None if output_override is not None else "output_dir",
    )
    check_local_extra(loaded)


def factuality_clients_to_check(stage: Any, existing: dict[str, Any] | None) -> list[Any]:
    """What the factuality stage may call this session (LLM clients, local NLI models):
    all of it, unless a finished run is merely being resumed."""
    if stage is None:
        return []
    fact = (existing or {}).get("factuality") or {}
    planned = fact.get("planned_verifications")
    if planned is not None and fact.get("recorded_verifications") == planned:
        return []
    components = [stage.decomposer, *stage.verifiers]
    # an LLM component checks its client; a local NLI verifier checks itself
    return [getattr(c, "client", None) or c for c in components]


def preflight_clients(clients: list[Any], spec_path: str) -> None:
    """Missing credentials or an unusable local model stop the run here, before the run
    directory exists, naming the spec whose model needs them."""
    for client in clients:
        check = getattr(client, "preflight", None)
        if not callable(check):
            continue
        try:
            check()
        except AssayError as exc:
            if exc.file is not None:
                raise
            raise SpecError(exc.message, file=spec_path, field=exc.field) from None


def load_forcebench_datasets(loaded: LoadedSpec) -> list[PairsFile]:
    """The spec's pair [[datasets]], each error located at its `datasets[i].path`;
    validated now, read again as the run judges them (`PairsFile`)."""
    out = []
    for i, d in enumerate(loaded.spec.datasets):
        if isinstance(d, DatasetSpec):
            with at_spec_field(loaded.path, f"datasets[{i}].path"):
                base = Path(loaded.base_dir)
                out.append(scan_pairs(d.path, name=d.name, base=base, delimiter=d.delimiter))
    return out


def load_items_datasets(loaded: LoadedSpec) -> list[ItemsDataset]:
    """The spec's `kind = "items"` [[datasets]]; a file's own errors name file and line."""
    out = []
    for i, d in enumerate(loaded.spec.datasets):
        if isinstance(d, ItemsDatasetSpec):
            with at_spec_field(loaded.path, f"datasets[{i}].path"):
                out.append(load_items(d, base=Path(loaded.base_dir)))
    return out
