"""The model endpoints a spec names, where it names them, and what is wrong with them
before any request is sent: an `api_base` without a scheme, a provider litellm cannot
route. A run that cannot connect at all is reported against the same spec field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from assay.core.settings import resolve
from assay.errors import SpecError
from assay.models import is_local
from assay.models._retry import TargetUnreachable
from assay.runs.spec._spec import ComponentBlock, LoadedSpec, RunSpec


@dataclass(frozen=True)
class Target:
    """One model at one endpoint, as written in the spec."""

    model: str
    api_base: str | None
    model_field: str  # judges[0].models[1], factuality.decomposer.model, ...
    block: str  # judges[0], factuality.verifiers[2], ...
    transport: str = "auto"  # as resolved over [defaults]: auto, litellm or openai

    @property
    def base_field(self) -> str:
        return f"{self.block}.api_base" if self.api_base else self.model_field

    @property
    def hosted(self) -> bool:
        return not is_local(self.model)


def spec_targets(spec: RunSpec) -> list[Target]:
    """Every model the spec calls, in spec order (judges, decomposer, verifiers)."""

    def via(block: ComponentBlock) -> str:  # the block's transport, else [defaults]'s
        return resolve(spec.defaults, block).transport

    out = [
        Target(model, block.api_base, f"judges[{i}].models[{k}]", f"judges[{i}]", via(block))
        for i, block in enumerate(spec.judges)
        for k, model in enumerate(block.models)
    ]
    fact = spec.factuality
    if fact is None:
        return out
    blocks: list[tuple[str, ComponentBlock, str | None]] = [
        ("factuality.decomposer", fact.decomposer, fact.decomposer.model)
    ]
    blocks += [(f"factuality.verifiers[{i}]", v, v.model) for i, v in enumerate(fact.verifiers)]
    for where, block, model in blocks:
        if model and block.calls_chat_model():
            out.append(Target(model, block.api_base, f"{where}.model", where, via(block)))
    return out


def _check_api_base(target: Target, spec_path: str) -> None:
    value = target.api_base or ""
    parts = urlsplit(value)
    if parts.scheme in ("http", "https") and parts.netloc:
        return
    fix = (
        f"write it with a scheme, e.g. 'http://{value}'"
        if "://" not in value
        else "use an http:// or https:// URL"
    )
    field = f"{target.block}.api_base"
    raise SpecError(f"api_base {value!r} is not an http(s) URL; {fix}", file=spec_path, field=field)


def _known_providers() -> frozenset[str]:
    from assay.models._litellm_providers import litellm_providers

    return litellm_providers()  # read from litellm's source: a spec error in milliseconds


def check_targets(loaded: LoadedSpec) -> None:
    """Refuse, before any request, endpoints that can never work (config errors, exit 2)."""
    hosted = [t for t in spec_targets(loaded.spec) if t.hosted]
    for target in hosted:
        if target.api_base is not None:
            _check_api_base(target, loaded.path)
    # openai/ ids: a provider litellm knows, whichever client sends them (auto may pick
    # the lean one, which needs no litellm import to start)
    routed = [t for t in hosted if not t.model.startswith("openai/")]
    if not routed:
        return
    known = _known_providers()
    for target in routed:
        provider = target.model.split("/", 1)[0]
        if provider not in known:
            raise SpecError(
                f"unknown provider {provider!r} in model {target.model!r}: litellm cannot "
                "route it; use a litellm provider prefix (openai/, anthropic/, ollama/, ...), "
                "or 'openai/<name>' with api_base for an OpenAI-compatible server",
                file=loaded.path,
                field=target.model_field,
            )


def unreachable_message(exc: TargetUnreachable, spec: RunSpec) -> str:
    """`cannot connect to HOST:PORT (judges[0].api_base): connection refused — hint`."""
    match = [t for t in spec_targets(spec) if t.model == exc.model and t.api_base == exc.api_base]
    field = f" ({match[0].base_field})" if match else ""
    failure = exc.failure
    return f"cannot connect to {failure.where()}{field}: {failure.reason} — {failure.hint()}"


def stop_when_unreachable(components: Iterable[Any]) -> None:
    """Let a run stop early when an endpoint never answers (see HostedClient)."""
    for component in components:
        client: Any = getattr(component, "client", None)
        if client is not None and hasattr(client, "stop_if_unreachable"):
            client.stop_if_unreachable = True
