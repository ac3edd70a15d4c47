"""How a registered kind (judge, decomposer, verifier) is built from its spec block.

Each kind is ONE factory in a registry (`assay.core.registry`), so a developer adds a
verifier kind by writing one file. A factory takes one of two forms:

1. ``def factory(params: P, ctx: BuildContext) -> component`` where ``P`` is a pydantic
   model: the block's keys (all but ``kind``) are validated by ``P`` (names, types,
   values), and every error names the key.
2. any other callable with keyword parameters, e.g. a class ``MyJudge(threshold=0.5)``:
   the keys are checked against its signature (unknown or missing names), values are
   the callable's own to check; a parameter named ``ctx`` receives the build context.

A judge factory may return one judge or a list (the LLM kind returns models x prompts).
The context gives what only the run knows (model clients, prompts, paths, the cache
flags); it is a protocol here so that judges/decomposers/verifiers need not import runs.
A kind that calls a chat model extends `EndpointOverrides` (`assay.core.settings`, named
here too): its block then takes the endpoint keys and every model setting.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ValidationError

from assay.core.settings import EndpointOverrides
from assay.errors import AssayError, SpecError, first_problem

__all__ = [
    "CTX_PARAMETER",
    "BuildContext",
    "EndpointOverrides",
    "build_component",
    "check_keywords",
    "check_params",
    "params_model",
]

CTX_PARAMETER = "ctx"


@runtime_checkable
class BuildContext(Protocol):
    """What a factory may ask of the run that builds it."""

    @property
    def spec_path(self) -> str | None: ...

    @property
    def use_cache(self) -> bool: ...

    @property
    def refresh_cache(self) -> bool: ...

    @property
    def cache(self) -> Any:
        """The run's response cache (None with --no-cache), for components that call a
        model outside a chat client, e.g. a local classifier."""
        ...

    def resolve(self, path: str) -> Path:
        """A path from the spec, relative to the spec's directory."""
        ...

    def prompt(self, ref: str, *, tasks: tuple[str, ...], role: str, field: str = "prompt") -> Any:
        """The prompt `ref`, refused when written for another task; errors name `field`."""
        ...

    def client(self, block: EndpointOverrides, model: str) -> Any:
        """The shared model client for `model` with the block's endpoint settings."""
        ...

    def decoding(self, block: EndpointOverrides) -> Any:
        """The block's decoding settings over the spec's defaults."""
        ...

    def answers(self) -> Sequence[Any]:
        """The run's answer datasets (empty when no factuality stage is built)."""
        ...


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        return typing.get_type_hints(target)
    except Exception:  # an unresolvable annotation: fall back to the signature's names
        return {}


def _parameters(factory: Callable[..., Any]) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(factory).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"
    ]


def params_model(factory: Callable[..., Any]) -> type[BaseModel] | None:
    """The pydantic model of a form-1 factory (its first parameter's type), else None."""
    params = _parameters(factory)
    if not params:
        return None
    hint = _hints(factory).get(params[0].name)
    return hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None


def _error_at(exc: ValidationError) -> SpecError:
    problem = first_problem(exc)
    return SpecError(problem.message, field=problem.field)


def check_params(
    factory: Callable[..., Any], params: Mapping[str, Any], *, what: str
) -> BaseModel | dict[str, Any]:
    """Validate a block's keys for `factory`: its params model, or its signature.

    Raises `SpecError` whose `field` is the offending key (relative to the block).
    """
    model = params_model(factory)
    if model is not None:
        try:
            return model.model_validate(dict(params))
        except ValidationError as exc:
            raise _error_at(exc) from None
    return check_keywords(factory, params, what=what)


def check_keywords(
    factory: Callable[..., Any], params: Mapping[str, Any], *, what: str
) -> dict[str, Any]:
    """A form-2 factory's keys against its signature: no unknown name, none missing."""
    accepted = [p for p in _parameters(factory) if p.name != CTX_PARAMETER]
    names = [p.name for p in accepted]
    unknown = sorted(set(params) - set(names))
    if unknown:
        listed = ", ".join(names) or "none"
        raise SpecError(
            f"{what} has no parameter {', '.join(map(repr, unknown))}; its parameters: {listed}",
            field=unknown[0],
        )
    missing = [p.name for p in accepted if p.default is p.empty and p.name not in params]
    if missing:
        raise SpecError(f"{what} needs {', '.join(map(repr, missing))}", field=missing[0])
    return dict(params)


def build_component(
    factory: Callable[..., Any], params: Mapping[str, Any], ctx: BuildContext, *, what: str
) -> Any:
    """Validate `params` for `factory` and call it (see the module docstring's two forms).

    An `AssayError` from the factory keeps its own message; any other exception (a bad
    value a constructor refused) becomes a `SpecError` with the same text.
    """
    checked = check_params(factory, params, what=what)
    try:
        if isinstance(checked, BaseModel):
            return factory(checked, ctx)
        takes_ctx = any(p.name == CTX_PARAMETER for p in _parameters(factory))
        return factory(**checked, **({CTX_PARAMETER: ctx} if takes_ctx else {}))
    except AssayError:
        raise
    except (ValueError, TypeError) as exc:
        raise SpecError(f"{what}: {exc}") from None
