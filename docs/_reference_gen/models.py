"""Pydantic fields as Markdown table rows: type, default, constraints, description.

Shared by the spec and file-format pages, so a field reads the same on both. Nothing
here is typed by hand: every cell comes from the field's annotation and `FieldInfo`.
"""

from __future__ import annotations

import enum
import json
import re
import types
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

Linker = Callable[[type[BaseModel]], str]


def cell(text: str) -> str:
    """One table cell: one line, pipes outside code escaped (they would split the cell;
    inside a code span they do not, and a backslash there would show)."""
    parts = " ".join(text.split()).split("`")
    parts[::2] = [p.replace("|", "\\|") for p in parts[::2]]
    return "`".join(parts)


def escape(text: str) -> str:
    """Prose from a docstring or help text as Markdown shows it verbatim: outside code,
    `[a][b]` is not a link reference and `<name>` is not an HTML tag."""
    parts = text.split("`")
    parts[::2] = [p.replace("[", "\\[").replace("<", "&lt;") for p in parts[::2]]
    return "`".join(parts)


def prose(text: str) -> str:
    """A description as one table cell."""
    return cell(escape(text))


def slug(heading: str) -> str:
    """The anchor Python-Markdown's `toc` gives a heading (its default `slugify`)."""
    text = re.sub(r"`|\*", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def unwrap(annotation: Any) -> Any:
    """The type under `Annotated[...]` (validators and tags are not the type)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def union_members(annotation: Any) -> list[Any]:
    """The members of a union (one member for anything else), Annotated kept."""
    plain = unwrap(annotation)
    if get_origin(plain) in (Union, types.UnionType):
        return list(get_args(plain))
    return [annotation]


def type_text(annotation: Any, link: Linker, *, null: str | None) -> str:
    """A readable type; `null` names None in a union (None: leave it out, as a spec
    key that may be unset has no null value in TOML)."""
    annotation = unwrap(annotation)
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None) or null is not None]
        return " | ".join(
            null or "" if a is type(None) else type_text(a, link, null=null) for a in parts
        )
    if origin is Literal:
        return " | ".join(json.dumps(v) for v in get_args(annotation))
    if origin in (list, tuple, dict, set, frozenset):
        args = ", ".join(
            "..." if a is Ellipsis else type_text(a, link, null=null) for a in get_args(annotation)
        )
        return f"{origin.__name__}[{args}]" if args else origin.__name__
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(json.dumps(m.value) for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return link(annotation)
    if annotation is type(None):
        return null or "none"
    if annotation is Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation))


def _value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return value


def default_text(info: FieldInfo, *, unset: str) -> str:
    """The default as JSON (TOML reads the same for these values); `unset` for None."""
    if info.default_factory is not None:
        made = info.default_factory()  # type: ignore[call-arg]
        if isinstance(made, BaseModel):
            return "(table)"
        value = _value(made)
    elif info.default is PydanticUndefined:
        return "**required**"
    else:
        value = _value(info.default)
    if value is None:
        return unset
    return f"`{json.dumps(value)}`"


_BOUNDS = ((at.Ge, "ge", ">="), (at.Gt, "gt", ">"), (at.Le, "le", "<="), (at.Lt, "lt", "<"))


def constraints(info: FieldInfo) -> Iterator[str]:
    """The field's bounds, lengths and pattern, as the validation checks them."""
    for item in info.metadata:
        for kind, attr, sign in _BOUNDS:
            if isinstance(item, kind):
                yield f"{sign} {getattr(item, attr)}"
        if isinstance(item, at.MinLen):
            yield f"length >= {item.min_length}"
        if isinstance(item, at.MaxLen):
            yield f"length <= {item.max_length}"
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str):
            yield f"matches `{pattern}`"


@dataclass(frozen=True)
class Row:
    """One field of a model as the pages show it."""

    key: str
    type: str
    default: str
    description: str


def rows(model: type[BaseModel], link: Linker, *, null: str | None, unset: str) -> list[Row]:
    """Every field of `model`, in declaration order (base classes' fields first)."""
    out = []
    for name, info in model.model_fields.items():
        key = info.serialization_alias or info.alias or name  # the key files hold
        kind = type_text(info.annotation, link, null=null)
        limits = ", ".join(constraints(info))
        typed = f"{kind} ({limits})" if limits else kind
        out.append(Row(key, typed, default_text(info, unset=unset), info.description or ""))
    return out


def table(found: list[Row], *, key_prefix: str = "") -> list[str]:
    """A Markdown table of `found`."""
    lines = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for row in found:
        lines.append(
            f"| `{key_prefix}{row.key}` | {cell(row.type)} | {cell(row.default)} "
            f"| {prose(row.description)} |"
        )
    return lines


def missing_descriptions(model: type[BaseModel]) -> list[str]:
    """`Model.field` for each field of `model` without a description."""
    return [
        f"{model.__name__}.{name}"
        for name, info in model.model_fields.items()
        if not (info.description or "").strip()
    ]
