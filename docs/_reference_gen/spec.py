"""The run spec reference: every key of `RunSpec` and the tables under it.

Walks the pydantic models from `RunSpec` down, table by table in declaration order;
a tagged union (`[[datasets]]`) gives one table per kind. The `[[policies]]` keys every
kind shares are checked in code, not by a model: they are listed from the policy
registry, and each kind's own keys are on its policy reference page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel, Tag

from _reference_gen.kinds import kinds_lines, params_models
from _reference_gen.models import escape, rows, slug, table, union_members, unwrap

UNSET = "unset"


@dataclass(frozen=True)
class SpecTable:
    """One TOML table of the spec: its header, its model, and the kind it is for."""

    header: str
    model: type[BaseModel]
    tag: str | None = None

    @property
    def heading(self) -> str:
        kind = f' (kind = "{self.tag}")' if self.tag else ""
        return f"`{self.header}`{kind}"


def _tag(member: Any) -> str | None:
    for meta in getattr(member, "__metadata__", ()):
        if isinstance(meta, Tag):
            return meta.tag
    return None


def _nested(annotation: Any) -> tuple[bool, list[tuple[type[BaseModel], str | None]]]:
    """(is an array of tables, the table models with their union tag), or no models."""
    plain = unwrap(annotation)
    array = get_origin(plain) is list
    inner = get_args(plain)[0] if array else plain
    found = []
    for member in union_members(inner):
        model = unwrap(member)
        # a private model is a catch-all that only refuses (an unknown dataset kind)
        if isinstance(model, type) and issubclass(model, BaseModel) and model.__name__[0] != "_":
            found.append((model, _tag(member)))
    return array, found


def spec_tables(model: type[BaseModel], path: str = "") -> list[SpecTable]:
    """`model`'s own table, then each nested table, depth first in declaration order."""
    out = [SpecTable(f"[{path}]" if path else "top level", model)]
    for name, info in model.model_fields.items():
        array, found = _nested(info.annotation)
        sub = f"{path}.{name}" if path else name
        for nested, tag in found:
            for child in spec_tables(nested, sub):
                header = child.header
                if array and child.header == f"[{sub}]":
                    header = f"[[{sub}]]"
                out.append(
                    SpecTable(header, child.model, tag if child.model is nested else child.tag)
                )
    return out


def _linker(tables: list[SpecTable]) -> Any:
    def link(model: type[BaseModel]) -> str:
        for t in tables:
            if t.model is model:
                return f"[{t.heading}](#{slug(t.heading)})"
        return model.__name__

    return link


def _doc(model: type[BaseModel]) -> str:
    """The model's docstring, paragraphs kept (pydantic's own base has none to show)."""
    doc = model.__doc__ or ""
    if model.__module__.startswith("pydantic"):
        return ""
    return "\n\n".join(escape(" ".join(p.split())) for p in doc.strip().split("\n\n") if p.strip())


def _table_lines(spec_table: SpecTable, tables: list[SpecTable]) -> list[str]:
    link = _linker(tables)
    found = rows(spec_table.model, link, null=None, unset=UNSET)
    for i, info in enumerate(spec_table.model.model_fields.values()):
        array, nested = _nested(info.annotation)
        if nested:
            what = "array of tables" if array else "table"
            see = ", ".join(link(m) for m, _ in nested)
            found[i] = type(found[i])(
                found[i].key, f"{what}: {see}", found[i].default, found[i].description
            )
    prefix = "" if spec_table.header == "top level" else f"{spec_table.header}."
    lines = [f"## {spec_table.heading}", ""]
    if doc := _doc(spec_table.model):
        lines += [doc, ""]
    lines += table(found, key_prefix=prefix)
    if spec_table.model.model_config.get("extra") == "allow":
        lines += [
            "",
            "Any other key is a parameter of the block's `kind`, checked against "
            "that kind when the spec loads (`assay list` names the kinds).",
        ]
    return [*lines, ""]


def _policy_page(kind: str) -> str:
    """A link to the kind's reference page (`reference/policies/<kind>.md`)."""
    return f"[`{kind}`](policies/{kind.replace('_', '-')}.md)"


def _policies_lines() -> list[str]:
    """`[[policies]]`: the two keys every kind shares, checked by
    `assay.policies.engine._spec`; the rest of a block belongs to its kind."""
    from assay.policies.engine._kind import known_kinds

    kinds = ", ".join(_policy_page(k) for k in known_kinds())
    return [
        "## `[[policies]]`",
        "",
        "Decision policies for `assay policies apply`, in a run spec or a policy file, "
        "checked when the file loads. Every kind shares these keys; the rest of a block is "
        "read by its kind's parser (see each kind's page).",
        "",
        "| Key | Type | Default | Description |",
        "| --- | --- | --- | --- |",
        "| `[[policies]].name` | str | **required** | Non-empty, unique in the file, no `/`: "
        "the policy's directory under `policies/` in the run directory. |",
        f"| `[[policies]].kind` | str | **required** | A registered policy kind: {kinds}. |",
        "",
    ]


def spec_page() -> str:
    """The whole `reference/spec.md`."""
    from assay.runs.spec._spec import RunSpec

    tables = spec_tables(RunSpec)
    lines = [
        "# Run spec reference",
        "",
        "Every key a run spec (TOML) may hold, table by table, in the order the code "
        "declares them. Generated from the spec's pydantic models by "
        "`python docs/gen_reference.py`; do not edit by hand.",
        "",
        "A key is written under its table (`[defaults]`, `[[judges]]`...); `unset` means "
        "the key has no value unless given. Unknown keys are refused, naming the key.",
        "",
    ]
    for spec_table in tables:
        lines += _table_lines(spec_table, tables)
    lines += _policies_lines()
    lines += kinds_lines(UNSET)
    return "\n".join(lines).rstrip("\n") + "\n"


def spec_models() -> list[type[BaseModel]]:
    """Every model the spec page shows (each field needs a description)."""
    from assay.runs.spec._spec import RunSpec

    return list(dict.fromkeys([*(t.model for t in spec_tables(RunSpec)), *params_models()]))
