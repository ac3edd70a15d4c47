"""A run's report against the gold after adjudication (`assay report --gold`).

The items metrics are recomputed from the record files with the labels file laid over
the items' gold, in memory, with the bootstrap settings metrics.json recorded:
metrics.json stays the dataset gold's (what the run measured), and a person's labels
change nothing on disk but their own labels.jsonl.
"""

from __future__ import annotations

import dataclasses

from assay.adjudication import AdjudicationError, gold_overlay
from assay.core.records import ItemRecord
from assay.core.rundir import ITEMS_FILE, latest
from assay.report._formats import RunReport

__all__ = ["with_gold"]


def with_gold(report: RunReport, gold: str) -> RunReport:
    """`report` with its items metrics against `gold` ("dataset": unchanged) and a note
    saying how many items were adjudicated; a run without items metrics is refused."""
    overlay = gold_overlay([report.run_dir], gold)
    if not overlay.active:
        return report
    from assay.runs.rebuild._metrics import items_metrics

    stored = report.metrics.get("items")
    if not isinstance(stored, dict):
        raise AdjudicationError(
            f"--gold {gold}: the run has no items metrics (adjudication applies to items "
            "datasets); run `assay recompute` if the run has items",
            file=report.run_dir,
        )
    n_boot = stored.get("n_boot")
    n_boot = 1000 if n_boot is None else int(n_boot)  # 0: the run computed no CIs
    seed = int(stored.get("seed") or 0)
    items = items_metrics(report.run_dir, n_boot=n_boot, seed=seed, overlay=overlay)
    keys = latest(report.run_dir / ITEMS_FILE, ItemRecord).keys()
    note = overlay.note(keys)
    return dataclasses.replace(
        report,
        metrics={**report.metrics, "items": items},
        gold=gold,
        notes=(*report.notes, *([note] if note else [])),
    )
