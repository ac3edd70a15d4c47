"""A run as one self-contained HTML page, rendered from the package's Jinja templates.

No external JS, CSS or fonts and nothing fetched: the file can be mailed, archived next to
the run directory, or opened offline. The page is built in two steps: Python turns
`manifest.json` and `metrics.json` into typed page data (`ReportPage`: numbers,
chart geometry), then `templates/report.html.j2` writes it, autoescaping every string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from markupsafe import Markup

from assay._table import Grid
from assay._values import as_int, dict_of, list_of
from assay._version import __version__
from assay.report._charts import OUTCOME_COLOURS, UNSCORED_ORDER, VERDICT_ORDER, DotChart, Heatmap
from assay.report._digests import RecordsCheck
from assay.report._html_datasets import dataset_grids, pooled_metrics
from assay.report._page_fact import FactualitySection, factuality_section
from assay.report._page_force import (
    JudgeRow,
    StatusTable,
    force_charts,
    group_heatmap,
    judge_rows,
    status_table,
)
from assay.report._page_items import ItemsSection, has_items, has_pairs, items_section
from assay.report._page_meta import Header, Repro, header, repro
from assay.report._templates import environment

MVR_LEGEND = (
    "MVR: share of pairs where the raised claim scored ≥ the calibrated one; lower is better."
)
FS_LEGEND = "FS: mean score margin (calibrated − raised) over pairs; higher is better."
MACRO_LEGEND = "macro: mean over responses of F(r) = supported / scored claims of r"
MICRO_LEGEND = "micro: supported / scored over all claims pooled"
UNSCORED_NOTE = (
    "Unscored claims (parse error, refusal, truncated, API error, or no verification: "
    "missing) are never counted as supported and never enter a denominator."
)


@dataclass(frozen=True)
class ForceSection:
    judges: tuple[JudgeRow, ...]
    charts: tuple[DotChart, DotChart] | None
    heatmap: Heatmap | None
    statuses: StatusTable | None


@dataclass(frozen=True)
class ReportPage:
    """Everything the template shows; each part is None when the run has none."""

    title: str
    header: Header
    kicker: str
    force: ForceSection | None
    factuality: FactualitySection | None
    datasets: tuple[Grid, ...]
    items: ItemsSection | None
    repro: Repro
    records: RecordsCheck | None
    version: str = __version__


def _forcebench_frame(part: object) -> pd.DataFrame:
    """The ForceRow rows of ``metrics.json["forcebench"]`` (a ForceReport dump or its rows)."""
    if isinstance(part, Mapping):
        part = part.get("rows")
    rows = [r for r in part if isinstance(r, Mapping)] if isinstance(part, list) else []
    return pd.DataFrame(rows)


def _force_section(
    frame: pd.DataFrame, by_id: Mapping[str, dict[str, Any]], records: pd.DataFrame | None
) -> ForceSection:
    judges = judge_rows(frame, by_id)
    ids = {j.id for j in judges}
    order = [j.id for j in judges] + [jid for jid in by_id if jid not in ids]
    return ForceSection(
        judges=tuple(judges),
        charts=force_charts(judges) if judges else None,
        heatmap=group_heatmap(judges, frame) if judges else None,
        statuses=status_table(order, by_id, records) if order else None,
    )


def _kicker(forcebench: bool, factuality: bool, items: bool = False) -> str:
    kinds = (("ForceBench", forcebench), ("factuality", factuality), ("items", items))
    parts = [n for n, on in kinds if on]
    text = " + ".join(parts)
    return text[:1].upper() + text[1:] if text else "assay"


def _items_section(
    metrics: Mapping[str, Any] | pd.DataFrame,
    by_id: Mapping[str, dict[str, Any]],
    records: pd.DataFrame | None,
    statuses: bool,
) -> ItemsSection | None:
    """The items tables; the judgment statuses too when no ForceBench part shows them."""
    if isinstance(metrics, pd.DataFrame):
        return None
    table = status_table(list(by_id), by_id, records) if statuses and by_id else None
    return items_section(metrics, table)


def build_page(
    manifest: Mapping[str, Any],
    metrics: Mapping[str, Any] | pd.DataFrame,
    *,
    records: pd.DataFrame | None,
    records_check: RecordsCheck | None,
) -> ReportPage:
    """The typed data of a run's page (see `render_html_report` for the arguments)."""
    fact_manifest = dict_of(manifest.get("factuality"))
    by_id = {str(dict_of(j).get("id")): dict_of(j) for j in list_of(manifest.get("judges"))}
    grids: list[Grid] = []
    if isinstance(metrics, pd.DataFrame):
        frame, fact_metrics = metrics, None
    else:
        grids = dataset_grids(metrics)  # every row; the rest of the page is pooled
        metrics = pooled_metrics(metrics)
        frame = _forcebench_frame(metrics.get("forcebench"))
        fact_metrics = dict_of(metrics.get("factuality")) or None
    has_fact = bool(fact_manifest or fact_metrics)
    items = not isinstance(metrics, pd.DataFrame) and has_items(manifest, metrics)
    has_force = (
        isinstance(metrics, pd.DataFrame)
        or not frame.empty
        or has_pairs(manifest)
        or (
            not items
            and (bool(by_id) or bool(as_int(manifest.get("planned_judgments"))) or not has_fact)
        )
    )
    force = _force_section(frame, by_id, records) if has_force else None
    order = [j.judge for j in force.statuses.rows] if force and force.statuses else []
    return ReportPage(
        title=f"{manifest.get('name') or 'run'} · assay report",
        header=header(manifest, forcebench=has_force or items, factuality=has_fact),
        kicker=_kicker(has_force, has_fact, items),
        force=force,
        factuality=factuality_section(fact_manifest, fact_metrics or {}) if has_fact else None,
        datasets=tuple(grids),
        items=_items_section(metrics, by_id, records, force is None) if items else None,
        repro=repro(manifest, order, forcebench=has_force or items),
        records=records_check,
    )


def render_html_report(
    manifest: Mapping[str, Any],
    metrics: Mapping[str, Any] | pd.DataFrame,
    records: pd.DataFrame | None = None,
    records_check: RecordsCheck | None = None,
    *,
    comparison: Markup | None = None,
    policies: Markup | None = None,
    verification: Mapping[str, Any] | None = None,
) -> str:
    """One self-contained HTML page for a run: header, tables, inline SVG charts.

    ``manifest`` is the run's ``manifest.json``; ``metrics`` its ``metrics.json`` as a dict
    (``{"forcebench": ForceReport dump | None, "factuality": {...} | None}``) — or, as
    before, a DataFrame of ForceBench rows (ForceRow columns). Each part renders only when
    the run has it. ``records``, when given, are the judgments (at least ``judge_id`` and
    ``status``) and then supply the status counts instead of the manifest's stats — use it
    for runs whose manifest may lag behind ``judgments.jsonl``. ``records_check`` adds the
    record files' digests, and a stale warning when they changed since the metrics.
    ``comparison`` is the judges-compared section (`comparison_section`), if any;
    ``policies`` the applied policies' section (`policies_section`), if any;
    ``verification`` the run's audit (`assay report --verify`: `assay verify`'s JSON).
    """
    page = build_page(manifest, metrics, records=records, records_check=records_check)
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            page=page,
            comparison=comparison,
            policies=policies,
            verification=verification,
            legends={
                "mvr": MVR_LEGEND,
                "fs": FS_LEGEND,
                "macro": MACRO_LEGEND,
                "micro": MICRO_LEGEND,
                "unscored": UNSCORED_NOTE,
            },
            verdicts=VERDICT_ORDER,
            unscored=UNSCORED_ORDER,
            colours=OUTCOME_COLOURS,
        )
    )
