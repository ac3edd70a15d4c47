"""Output schemas declared in a prompt's front matter, and numeric score scales.

A prompt may describe its answer field by field instead of naming a registered schema::

    [output.label]
    type = "enum"
    values = ["supported", "unsupported"]
    [output.score]
    type = "integer"
    minimum = 1
    maximum = 5

assay builds a pydantic model from that at load; its JSON schema is what is sent as the
response schema, so it is part of the cache key. A numeric field named by `score_field`
is normalised to [0, 1]; the scale rides on the output model (`score_scale_of`), so every
caller of the verdict parser (live judging and `assay reparse`) sees the same one.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

FieldType = Literal["enum", "integer", "number", "string", "boolean"]
_PYTHON_TYPES: dict[str, type] = {"integer": int, "number": float, "string": str, "boolean": bool}
_FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
#: class attribute of an output model that carries its ScoreScale
SCALE_ATTR = "assay_score_scale"


class OutputField(BaseModel):
    """One `[output.<name>]` table."""

    model_config = ConfigDict(extra="forbid")

    type: FieldType
    description: str = ""
    required: bool = True
    values: list[str] | None = None
    minimum: float | None = None
    maximum: float | None = None
    ordered: bool = Field(
        default=False,
        description="Enum only: the values are ordered, lowest first as declared (ordinal "
        "statistics: weighted kappa, ordinal alpha, MAE in ranks).",
    )

    @model_validator(mode="after")
    def _check(self) -> OutputField:
        if self.type == "enum" and not self.values:
            raise ValueError("enum fields need a non-empty `values` list")
        if self.ordered and self.type != "enum":
            raise ValueError(f"`ordered` is only for enum fields, not {self.type}")
        if self.type != "enum" and self.values is not None:
            raise ValueError(f"`values` is only for enum fields, not {self.type}")
        bounds = [b for b in (self.minimum, self.maximum) if b is not None]
        if bounds and self.type not in ("integer", "number"):
            raise ValueError(
                f"`minimum`/`maximum` are only for integer and number fields, not {self.type}"
            )
        if self.type == "integer" and any(b != int(b) for b in bounds):
            raise ValueError("integer fields need whole-number `minimum`/`maximum`")
        low, high = self.minimum, self.maximum
        if low is not None and high is not None and low >= high:
            raise ValueError(f"minimum ({_num(low)}) must be below maximum ({_num(high)})")
        return self


class ScoreScale(BaseModel):
    """A numeric output field mapped onto [0, 1] by (raw - minimum) / (maximum - minimum)."""

    model_config = ConfigDict(frozen=True)

    field: str
    minimum: float
    maximum: float
    integer: bool = False

    def contains(self, raw: float) -> bool:
        return self.minimum <= raw <= self.maximum

    def normalise(self, raw: float) -> float:
        return (raw - self.minimum) / (self.maximum - self.minimum)

    def describe(self) -> str:
        return f"{self.field} must lie in [{_num(self.minimum)}, {_num(self.maximum)}]"

    def labels(self) -> list[str]:
        """The labels of an integer scale without a label field: '1' ... '5'."""
        return [str(v) for v in range(int(self.minimum), int(self.maximum) + 1)]


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _enum_normaliser(values: list[str]) -> BeforeValidator:
    """Accept 'Supported' for 'supported', as the label parser does for registered schemas."""
    canonical = {_canonical(v): v for v in values}

    def fix(value: Any) -> Any:
        if isinstance(value, str) and value not in values:
            return canonical.get(_canonical(value), value)
        return value

    return BeforeValidator(fix)


def _not_bool(value: Any) -> Any:
    """JSON true is not the number 1: a boolean in a numeric field is a parse error."""
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    return value


def _annotation(spec: OutputField) -> Any:
    if spec.type == "enum":
        values = spec.values or []
        return Annotated[Literal[tuple(values)], _enum_normaliser(values)]
    if spec.type in ("integer", "number"):
        return Annotated[_PYTHON_TYPES[spec.type], BeforeValidator(_not_bool)]
    return _PYTHON_TYPES[spec.type]


def _bound(spec: OutputField, value: float | None) -> float | None:
    """Integer fields get integer bounds, so the JSON schema says `"maximum": 5`."""
    return int(value) if value is not None and spec.type == "integer" else value


def _field(spec: OutputField) -> tuple[Any, Any]:
    annotation = _annotation(spec)
    info = Field(
        default=... if spec.required else None,
        description=spec.description or None,
        ge=_bound(spec, spec.minimum),
        le=_bound(spec, spec.maximum),
    )
    return (annotation if spec.required else annotation | None), info


def check_field_name(name: str) -> None:
    """Field names become JSON keys and pydantic attributes: keep them plain."""
    if not _FIELD_NAME.match(name):
        raise ValueError(f"output field name {name!r} must be lowercase letters, digits or '_'")
    if name.startswith("model_") or hasattr(BaseModel, name):
        raise ValueError(f"output field name {name!r} clashes with a pydantic attribute")


def build_output_model(
    name: str, fields: dict[str, OutputField], scale: ScoreScale | None
) -> type[BaseModel]:
    """The pydantic model for declared fields (extra keys allowed, like the built-ins)."""
    for field_name in fields:
        check_field_name(field_name)
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        name,
        __config__=ConfigDict(extra="allow"),
        **{k: _field(v) for k, v in fields.items()},
    )
    setattr(model, SCALE_ATTR, scale)
    return model


def with_scale(model: type[BaseModel], scale: ScoreScale | None) -> type[BaseModel]:
    """A subclass of `model` carrying `scale`, so the caller's class is left untouched."""
    sub: type[BaseModel] = create_model(model.__name__, __base__=model)
    setattr(sub, SCALE_ATTR, scale)
    return sub


def scale_from_model(model: type[BaseModel], field: str) -> ScoreScale:
    """Read a score field's range from a Python model's JSON schema (Field(ge=, le=))."""
    props = model.model_json_schema().get("properties", {})
    prop = props.get(field)
    if prop is None:
        raise ValueError(f"score_field {field!r} is not a field of {model.__name__}")
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is None or high is None or low >= high:
        raise ValueError(
            f"score_field {field!r} of {model.__name__} needs a range: declare it with "
            "Field(ge=..., le=...)"
        )
    return ScoreScale(field=field, minimum=low, maximum=high, integer=prop.get("type") == "integer")


def score_scale_of(model: type[BaseModel]) -> ScoreScale | None:
    """The scale an output model carries, if any (registered schemas carry none)."""
    scale = getattr(model, SCALE_ATTR, None)
    return scale if isinstance(scale, ScoreScale) else None


def schema_sha256(model: type[BaseModel]) -> str:
    """Hash of the JSON schema sent to the model (plus the score scale it is read with)."""
    scale = score_scale_of(model)
    doc = {"schema": model.model_json_schema(), "scale": scale.model_dump() if scale else None}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(label: str) -> str:
    return re.sub(r"[\s-]+", "_", label.strip().lower())


def declared_scale(fields: dict[str, OutputField], score_field: str) -> ScoreScale:
    """The scale of a declared score field: integer or number, required, with a range."""
    spec = fields.get(score_field)
    if spec is None:
        raise ValueError(f"score_field {score_field!r} names no [output.{score_field}] table")
    low, high = spec.minimum, spec.maximum
    if spec.type not in ("integer", "number") or low is None or high is None:
        raise ValueError(
            f"output.{score_field}: a score_field must be an integer or number field "
            "with both minimum and maximum"
        )
    if not spec.required:
        raise ValueError(f"output.{score_field}: a score_field must be required")
    return ScoreScale(field=score_field, minimum=low, maximum=high, integer=spec.type == "integer")


def declared_order(fields: dict[str, OutputField] | None) -> list[str] | None:
    """The `label` enum's values when declared `ordered = true` (lowest first), else None."""
    spec = (fields or {}).get("label")
    return list(spec.values or []) if spec is not None and spec.ordered else None


def declared_labels(
    fields: dict[str, OutputField], labels: list[str], score_field: str | None
) -> list[str]:
    """The label set of a declared output: the `label` enum, or an integer score's values."""
    spec = fields.get("label")
    if spec is not None and spec.type == "enum":
        values = spec.values or []
        if spec.ordered and len(set(values)) != len(values):
            raise ValueError(f"output.label: ordered values are listed twice: {values}")
        bad = [v for v in values if v != _canonical(v)]
        if bad:
            raise ValueError(
                f"output.label values must be lowercase with '_' between words: "
                f"write {_canonical(bad[0])!r}, not {bad[0]!r}"
            )
        if labels and set(labels) != set(values):
            raise ValueError(f"labels {labels} differ from output.label values {values}")
        return labels or list(values)
    if spec is None and score_field is not None and not labels:
        scale = declared_scale(fields, score_field)
        return scale.labels() if scale.integer else []
    return labels
