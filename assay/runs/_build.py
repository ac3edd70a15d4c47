"""Turn a run spec into concrete judges (LLM judges per model x prompt x sample, baselines)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.core.judging import Judge
from assay.datasets import LoadedDataset, load_pairs
from assay.errors import AssayError, SpecError
from assay.models import (
    Decoding,
    ModelClient,
    ModelConfig,
    ResponseCache,
    RetryPolicy,
    make_client,
)
from assay.prompts import PromptRegistry
from assay.runs._rundir import check_new_dir
from assay.runs._spec import EndpointOverrides, LoadedSpec, ModelDefaults


def _pick(block: EndpointOverrides, defaults: ModelDefaults, name: str) -> Any:
    value = getattr(block, name)
    return getattr(defaults, name) if value is None else value


def decoding_for(block: EndpointOverrides, defaults: ModelDefaults) -> Decoding:
    return Decoding(
        temperature=_pick(block, defaults, "temperature"),
        top_p=_pick(block, defaults, "top_p"),
        max_tokens=_pick(block, defaults, "max_tokens"),
        seed=_pick(block, defaults, "seed"),
        stop=_pick(block, defaults, "stop"),
    )


def model_config_for(block: EndpointOverrides, defaults: ModelDefaults, model: str) -> ModelConfig:
    return ModelConfig(
        model=model,
        api_base=block.api_base,
        api_key_env=block.api_key_env,
        timeout_s=_pick(block, defaults, "timeout_s"),
        max_concurrency=_pick(block, defaults, "max_concurrency"),
        retry=RetryPolicy(
            max_attempts=_pick(block, defaults, "max_attempts"),
            initial_wait_s=defaults.initial_wait_s,
            max_wait_s=defaults.max_wait_s,
        ),
        structured_output=_pick(block, defaults, "structured_output"),
        extra_body=block.extra_body,
    )


class ClientPool:
    """One client per endpoint config, so concurrency limits hold across a whole run."""

    def __init__(self, cache: ResponseCache | None) -> None:
        self.cache = cache
        self._clients: dict[str, ModelClient] = {}

    def total_concurrency(self) -> int:
        return sum(c.config.max_concurrency for c in self._clients.values())

    def get(self, config: ModelConfig) -> ModelClient:
        key = config.model_dump_json()
        if key not in self._clients:
            self._clients[key] = make_client(config, self.cache)
        return self._clients[key]


def build_judges(
    loaded: LoadedSpec,
    *,
    cache: ResponseCache | None,
    use_cache: bool = True,
    refresh_cache: bool = False,
    pool: ClientPool | None = None,
) -> list[Judge]:
    """All judges of a spec, in spec order. Ids must be unique within a run."""
    from assay.judges import LLMJudge, baseline

    spec = loaded.spec
    base = Path(loaded.base_dir)
    registry = PromptRegistry([base / d for d in spec.prompt_dirs])
    judges: list[Judge] = []
    pool = pool or ClientPool(cache)
    d = spec.defaults
    for index, block in enumerate(spec.judges):
        decoding = decoding_for(block, d)
        prompts = []
        for k, ref in enumerate(block.prompts):
            try:
                prompt = registry.get(ref)
                prompt.check_task(("judge",), "judge")
            except AssayError as exc:
                field = f"judges[{index}].prompts[{k}]"
                raise SpecError(exc.message, file=loaded.path, field=field) from None
            prompts.append(prompt)
        for model in block.models:
            try:
                client = pool.get(model_config_for(block, d, model))
            except Exception as exc:
                msg = getattr(exc, "message", None) or str(exc)
                raise SpecError(msg, file=loaded.path, field=f"judges[{index}].models") from None
            label = block.name or model
            for prompt in prompts:
                for sample in range(block.samples):
                    suffix = f"#{sample}" if block.samples > 1 else ""
                    judges.append(
                        LLMJudge(
                            client,
                            prompt,
                            decoding=decoding,
                            name=f"{label}::{prompt.ref}{suffix}",
                            sample_index=sample,
                            use_cache=use_cache,
                            refresh_cache=refresh_cache,
                        )
                    )
    for index, b in enumerate(spec.baselines):
        try:
            judges.append(baseline(b.name, **b.params))
        except Exception as exc:
            msg = getattr(exc, "message", None) or str(exc)
            raise SpecError(msg, file=loaded.path, field=f"baselines[{index}]") from None
    seen: set[str] = set()
    for judge in judges:
        if judge.id in seen:
            raise SpecError(f"two judges share the id {judge.id!r}", file=loaded.path)
        seen.add(judge.id)
    return judges


LOCAL_MODULES = ("torch", "transformers")


def _local_uses(loaded: LoadedSpec) -> list[tuple[str, str]]:
    """(field, what) for every part of the spec that runs a transformers model locally."""
    spec = loaded.spec
    uses = [
        (f"judges[{i}].models[{k}]", f"model {m!r}")
        for i, block in enumerate(spec.judges)
        for k, m in enumerate(block.models)
        if m.startswith(("hf/", "hf-nli/"))
    ]
    fact = spec.factuality
    if fact is None:
        return uses
    if fact.decomposer.model and fact.decomposer.model.startswith("hf/"):
        uses.append(("factuality.decomposer.model", f"model {fact.decomposer.model!r}"))
    for i, v in enumerate(fact.verifiers):
        if v.kind == "nli-local" or (v.model or "").startswith("hf/"):
            uses.append((f"factuality.verifiers[{i}]", f'verifier kind "{v.kind}"'))
        elif v.dense_model:
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


@contextmanager
def at_spec_field(spec_path: str, field: str) -> Iterator[None]:
    """Errors that name no file of their own (an unknown built-in dataset, format or
    prompt) are reported at the spec field that asked for the thing."""
    try:
        yield
    except AssayError as exc:
        if exc.file is not None:
            raise
        raise SpecError(exc.message, file=spec_path, field=field) from None


def load_forcebench_datasets(loaded: LoadedSpec) -> list[LoadedDataset]:
    """The spec's [[datasets]], each error located at its `datasets[i].path`."""
    out = []
    for i, d in enumerate(loaded.spec.datasets):
        with at_spec_field(loaded.path, f"datasets[{i}].path"):
            out.append(load_pairs(d.path, name=d.name, base=Path(loaded.base_dir)))
    return out
