"""`[executor] kind = "ray"`: a run's local models work in Ray actors. The pair models
(the nli-local verifier, the gate's hf-ce reranker) are handed to actors here, after they
are built; local causal LMs (hf/ judges, decomposers, LLM verifiers) and dense retrieval
embedders are placed on Ray as they are built, inside `assay.models._ray_pool.
local_models_on` (see `assay.runs.runner._assemble`), since a dense index is embedded while its
retriever is built. Everything else stays as it is: the stages still run their items in
this process (`assay.runs.execute._executor`), the models still read and write the cache here,
and the records are written here, each line byte for byte as an in-process run writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import ModelConfigError, SpecError
from assay.models._ray_pool import RayBatchPool, import_ray
from assay.runs.spec._spec import LoadedSpec

FIELD = "executor.kind"


def check_ray_installed(loaded: LoadedSpec) -> None:
    """A spec asking for Ray where it is not installed stops before the run directory is
    made, with one line naming the spec, the field and the extra."""
    options = loaded.spec.executor
    if options is None or options.kind != "ray":
        return
    try:
        import_ray()
    except ModelConfigError as exc:
        raise SpecError(exc.message, file=loaded.path, field=FIELD) from None


def run_local_models_on_ray(loaded: LoadedSpec, components: Sequence[Any]) -> list[RayBatchPool]:
    """Hand the batches of every local pair model among `components` (the nli-local
    verifier, the gate's hf-ce reranker) to Ray actors: one pool of `actors` actors per
    model. Nothing connects to Ray until a model first scores."""
    options = loaded.spec.executor
    if options is None or options.kind != "ray":
        return []
    check_ray_installed(loaded)
    from assay.models._ray_workers import run_pair_model_on_ray

    return [run_pair_model_on_ray(t, options) for t in _pair_transports(components)]


def _pair_transports(components: Sequence[Any]) -> list[Any]:
    """The local pair-model transports (hf-nli, and hf-ce's inner one) of `components`."""
    from assay.models._local_nli import LocalNLITransport

    found = []
    for component in components:
        transport = getattr(component, "transport", None)
        inner = getattr(transport, "pairs", transport)  # hf-ce wraps an hf-nli engine
        if isinstance(inner, LocalNLITransport) and inner.batch_runner is None:
            found.append(inner)
    return found
