"""Judges, decomposer and verifiers of a spec, built through the registries.

Every block of a spec names a registered kind (`assay.core.registry`); this module looks
it up, validates the block's keys and calls the kind's factory with a `ComponentContext`
(the run's model clients, prompts, paths and cache flags). There is no list of kinds
here: a plugin's kind is built exactly like a built-in one.

Entry points (stable signatures, used by the runner, the factuality stage and the dry run):

- ``ComponentContext(loaded, pool, *, use_cache=True, refresh_cache=False, answers=())``
  implements `assay.core.building.BuildContext`; `answers` are the run's loaded answer
  datasets (the `given` decomposer checks they carry claims).
- ``build_judges(loaded, ctx) -> list[Judge]``: `[[judges]]` then `[[baselines]]`, in
  spec order; ids unique.
- ``build_decomposer(loaded, spec: FactualitySpec, ctx) -> Decomposer``
- ``build_verifiers(loaded, spec: FactualitySpec, ctx) -> list[Verifier]``: ids unique.

Every error is a `SpecError` at the spec field of the block (or of the key) at fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.core.building import build_component
from assay.core.decomposition import Decomposer
from assay.core.judging import Judge
from assay.core.settings import EndpointOverrides, ModelDefaults, resolve
from assay.core.verification import Verifier
from assay.errors import AssayError, SpecError
from assay.models import (
    ChatRequest,
    Decoding,
    Model,
    ModelConfig,
    RawResponse,
    ResponseCache,
    make_client,
)
from assay.models._config import config_of, decoding_of
from assay.prompts import Prompt, PromptRegistry
from assay.runs.spec._blocks import ComponentRef, component_factory, located
from assay.runs.spec._spec import (
    FactualitySpec,
    LoadedSpec,
    decomposer_ref,
    judge_refs,
    verifier_refs,
)

__all__ = [
    "ClientPool",
    "ComponentContext",
    "at_spec_field",
    "build_decomposer",
    "build_judges",
    "build_verifiers",
    "decoding_for",
    "model_config_for",
]


def decoding_for(block: EndpointOverrides, defaults: ModelDefaults) -> Decoding:
    """A block's decoding: its settings over the spec's `[defaults]`."""
    return decoding_of(resolve(defaults, block))


def model_config_for(block: EndpointOverrides, defaults: ModelDefaults, model: str) -> ModelConfig:
    """The endpoint config of one of a block's models: its endpoint keys, and its
    settings over the spec's `[defaults]`."""
    return config_of(model, resolve(defaults, block), block)


ChatModel = Model[ChatRequest, RawResponse]


class ClientPool:
    """One client per endpoint config, so concurrency limits hold across a whole run."""

    def __init__(self, cache: ResponseCache | None) -> None:
        self.cache = cache
        self._clients: dict[str, ChatModel] = {}

    def clients(self) -> list[ChatModel]:
        """Every client made so far (the run gives each its spending caps)."""
        return list(self._clients.values())

    def total_concurrency(self) -> int:
        return sum(c.config.max_concurrency for c in self._clients.values())

    def get(self, config: ModelConfig) -> ChatModel:
        key = config.model_dump_json()
        if key not in self._clients:
            self._clients[key] = make_client(config, self.cache)
        return self._clients[key]


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


class ComponentContext:
    """What a kind's factory may use: the `BuildContext` of one run."""

    def __init__(
        self,
        loaded: LoadedSpec,
        pool: ClientPool,
        *,
        use_cache: bool = True,
        refresh_cache: bool = False,
        answers: Sequence[Any] = (),
    ) -> None:
        self.loaded = loaded
        self.pool = pool
        self._use_cache = use_cache
        self._refresh_cache = refresh_cache
        self._answers = list(answers)
        self._prompts: PromptRegistry | None = None

    @property
    def spec_path(self) -> str:
        return self.loaded.path

    @property
    def use_cache(self) -> bool:
        return self._use_cache

    @property
    def refresh_cache(self) -> bool:
        return self._refresh_cache

    @property
    def cache(self) -> ResponseCache | None:
        return self.pool.cache

    @property
    def prompts(self) -> PromptRegistry:
        """Built-in prompts plus the spec's `prompt_dirs`, loaded once."""
        if self._prompts is None:
            base = Path(self.loaded.base_dir)
            self._prompts = PromptRegistry([base / d for d in self.loaded.spec.prompt_dirs])
        return self._prompts

    def resolve(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else Path(self.loaded.base_dir) / p

    def prompt(
        self, ref: str, *, tasks: tuple[str, ...], role: str, field: str = "prompt"
    ) -> Prompt:
        try:
            prompt = self.prompts.get(ref)
            prompt.check_task(tasks, role)
        except AssayError as exc:
            raise SpecError(exc.message, field=field) from None
        return prompt

    def client(self, block: EndpointOverrides, model: str) -> ChatModel:
        return self.pool.get(model_config_for(block, self.loaded.spec.defaults, model))

    def decoding(self, block: EndpointOverrides) -> Decoding:
        return decoding_for(block, self.loaded.spec.defaults)

    def answers(self) -> Sequence[Any]:
        return self._answers


def build_from_ref(ref: ComponentRef, ctx: ComponentContext) -> Any:
    """Build one block; any failure becomes a `SpecError` at the block (or its key)."""
    factory = component_factory(ref, ctx.spec_path)
    try:
        return build_component(factory, ref.params, ctx, what=ref.what)
    except AssayError as exc:
        if exc.file is not None:
            raise
        raise located(exc, ctx.spec_path, ref.params_field) from None
    except Exception as exc:  # a constructor refusing a value: report it at the block
        msg = getattr(exc, "message", None) or str(exc)
        raise SpecError(msg, file=ctx.spec_path, field=ref.field) from None


def _unique_ids(components: Iterable[Any], spec_path: str, what: str, field: str | None) -> None:
    seen: set[str] = set()
    for component in components:
        if component.id in seen:
            message = f"two {what} share the id {component.id!r}"
            raise SpecError(
                message + ("; set `name`" if field else ""), file=spec_path, field=field
            )
        seen.add(component.id)


def build_judges(loaded: LoadedSpec, ctx: ComponentContext) -> list[Judge]:
    """All judges of a spec, in spec order. Ids must be unique within a run."""
    judges: list[Judge] = []
    for ref in judge_refs(loaded.spec):
        built = build_from_ref(ref, ctx)
        judges.extend(built if isinstance(built, list | tuple) else [built])
    _unique_ids(judges, loaded.path, "judges", None)
    return judges


def build_decomposer(loaded: LoadedSpec, spec: FactualitySpec, ctx: ComponentContext) -> Decomposer:
    """The factuality decomposer named by `[factuality.decomposer]` (default: sentence)."""
    decomposer: Decomposer = build_from_ref(decomposer_ref(spec), ctx)
    return decomposer


def build_verifiers(
    loaded: LoadedSpec, spec: FactualitySpec, ctx: ComponentContext
) -> list[Verifier]:
    """The `[[factuality.verifiers]]`, in spec order; two with one id are refused."""
    verifiers: list[Verifier] = [build_from_ref(ref, ctx) for ref in verifier_refs(spec)]
    _unique_ids(verifiers, loaded.path, "verifiers", "factuality.verifiers")
    return verifiers
