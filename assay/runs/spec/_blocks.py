"""Spec blocks that name a registered kind (judges, baselines, decomposer, verifiers),
and where each one sits in the spec, so errors name the field at fault.

A block's `kind` must be in its registry; its other keys are the kind's parameters,
checked against the kind's factory (`assay.core.building`) when the spec loads.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay.core.building import check_params, params_model
from assay.core.registry import DECOMPOSERS, JUDGES, VERIFIERS, Registry
from assay.core.settings import EndpointOverrides
from assay.errors import AssayError, SpecError
from assay.judges._baseline_names import baseline_key, unknown_baseline


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ComponentBlock(EndpointOverrides):
    """A block naming a registered kind: its other keys are that kind's own parameters.

    Endpoint settings and `model` are typed here because every model-calling kind shares
    them (and the endpoint checks read them); everything else is validated against the
    kind's factory when the spec loads (see `assay.core.building`).
    """

    model_config = ConfigDict(extra="allow")

    registry: ClassVar[Registry[Any]]
    kind: str = Field(description="A registered kind (`assay list`).")

    def params(self) -> dict[str, Any]:
        """The keys the user wrote, less `kind`: what the kind's factory is given."""
        return self.model_dump(exclude_unset=True, exclude={"kind"})

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        return registered(cls.registry, kind)

    def calls_chat_model(self) -> bool:
        """Whether the kind takes endpoint settings (its params model extends
        `EndpointOverrides`), i.e. calls a chat model through a client."""
        model = params_model(self.registry.get(self.kind))
        return model is not None and issubclass(model, EndpointOverrides)


def registered(registry: Registry[Any], kind: str) -> str:
    """`kind` if `registry` has it; else the error listing what it has."""
    if kind not in registry:
        known = ", ".join(registry.names()) or "none"
        raise ValueError(f"unknown {registry.kind} {kind!r}; known: {known}")
    return kind


class JudgeSpec(ComponentBlock):
    """A `[[judges]]` block: by default the LLM kind, every model crossed with every prompt."""

    registry = JUDGES
    kind: str = Field(default="llm", description="A registered judge (`assay list`).")
    models: list[str] = Field(
        default_factory=list, description="Model ids; each is crossed with every prompt."
    )


JudgeMatrixSpec = JudgeSpec  # the name before judges became registered kinds


class DecomposerSpec(ComponentBlock):
    """How answers become claims: by sentence, by an LLM prompt, or as given by the data."""

    registry = DECOMPOSERS
    kind: str = Field(default="sentence", description="A registered decomposer.")
    model: str | None = Field(default=None, description="The model an LLM decomposer calls.")


class VerifierSpec(ComponentBlock):
    """One verifier; several in one spec compare verifiers on the same claims."""

    registry = VERIFIERS

    model: str | None = Field(default=None, description="LLM id, or hf-nli/<dir> for nli-local.")


class BaselineSpec(Strict):
    """A `[[baselines]]` block: a registered `baseline:NAME` judge and its `params` table."""

    name: str = Field(description="A registered baseline, e.g. `length` (`assay list`).")
    params: dict[str, Any] = Field(
        default_factory=dict, description="The baseline's own parameters."
    )

    @field_validator("name")
    @classmethod
    def _known_baseline(cls, name: str) -> str:
        if baseline_key(name) not in JUDGES:
            raise ValueError(unknown_baseline(name).message)
        return name


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


def block_ref(field: str, block: ComponentBlock) -> ComponentRef:
    """A `kind = ...` block at `field`: its keys beside `kind` are its parameters."""
    return ComponentRef(
        field=field,
        kind_field=f"{field}.kind",
        params_field=field,
        registry=block.registry,
        kind=block.kind,
        params=block.params(),
    )


def baseline_ref(index: int, block: BaselineSpec) -> ComponentRef:
    """A `[[baselines]]` block: `name` names the judge, `params` holds its parameters."""
    return ComponentRef(
        field=f"baselines[{index}]",
        kind_field=f"baselines[{index}].name",
        params_field=f"baselines[{index}].params",
        registry=JUDGES,
        kind=baseline_key(block.name),
        params=block.params,
    )


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


def check_refs(refs: list[ComponentRef], spec_path: str | None) -> None:
    """Each block's parameters against its kind's factory, before anything is built."""
    for ref in refs:
        try:
            check_params(component_factory(ref, spec_path), ref.params, what=ref.what)
        except SpecError as exc:
            if exc.file is not None:
                raise
            raise located(exc, spec_path, ref.params_field) from None
