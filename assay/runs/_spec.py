"""The run spec (TOML): datasets, judges as a models x prompts matrix, baselines, policy.

Paths to datasets and prompt directories resolve relative to the spec file; the output
directory resolves relative to the working directory, like other evaluation tools.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from assay.core.building import EndpointOverrides as EndpointOverrides
from assay.core.building import check_params, params_model
from assay.core.outcomes import Status
from assay.core.registry import DECOMPOSERS, IMPORTERS, JUDGES, VERIFIERS, Registry
from assay.errors import AssayError, SpecError
from assay.judges._baselines import baseline_key, unknown_baseline

MIN_BOOTSTRAP = 100
POOLED = "all"  # the dataset name of pooled metric rows; no dataset may take it


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_pooled(name: str | None) -> str | None:
    if name == POOLED:
        raise ValueError(f"dataset name {POOLED!r} is reserved for pooled metrics; pick another")
    return name


def _stem_not_pooled(name: str | None, path: str) -> None:
    """A dataset without `name` is named after its file (or folder): `all.jsonl` would be
    taken for the pooled rows."""
    if name is None and not path.startswith("builtin:"):
        p = Path(path)
        if POOLED in (p.stem, p.name):
            raise ValueError(
                f"this dataset would be named {POOLED!r}, which is reserved for pooled "
                "metrics; set `name`"
            )


class DatasetSpec(_Strict):
    name: str | None = Field(default=None, description="Defaults to the file's stem.")
    path: str = Field(description="A .jsonl/.csv file, or builtin:NAME.")

    _name_ok = field_validator("name")(_not_pooled)

    @model_validator(mode="after")
    def _default_name_ok(self) -> Self:
        _stem_not_pooled(self.name, self.path)
        return self


class ModelDefaults(_Strict):
    """Defaults for every model judge; each [[judges]] block may override any of them."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int = Field(default=1024, ge=1)
    seed: int | None = None
    stop: list[str] | None = None
    timeout_s: float = Field(default=60.0, gt=0.0)
    max_concurrency: int = Field(default=16, ge=1, le=4096)
    max_attempts: int = Field(default=6, ge=1, le=50)
    initial_wait_s: float = Field(default=1.0, ge=0.0)
    max_wait_s: float = Field(default=60.0, ge=0.0)
    structured_output: str = Field(default="auto", pattern="^(auto|json_schema|json_object|off)$")


class ComponentBlock(EndpointOverrides):
    """A block naming a registered kind: its other keys are that kind's own parameters.

    Endpoint settings and `model` are typed here because every model-calling kind shares
    them (and the endpoint checks read them); everything else is validated against the
    kind's factory when the spec loads (see `assay.core.building`).
    """

    model_config = ConfigDict(extra="allow")

    registry: ClassVar[Registry[Any]]
    kind: str

    def params(self) -> dict[str, Any]:
        """The keys the user wrote, less `kind`: what the kind's factory is given."""
        return self.model_dump(exclude_unset=True, exclude={"kind"})

    def calls_chat_model(self) -> bool:
        """Whether the kind takes endpoint settings (its params model extends
        `EndpointOverrides`), i.e. calls a chat model through a client."""
        model = params_model(self.registry.get(self.kind))
        return model is not None and issubclass(model, EndpointOverrides)


def _registered(registry: Registry[Any], kind: str) -> str:
    if kind not in registry:
        known = ", ".join(registry.names()) or "none"
        raise ValueError(f"unknown {registry.kind} {kind!r}; known: {known}")
    return kind


class JudgeSpec(ComponentBlock):
    """A `[[judges]]` block: by default the LLM kind, every model crossed with every prompt."""

    registry = JUDGES
    kind: str = Field(default="llm", description="A registered judge (`assay list`).")
    models: list[str] = Field(default_factory=list)

    @field_validator("kind")
    @classmethod
    def _known_judge(cls, kind: str) -> str:
        return _registered(JUDGES, kind)


JudgeMatrixSpec = JudgeSpec  # the name before judges became registered kinds


class AnswersDatasetSpec(DatasetSpec):
    """An answers dataset of `[factuality]`, read by the importer `format` names."""

    path: str = Field(description="Answers file, or builtin:NAME.")
    format: str = Field(
        default="auto", description="A registered importer: auto, jsonl, medscore-input, ..."
    )

    @field_validator("format")
    @classmethod
    def _known_format(cls, fmt: str) -> str:
        return _registered(IMPORTERS, fmt)


class DecomposerSpec(ComponentBlock):
    """How answers become claims: by sentence, by an LLM prompt, or as given by the data."""

    registry = DECOMPOSERS
    kind: str = Field(default="sentence", description="A registered decomposer.")
    model: str | None = None

    @field_validator("kind")
    @classmethod
    def _known_decomposer(cls, kind: str) -> str:
        return _registered(DECOMPOSERS, kind)


class VerifierSpec(ComponentBlock):
    """One verifier; several in one spec compare verifiers on the same claims."""

    registry = VERIFIERS

    model: str | None = Field(default=None, description="LLM id, or hf-nli/<dir> for nli-local.")

    @field_validator("kind")
    @classmethod
    def _known_verifier(cls, kind: str) -> str:
        return _registered(VERIFIERS, kind)


GIVEN_IN_PYTHON = "given_in_python"  # validation context: components passed as objects


def given_in_python(info: ValidationInfo) -> frozenset[str]:
    """Which of judges/verifiers `assay.run(...)` was given as objects: then the spec
    may have none of its own."""
    return frozenset((info.context or {}).get(GIVEN_IN_PYTHON, ()))


class FactualitySpec(_Strict):
    """Decompose-then-verify: answers -> claims -> verdicts -> factuality scores."""

    datasets: list[AnswersDatasetSpec] = Field(min_length=1)
    decomposer: DecomposerSpec = Field(default_factory=DecomposerSpec)
    verifiers: list[VerifierSpec] = Field(default_factory=list, validate_default=True)
    length_penalty: str | None = Field(default=None, pattern="^factscore$")

    @field_validator("verifiers")
    @classmethod
    def _some_verifier(cls, value: list[VerifierSpec], info: ValidationInfo) -> list[Any]:
        if not value and "verifiers" not in given_in_python(info):
            raise ValueError("[factuality] needs at least one [[factuality.verifiers]] entry")
        return value


class BaselineSpec(_Strict):
    """A `[[baselines]]` block: a registered `baseline:NAME` judge and its `params` table."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known_baseline(cls, name: str) -> str:
        if baseline_key(name) not in JUDGES:
            raise ValueError(unknown_baseline(name).message)
        return name


class FailurePolicy(_Strict):
    """Like Inspect's fail_on_error: above this many failed judgments the run is `failed`."""

    max_failed_fraction: float = Field(default=0.05, ge=0.0, le=1.0)
    max_failed: int | None = Field(default=None, ge=0)
    statuses: list[Status] = Field(
        default_factory=lambda: [Status.API_ERROR],
        description="Which statuses count as failed judgments for this policy.",
    )

    def limit(self, planned: int) -> int:
        by_fraction = int(self.max_failed_fraction * planned)
        return by_fraction if self.max_failed is None else min(by_fraction, self.max_failed)


class RunSpec(_Strict):
    name: str = "run"
    description: str = ""
    output_dir: str | None = Field(default=None, description="Default: runs/<name>.")
    prompt_dirs: list[str] = Field(default_factory=list)
    bootstrap: int = Field(
        default=1000, ge=0, description="Bootstrap resamples for CIs; 0 = no CI."
    )
    seed: int = Field(default=0, description="Seed for bootstrap resampling.")
    datasets: list[DatasetSpec] = Field(default_factory=list)
    defaults: ModelDefaults = Field(default_factory=ModelDefaults)
    judges: list[JudgeSpec] = Field(default_factory=list)
    baselines: list[BaselineSpec] = Field(default_factory=list)
    failure: FailurePolicy = Field(default_factory=FailurePolicy)
    factuality: FactualitySpec | None = None

    @field_validator("bootstrap")
    @classmethod
    def _bootstrap_zero_or_enough(cls, value: int) -> int:
        # a handful of resamples gives a CI that looks precise and is not
        if 0 < value < MIN_BOOTSTRAP:
            raise ValueError(f"bootstrap must be 0 (no CI) or at least {MIN_BOOTSTRAP}")
        return value

    @model_validator(mode="after")
    def _has_some_work(self, info: ValidationInfo) -> RunSpec:
        judged = bool(self.judges or self.baselines) or "judges" in given_in_python(info)
        if self.datasets and not judged:
            raise ValueError("[[datasets]] needs at least one [[judges]] or [[baselines]] entry")
        if judged and not self.datasets:
            raise ValueError("[[judges]] and [[baselines]] need at least one [[datasets]] entry")
        if not self.datasets and self.factuality is None:
            raise ValueError("a run needs [[datasets]] with judges, or a [factuality] section")
        return self


class LoadedSpec(BaseModel):
    spec: RunSpec
    path: str
    base_dir: str
    sha256: str
    raw: dict[str, Any]

    def output_dir(self, override: str | Path | None = None) -> Path:
        if override is not None:
            return Path(override)
        return Path(self.spec.output_dir or f"runs/{self.spec.name}")


def validate_spec(
    raw: dict[str, Any], *, where: str, given_in_python: Collection[str] = ()
) -> RunSpec:
    """The spec model of parsed TOML (or a dict from Python); one error naming `where`
    and the field. `given_in_python`: "judges"/"verifiers" passed as objects."""
    try:
        spec = RunSpec.model_validate(raw, context={GIVEN_IN_PYTHON: set(given_in_python)})
    except ValidationError as exc:
        # an unknown key (a typo) explains a "missing field" error, so report it first
        err = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        field = _loc(err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise SpecError(msg, file=where, field=field or None) from None
    check_component_params(spec, where)
    return spec


def load_spec(path: str | Path, *, given_in_python: Collection[str] = ()) -> LoadedSpec:
    """Read and validate a TOML run spec; errors name the file and the field."""
    p = Path(path)
    if not p.is_file():
        raise SpecError("run spec not found", file=p)
    data = p.read_bytes()
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SpecError("spec is not valid UTF-8", file=p) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=p) from None
    return LoadedSpec.model_construct(  # validated above; again would lose the context
        spec=validate_spec(raw, where=str(p), given_in_python=given_in_python),
        path=str(p),
        base_dir=str(p.resolve().parent),
        sha256=hashlib.sha256(data).hexdigest(),
        raw=raw,
    )


class ComponentRef(BaseModel):
    """One spec block that names a registered kind, and where it is in the spec."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    field: str = Field(description="The block, e.g. factuality.verifiers[0].")
    kind_field: str = Field(description="The key that names the kind.")
    params_field: str = Field(description="Where the kind's parameters are written.")
    registry: Registry[Any]
    kind: str
    params: dict[str, Any]

    @property
    def what(self) -> str:
        return f"{self.registry.kind} {self.kind!r}"


def _ref(field: str, registry: Registry[Any], block: ComponentBlock) -> ComponentRef:
    return ComponentRef(
        field=field,
        kind_field=f"{field}.kind",
        params_field=field,
        registry=registry,
        kind=block.kind,
        params=block.params(),
    )


def judge_refs(spec: RunSpec) -> list[ComponentRef]:
    """The `[[judges]]` then `[[baselines]]` blocks, in spec order."""
    out = [_ref(f"judges[{i}]", JUDGES, b) for i, b in enumerate(spec.judges)]
    out += [
        ComponentRef(
            field=f"baselines[{i}]",
            kind_field=f"baselines[{i}].name",
            params_field=f"baselines[{i}].params",
            registry=JUDGES,
            kind=baseline_key(b.name),
            params=b.params,
        )
        for i, b in enumerate(spec.baselines)
    ]
    return out


def decomposer_ref(fact: FactualitySpec) -> ComponentRef:
    return _ref("factuality.decomposer", DECOMPOSERS, fact.decomposer)


def verifier_refs(fact: FactualitySpec) -> list[ComponentRef]:
    return [_ref(f"factuality.verifiers[{i}]", VERIFIERS, v) for i, v in enumerate(fact.verifiers)]


def component_refs(spec: RunSpec) -> list[ComponentRef]:
    """Every judge, baseline, decomposer and verifier block of a spec, in build order."""
    fact = spec.factuality
    if fact is None:
        return judge_refs(spec)
    return [*judge_refs(spec), decomposer_ref(fact), *verifier_refs(fact)]


def located(exc: AssayError, spec_path: str | None, block_field: str) -> SpecError:
    """An error about a block's key (`exc.field`, relative) at its place in the spec."""
    field = f"{block_field}.{exc.field}" if exc.field else block_field
    return SpecError(exc.message, file=spec_path, field=field)


def component_factory(ref: ComponentRef, spec_path: str | None) -> Any:
    """The registered factory of a block; a plugin that fails to load is named at `kind`."""
    try:
        return ref.registry.get(ref.kind)
    except AssayError as exc:
        raise SpecError(exc.message, file=spec_path, field=ref.kind_field) from None
    except Exception as exc:
        msg = f"{ref.what} cannot be loaded: {type(exc).__name__}: {exc}"
        raise SpecError(msg, file=spec_path, field=ref.kind_field) from None


def check_component_params(spec: RunSpec, spec_path: str | None) -> None:
    """Each block's parameters against its kind's factory, before anything is built."""
    for ref in component_refs(spec):
        try:
            check_params(component_factory(ref, spec_path), ref.params, what=ref.what)
        except SpecError as exc:
            if exc.file is not None:
                raise
            raise located(exc, spec_path, ref.params_field) from None


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
