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
from assay.runs._spec import JudgeMatrixSpec, LoadedSpec


def _pick(block: JudgeMatrixSpec, defaults: Any, name: str) -> Any:
    value = getattr(block, name)
    return getattr(defaults, name) if value is None else value


def build_judges(
    loaded: LoadedSpec,
    *,
    cache: ResponseCache | None,
    use_cache: bool = True,
    refresh_cache: bool = False,
) -> list[Judge]:
    """All judges of a spec, in spec order. Ids must be unique within a run."""
    from assay.judges import LLMJudge, baseline

    spec = loaded.spec
    base = Path(loaded.base_dir)
    registry = PromptRegistry([base / d for d in spec.prompt_dirs])
    judges: list[Judge] = []
    clients: dict[str, ModelClient] = {}
    d = spec.defaults
    for index, block in enumerate(spec.judges):
        decoding = Decoding(
            temperature=_pick(block, d, "temperature"),
            top_p=_pick(block, d, "top_p"),
            max_tokens=_pick(block, d, "max_tokens"),
            seed=_pick(block, d, "seed"),
            stop=_pick(block, d, "stop"),
        )
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
                config = ModelConfig(
                    model=model,
                    api_base=block.api_base,
                    api_key_env=block.api_key_env,
                    timeout_s=_pick(block, d, "timeout_s"),
                    max_concurrency=_pick(block, d, "max_concurrency"),
                    retry=RetryPolicy(
                        max_attempts=_pick(block, d, "max_attempts"),
                        initial_wait_s=d.initial_wait_s,
                        max_wait_s=d.max_wait_s,
                    ),
                    structured_output=_pick(block, d, "structured_output"),
                    extra_body=block.extra_body,
                )
                # one client per endpoint config, so concurrency limits hold across blocks
                client_key = config.model_dump_json()
                if client_key not in clients:
                    clients[client_key] = make_client(config, cache)
                client = clients[client_key]
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
