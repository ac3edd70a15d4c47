"""The parameters of each registered judge, decomposer and verifier kind.

A `[[judges]]`, `[factuality.decomposer]` or `[[factuality.verifiers]]` block's keys
beside `kind` are the kind's own parameters: the pydantic model its factory takes
(`assay.core.building.params_model`). A kind that calls a chat model also takes every
model setting; those are listed once, with the block, not again per kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from _reference_gen.models import Row, escape, rows, table


@dataclass(frozen=True)
class Kind:
    """A registered kind, the block it is written in, and its parameters' model."""

    block: str
    name: str
    description: str
    params: type[BaseModel] | None


def kinds() -> list[Kind]:
    """Every built-in kind of the three registries a spec block names, in name order."""
    from assay.core.building import params_model
    from assay.core.registry import DECOMPOSERS, JUDGES, VERIFIERS

    out = []
    for block, registry in (
        ("[[judges]]", JUDGES),
        ("[factuality.decomposer]", DECOMPOSERS),
        ("[[factuality.verifiers]]", VERIFIERS),
    ):
        for name in registry.names():
            if name.startswith("baseline:"):  # written as [[baselines]] name = "..."
                continue
            info: Any = registry.info(name)
            out.append(Kind(block, name, info.description, params_model(registry.get(name))))
    return out


def own_rows(model: type[BaseModel], unset: str) -> list[Row]:
    """The parameters a kind adds to the block's shared keys (endpoint and settings)."""
    from assay.core.settings import EndpointOverrides

    shared = set(EndpointOverrides.model_fields)
    return [
        r for r in rows(model, lambda m: m.__name__, null=None, unset=unset) if r.key not in shared
    ]


def calls_model(model: type[BaseModel] | None) -> bool:
    from assay.core.settings import EndpointOverrides

    return model is not None and issubclass(model, EndpointOverrides)


def kinds_lines(unset: str) -> list[str]:
    """The section of the spec page: one table per kind that has parameters."""
    lines = [
        "## Parameters of each kind",
        "",
        "The keys a block takes beside `kind`, for each built-in kind (`assay list` also "
        "names the kinds a plugin adds). A kind that calls a model also takes every "
        "model setting of its block (`api_base`, `temperature`...).",
        "",
    ]
    for kind in kinds():
        lines += [f'### `{kind.block}` kind = "{kind.name}"', ""]
        note = " Calls a model." if calls_model(kind.params) else ""
        lines += [f"{escape(kind.description[:1].upper() + kind.description[1:])}.{note}", ""]
        found = own_rows(kind.params, unset) if kind.params else []
        lines += [*table(found), ""] if found else ["No parameters.", ""]
    return lines


def params_models() -> list[type[BaseModel]]:
    """The kinds' parameter models (each parameter needs a description)."""
    return [k.params for k in kinds() if k.params is not None]
