"""How `assay run --dry-run` prints its plan: a table (plain text when not a terminal)
with the notes and assumptions under it, or JSON for machines."""

from __future__ import annotations

import sys

from assay.runs.preview._budget_fit import fit_lines
from assay.runs.preview._dryrun import AFTER, DryRunPlan, PlanRow

HEADERS = (
    "stage",
    "component",
    "items",
    "requests",
    "recorded",
    "cached",
    "to send",
    "input tok",
    "output tok ≤",
    "cost USD",
)


def _num(value: int | None, row: PlanRow) -> str:
    if value is not None:
        return f"{value:,}"
    return "—"


def _cost(row: PlanRow) -> str:
    if row.items is None:
        return "—"
    if row.cost_usd_min is None or row.cost_usd_max is None:
        return "unknown"
    if row.cost_usd_max == 0:
        return "0"
    return f"{row.cost_usd_min:.4f}–{row.cost_usd_max:.4f}"


def plan_table(plan: DryRunPlan) -> tuple[tuple[str, ...], list[list[str]]]:
    """Headers and rows of the plan, one per component plus a total line."""
    rows = [
        [
            r.stage,
            r.id,
            AFTER if r.items is None else f"{r.items:,}",
            _num(r.requests, r),
            _num(r.recorded, r),
            _num(r.cached, r),
            _num(r.to_send, r),
            _num(r.input_tokens, r),
            _num(r.output_tokens_max, r),
            _cost(r),
        ]
        for r in plan.rows
    ]
    known = [r for r in plan.rows if r.to_send is not None]
    low = sum(r.cost_usd_min or 0.0 for r in known)
    high = sum(r.cost_usd_max or 0.0 for r in known)
    cost = "0" if high == 0 else f"{low:.4f}–{high:.4f}"
    if any(r.cost_usd_max is None and r.to_send for r in known):
        cost += " + unknown"
    if any(r.items is None for r in plan.rows):
        cost += f" + verifiers {AFTER}"
    rows.append(
        [
            "total",
            "",
            "",
            "",
            "",
            "",
            f"{sum(r.to_send or 0 for r in known):,}",
            f"{sum(r.input_tokens or 0 for r in known):,}",
            f"{sum(r.output_tokens_max or 0 for r in known):,}",
            cost,
        ]
    )
    return HEADERS, rows


def print_plan(plan: DryRunPlan, format: str) -> None:
    """Print the plan as a table (plain text when not a terminal) or as JSON."""
    if format == "json":
        sys.stdout.write(plan.model_dump_json(indent=2) + "\n")
        return
    from assay._table import print_table

    headers, rows = plan_table(plan)
    where = "exists: resuming" if plan.run_dir_exists else "not created yet"
    title = f"dry run · {plan.spec} → {plan.run_dir} ({where}) · nothing sent"
    print_table(headers, rows, title=title)
    calls = [r for r in plan.rows if r.model is not None]
    for row in calls:
        if row.note:
            sys.stdout.write(f"  {row.stage} {row.id}: {row.note}\n")
    if calls:
        cache = plan.cache_dir or "not read (--no-cache or --refresh-cache)"
        sys.stdout.write(f"cache: {cache}\n")
        for line in plan.assumptions:
            sys.stdout.write(f"assumption: {line}\n")
    for line in fit_lines(plan.budget) if plan.budget is not None else []:
        sys.stdout.write(line + "\n")
    for line in plan.notes:
        sys.stdout.write(f"note: {line}\n")
