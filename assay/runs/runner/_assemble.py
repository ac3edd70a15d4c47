"""Everything a run is made of, built and checked before anything is written: datasets,
the response cache and client pool, judges (the spec's, then objects passed in), the
factuality pipeline and its gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.decomposition import Decomposer
from assay.core.judging import Judge
from assay.core.verification import Verifier
from assay.datasets import PairsFile
from assay.errors import RunError, SpecError
from assay.models._ray_pool import local_models_on
from assay.runs.assemble._build import (
    ClientPool,
    at_spec_field,
    build_judges,
    check_before_run,
    load_forcebench_datasets,
    load_items_datasets,
)
from assay.runs.execute._ray_executor import check_ray_installed, run_local_models_on_ray
from assay.runs.spec._gate import gate_retrieval
from assay.runs.spec._options import RunOptions
from assay.runs.spec._spec import LoadedSpec
from assay.runs.spec._targets import check_targets, stop_when_unreachable
from assay.runs.stages._items import ItemsStage

if TYPE_CHECKING:  # built (and imported) only for a spec with [factuality] or [gate]
    from assay.runs.stages._factuality import FactualityStage
    from assay.runs.stages._gate import GateStage


@dataclass
class RunParts:
    datasets: list[PairsFile]
    cache: Any
    pool: ClientPool
    judges: list[Judge]
    factuality: FactualityStage | None
    warnings: list[str]
    items: ItemsStage | None = None
    gate: GateStage | None = None


def assemble(
    loaded: LoadedSpec,
    options: RunOptions,
    judges: Sequence[Judge] = (),
    decomposer: Decomposer | None = None,
    verifiers: Sequence[Verifier] = (),
) -> RunParts:
    """Build a run's parts; objects passed in follow the spec's own (a decomposer
    replaces the spec's), and every judge id must be unique."""
    check_before_run(loaded, options.output_dir)
    check_ray_installed(loaded)
    check_targets(loaded)
    datasets = load_forcebench_datasets(loaded)
    item_sets = load_items_datasets(loaded)
    names = [d.name for d in [*datasets, *item_sets]]
    if len(set(names)) != len(names):
        raise RunError("two datasets share a name; set `name` in [[datasets]]", file=loaded.path)
    cache = _open_cache(loaded, options)
    pool = ClientPool(cache)
    with local_models_on(loaded.spec.executor):  # hf/ judges and dense embedders: on Ray?
        spec_judges = build_judges(
            loaded,
            cache=cache,
            use_cache=options.use_cache,
            refresh_cache=options.refresh_cache,
            pool=pool,
        )
        all_judges = [*spec_judges, *judges]
        _refuse_shared_ids(all_judges, loaded)
        fact = _factuality(loaded, options, pool, decomposer, verifiers)
        gate = _gate(loaded, options, cache, fact)
    juries = loaded.spec.juries
    items = ItemsStage(item_sets, all_judges, loaded.path, juries) if item_sets else None
    stop_when_unreachable(
        [*all_judges, *([fact.decomposer, *fact.verifiers] if fact is not None else [])]
    )
    verifiers = fact.verifiers if fact is not None else []
    run_local_models_on_ray(loaded, [*verifiers, *([gate.scorer.reranker] if gate else [])])
    warnings = _warnings(all_judges) + (items.warnings() if items else [])
    return RunParts(datasets, cache, pool, all_judges, fact, warnings, items, gate)


def _open_cache(loaded: LoadedSpec, options: RunOptions) -> Any:
    """The response cache, when the run reads or writes it and calls a model at all."""
    if not (options.use_cache or options.refresh_cache):
        return None
    from assay.models import ResponseCache, check_cache_dir

    if not (loaded.spec.judges or loaded.spec.factuality is not None):
        check_cache_dir(options.cache_dir)  # unread, but the manifest records it
        return None
    return ResponseCache(options.cache_dir)


def _refuse_shared_ids(judges: Sequence[Judge], loaded: LoadedSpec) -> None:
    seen: set[str] = set()
    for judge in judges:
        if judge.id in seen:
            raise SpecError(f"two judges share the id {judge.id!r}", file=loaded.path)
        seen.add(judge.id)


def _factuality(
    loaded: LoadedSpec,
    options: RunOptions,
    pool: ClientPool,
    decomposer: Decomposer | None,
    verifiers: Sequence[Verifier],
) -> FactualityStage | None:
    spec = loaded.spec.factuality
    if spec is None:
        if decomposer is not None or verifiers:
            raise SpecError(
                "a decomposer or verifiers need a [factuality] section naming the answers",
                file=loaded.path,
            )
        return None
    from assay.runs.stages._factuality import FactualityStage

    return FactualityStage(
        loaded,
        spec,
        pool=pool,
        use_cache=options.use_cache,
        refresh_cache=options.refresh_cache,
        decomposer=decomposer,
        verifiers=verifiers,
    )


def _gate(
    loaded: LoadedSpec, options: RunOptions, cache: Any, fact: FactualityStage | None
) -> GateStage | None:
    """The `[gate]` stage over the factuality answers (the corpus is read here, so a bad
    file fails before the run directory exists)."""
    spec, retrieval = loaded.spec.gate, gate_retrieval(loaded.spec, loaded.path)
    if spec is None or retrieval is None or fact is None:
        return None
    from assay.runs.stages._gate import GateStage
    from assay.runs.stages._gate_scorer import GateScorer

    with at_spec_field(loaded.path, retrieval.corpus_field):
        scorer = GateScorer(
            spec,
            retrieval,
            base_dir=Path(loaded.base_dir),
            spec_path=loaded.path,
            cache=cache,
            use_cache=options.use_cache,
            refresh_cache=options.refresh_cache,
        )
    return GateStage(scorer, fact.datasets)


def _warnings(judges: Sequence[Judge]) -> list[str]:
    """What judges say about themselves before the run (e.g. a prompt's known limits)."""
    out: list[str] = []
    for judge in judges:
        warn = getattr(judge, "warnings", None)
        if callable(warn):
            out.extend(warn())
    return out
