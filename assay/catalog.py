"""What `assay list` shows: every name of every registry (with its description and the
package it came from), the baselines' versions and parameters, the prompts and the
datasets assay reads. Everything is read from the registries a spec is checked against,
so the list cannot drift from what a spec accepts, and a plugin's entries show up too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any

from pydantic import BaseModel

from assay.core.registry import JUDGES, REGISTRIES, Registry

BASELINE_PREFIX = "baseline:"


class Section(BaseModel):
    name: str
    headers: list[str]
    rows: list[list[str]]


def section_name(registry: Registry[Any]) -> str:
    """`judge` -> `judges`, `report format` -> `report-formats`: one word on the CLI."""
    return registry.plural.replace(" ", "-")


def registry_section(registry: Registry[Any]) -> Section:
    """Every registered name, the package that registered it, and what it is."""
    rows = [[e.name, e.package, e.description] for e in registry.entries()]
    headers = [registry.kind, "package", "description"]
    return Section(name=section_name(registry), headers=headers, rows=rows)


def _parameters(factory: Callable[..., Any]) -> list[str]:
    """The keys a spec block may give (a class's signature is its __init__'s, sans self)."""
    return [p for p in inspect.signature(factory).parameters if p != "ctx"]


def baselines() -> Section:
    """Baseline judges (`[[baselines]] name`): version and the parameters each takes."""
    rows = []
    for name in JUDGES:
        if name.startswith(BASELINE_PREFIX):
            factory = JUDGES.get(name)
            info = JUDGES.info(name)
            version = str(getattr(factory, "version", "—"))
            params = ", ".join(_parameters(factory))
            rows.append([name.removeprefix(BASELINE_PREFIX), version, params, info.description])
    headers = ["baseline", "version", "params", "description"]
    return Section(name="baselines", headers=headers, rows=rows)


def prompts(prompt_dirs: list[Any] | None = None) -> Section:
    from assay.prompts import PromptRegistry

    rows = [
        [p.ref, p.meta.task, p.sha256[:12], "built-in" if p.builtin else str(p.path)]
        for p in PromptRegistry(prompt_dirs or [])
    ]
    return Section(name="prompts", headers=["prompt", "task", "sha256", "source"], rows=rows)


def datasets() -> Section:
    """Data read outside the answers importers: ForceBench pairs, MedScore's outputs and
    the bundled demo sets."""
    from assay.datasets import (
        BUILTIN_DATASETS,
        CSV_SUFFIXES,
        JSONL_SUFFIXES,
        MEDSCORE_DECOMPOSITIONS,
        MEDSCORE_OUTPUTS,
        MEDSCORE_VERIFICATIONS,
    )

    suffixes = ", ".join(JSONL_SUFFIXES + CSV_SUFFIXES)
    rows = [["forcebench", suffixes, "[[datasets]] path", "ForceBench claim pairs"]]
    files = ", ".join((MEDSCORE_DECOMPOSITIONS, MEDSCORE_VERIFICATIONS, *MEDSCORE_OUTPUTS))
    rows.append(["medscore-outputs", files, "assay import-medscore DIR", "a scored run"])
    rows += [
        [f"builtin:{name}", file, f'path = "builtin:{name}"', "bundled demo data"]
        for name, file in BUILTIN_DATASETS.items()
    ]
    headers = ["dataset", "files", "used by", "what"]
    return Section(name="datasets", headers=headers, rows=rows)


def _builders() -> dict[str, Callable[[], Section]]:
    """Section name -> builder, in the order `assay list` prints them."""
    builders: dict[str, Callable[[], Section]] = {}
    for registry in REGISTRIES:
        builders[section_name(registry)] = partial(registry_section, registry)
        if registry is JUDGES:
            builders["baselines"] = baselines
    builders["prompts"] = prompts
    builders["datasets"] = datasets
    return builders


SECTIONS = tuple(_builders())


def catalog(section: str | None = None) -> list[Section]:
    """One section, or all of them in SECTIONS order."""
    from assay.errors import AssayError

    builders = _builders()
    if section is not None and section not in builders:
        raise AssayError(f"unknown section {section!r}; use one of: {', '.join(builders)}")
    return [builders[name]() for name in ([section] if section else builders)]


def print_catalog(section: str | None = None) -> None:
    from assay._table import print_table

    for i, part in enumerate(catalog(section)):
        if i:
            print()
        print_table(part.headers, part.rows, title=part.name)
