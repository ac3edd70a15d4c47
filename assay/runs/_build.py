"""Turn a run spec into concrete judges (LLM judges per model x prompt x sample, baselines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import SpecError
from assay.judges._types import Judge
from assay.models import (
    Decoding,
    ModelClient,
    ModelConfig,
    ResponseCache,
    RetryPolicy,
    make_client,
)
from assay.prompts import PromptRegistry
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
        for ref in block.prompts:
            try:
                prompts.append(registry.get(ref))
            except Exception as exc:
                raise SpecError(
                    str(exc), file=loaded.path, field=f"judges[{index}].prompts"
                ) from None
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
