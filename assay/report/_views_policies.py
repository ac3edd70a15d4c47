"""The policies section of the text reports: tables and tidy CSV rows.

One overview table (identity, thresholds, refusals, warnings), then per policy its
metrics (4 decimals, never cut, with counts, interval and null reason) and its outcome
mix. Every value is copied from `policies/<name>/`; see assay.policies.report._data.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from assay._table import Grid
from assay._values import DASH
from assay.policies.report._data import MetricRow, PolicyReport

SECTION = "policies"
METRICS_CAPTION = (
    "value: exact ratio to 4 decimals · n/d: numerator/denominator · null: why undefined"
)


def four(value: float | None) -> str:
    """A policy metric as the reports show it: 4 decimals, "null" when undefined."""
    return "null" if value is None else f"{value:.4f}"


def interval(row: MetricRow) -> str:
    return f"{four(row.ci[0])}–{four(row.ci[1])}" if row.ci else DASH


def thresholds_text(report: PolicyReport) -> str:
    return ", ".join(f"{k}={v}" for k, v in report.thresholds.items()) or DASH


def overview_grid(reports: Sequence[PolicyReport], label: str) -> Grid:
    """One row per policy; a `warning` column only when some policy folder is off."""
    warn = any(r.warnings for r in reports)
    headers = ("policy", "kind", "version", "sha256", "reads", "thresholds", "refused")
    rows = [
        (
            r.name,
            r.kind or DASH,
            DASH if r.version is None else str(r.version),
            r.short_sha or DASH,
            r.reads or DASH,
            thresholds_text(r),
            DASH if r.n_refused is None else str(r.n_refused),
            *(["; ".join(r.warnings)] if warn else []),
        )
        for r in reports
    ]
    numeric = (False, False, True, False, False, False, True) + ((False,) if warn else ())
    caption = "applied under policies/ · sha256: policy_sha256 (first 12) · refused: n_refused"
    return Grid(
        f"Policies · {label}", headers + (("warning",) if warn else ()), numeric, rows, caption
    )


def metrics_grid(report: PolicyReport, label: str) -> Grid:
    rows = [
        (
            m.name,
            four(m.value),
            f"{m.numerator}/{m.denominator}",
            interval(m),
            m.ci_method or "",
            m.null_reason or "",
        )
        for m in report.metrics
    ]
    headers = ("metric", "value", "n/d", "95% CI", "CI method", "null")
    numeric = (False, True, True, True, False, False)
    title = f"Policy {report.name} ({report.kind}) metrics · {label}"
    return Grid(title, headers, numeric, rows, METRICS_CAPTION)


def mix_grid(report: PolicyReport, label: str) -> Grid:
    rows = [(m.of, m.label, str(m.count), f"{m.share:.4f}") for m in report.mix]
    headers = ("of", "outcome", "count", "share")
    title = f"Policy {report.name} outcome mix · {label}"
    return Grid(title, headers, (False, False, True, True), rows, "")


def policy_grids(reports: Sequence[PolicyReport], label: str) -> list[Grid]:
    """Every policies table, in report order; [] when no policy was applied."""
    if not reports:
        return []
    grids = [overview_grid(reports, label)]
    for report in reports:
        if report.metrics:
            grids.append(metrics_grid(report, label))
        if report.mix:
            grids.append(mix_grid(report, label))
    return grids


def _base(report: PolicyReport, group_by: str, group: str) -> dict[str, Any]:
    return {
        "section": SECTION,
        "dataset": "all",
        "judge_or_verifier": report.name,
        "model": report.kind,
        "prompt": None,
        "group_by": group_by,
        "group": group,
    }


def policy_records(reports: Sequence[PolicyReport]) -> Iterator[dict[str, Any]]:
    """Tidy CSV rows: each metric (unrounded, n = denominator), `n_refused`, and each
    outcome's count and share (n = records of that kind). `model` holds the kind."""
    for r in reports:
        for m in r.metrics:
            lo, hi = m.ci if m.ci else (None, None)
            yield _base(r, "overall", "all") | {
                "metric": m.name,
                "value": m.value,
                "ci_low": lo,
                "ci_high": hi,
                "n": m.denominator,
            }
        if r.n_refused is not None:
            yield _base(r, "overall", "all") | {"metric": "n_refused", "value": r.n_refused}
        for x in r.mix:
            for metric, value in (("count", x.count), ("share", x.share)):
                yield _base(r, x.of, x.label) | {"metric": metric, "value": value, "n": x.total}


__all__ = ["four", "policy_grids", "policy_records"]
