"""The items part of the run page: judges against gold, pairwise judges, human raters.

An items run (a user's own labelled set) has no ForceBench pairs, so its page must not
fall back to the ForceBench summary ("No metrics yet"): it shows the same `Grid`s as the
terminal, markdown and CSV reports, n columns included, so the formats never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay._table import Grid
from assay._values import dict_of, list_of
from assay.report._page_force import StatusTable
from assay.report._views_calibration import ReliabilityChart, reliability_charts
from assay.report._views_items import items_grids


@dataclass(frozen=True)
class ItemsSection:
    grids: tuple[Grid, ...]
    statuses: StatusTable | None = None  # when the page has no ForceBench part to show them
    reliability: tuple[ReliabilityChart, ...] = ()  # calibration's reliability diagrams


def _spec_kinds(manifest: Mapping[str, Any]) -> set[str]:
    """The kinds of the spec's [[datasets]] blocks (a block without `kind` is pairs)."""
    blocks = list_of(dict_of(manifest.get("spec")).get("datasets"))
    return {str(dict_of(b).get("kind") or "pairs") for b in blocks}


def has_items(manifest: Mapping[str, Any], metrics: Mapping[str, Any]) -> bool:
    """The run judged items datasets: metrics for them, or a spec that names one."""
    part = dict_of(metrics.get("items"))
    return bool(part.get("rows") or part.get("raters")) or "items" in _spec_kinds(manifest)


def has_pairs(manifest: Mapping[str, Any]) -> bool:
    """The spec names ForceBench pair datasets."""
    return "pairs" in _spec_kinds(manifest)


def items_section(metrics: Mapping[str, Any], statuses: StatusTable | None) -> ItemsSection:
    return ItemsSection(
        grids=tuple(items_grids(metrics, "")),
        statuses=statuses,
        reliability=reliability_charts(metrics),
    )
