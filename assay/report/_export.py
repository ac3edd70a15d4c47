"""Every metric of a run as one tidy long table (`assay report -f csv`).

One row per (section, dataset, judge or verifier, group, metric): `pd.read_csv` reads it
as is, and a pivot gives any wide view. Values are copied from `metrics.json` unrounded;
undefined values and CIs (bootstrap off) are empty cells.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from assay.policies.report._data import PolicyReport
from assay.report._confusions import confusion_records
from assay.report._views import POOLED
from assay.report._views_calibration import calibration_records
from assay.report._views_items import n_of, rater_records
from assay.report._views_panels import panel_records
from assay.report._views_policies import policy_records

COLUMNS = (
    "section",
    "dataset",
    "judge_or_verifier",
    "model",
    "prompt",
    "group_by",
    "group",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
)
_IDENTITY = frozenset(
    {"judge_id", "verifier_id", "model", "prompt_id", "prompt_version", "dataset", "group_by"}
)
_IDENTITY |= {"group", "unscored", "n"}


def _sections(metrics: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield "forcebench", metrics.get("forcebench")
    fact = metrics.get("factuality")
    if isinstance(fact, Mapping):
        yield "factuality", fact.get("scores")
        yield "gold", fact.get("gold")
        yield "correlation", fact.get("correlation")
    items = metrics.get("items")
    if isinstance(items, Mapping):
        yield "items", items


def _prompt(row: Mapping[str, Any]) -> str | None:
    pid = row.get("prompt_id")
    if pid is None:
        return None
    version = row.get("prompt_version")
    return f"{pid}@{version}" if version is not None else str(pid)


def _is_metric(key: str, value: Any, row: Mapping[str, Any]) -> bool:
    if key in _IDENTITY or isinstance(value, bool):
        return False
    if key.endswith(("_lo", "_hi")) and key[:-3] in row:
        return False  # a CI bound, written next to its estimate
    return value is None or isinstance(value, int | float)


def _n(section: str, metric: str, row: Mapping[str, Any]) -> Any:
    """The number of units behind `metric`: pairs, responses, scored claims or claims."""
    if section == "factuality":
        return row.get("n_scored") if metric.startswith("micro") else row.get("n_responses")
    if section == "items":
        return n_of(row, metric)
    return row.get("n")


def _row_records(section: str, row: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    base = {
        "section": section,
        "dataset": row.get("dataset") or POOLED,
        "judge_or_verifier": row.get("judge_id") or row.get("verifier_id"),
        "model": row.get("model"),
        "prompt": _prompt(row),
        "group_by": row.get("group_by") or "overall",
        "group": row.get("group") or POOLED,
    }
    for key, value in row.items():
        if _is_metric(key, value, row):
            yield base | {
                "metric": key,
                "value": value,
                "ci_low": row.get(f"{key}_lo"),
                "ci_high": row.get(f"{key}_hi"),
                "n": _n(section, key, row),
            }


def _empty_records(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """A factuality section with no row: one row saying why (group_by "empty", group
    the reason, metric "rows", value 0), so the CSV is not silently empty."""
    fact = metrics.get("factuality")
    if not isinstance(fact, Mapping) or not isinstance(fact.get("empty"), str):
        return
    yield {c: None for c in COLUMNS} | {
        "section": "factuality",
        "dataset": POOLED,
        "group_by": "empty",
        "group": fact["empty"],
        "metric": "rows",
        "value": 0,
    }


def _stale_records(stale: Sequence[str]) -> Iterator[dict[str, Any]]:
    """One row a record file changed since metrics.json (section "records", metric
    "stale", value 1), so the CSV itself says its numbers are stale."""
    for name in stale:
        yield {c: None for c in COLUMNS} | {
            "section": "records",
            "dataset": POOLED,
            "group": name,
            "metric": "stale",
            "value": 1,
        }


def tidy_frame(
    metrics: Mapping[str, Any], policies: Sequence[PolicyReport] = (), stale: Sequence[str] = ()
) -> pd.DataFrame:
    """The long table of every numeric field of every metric row in `metrics.json`,
    then the items raters' rows (section "raters"), the judge panels' (section
    "panels"), every confusion matrix cell (section
    "confusion", `_confusions`), the applied policies' rows (section
    "policies", `model` = the policy's kind), then one "records" row per record file
    changed since (`stale`)."""
    records = [
        rec
        for section, part in _sections(metrics)
        if isinstance(part, Mapping)
        for row in part.get("rows") or []
        for rec in _row_records(section, row)
    ]
    records += list(rater_records(metrics))
    records += list(panel_records(metrics))
    records += list(calibration_records(metrics))
    records += list(confusion_records(metrics))
    records += list(_empty_records(metrics))
    records += list(policy_records(policies))
    records += list(_stale_records(stale))
    frame = pd.DataFrame(records, columns=list(COLUMNS))
    # Object dtype keeps counts as integers (`8`, not `8.0`) next to float metrics.
    frame["value"] = pd.Series([r["value"] for r in records], dtype=object)
    return frame.astype({"n": "Int64"})


def tidy_csv(
    metrics: Mapping[str, Any], policies: Sequence[PolicyReport] = (), stale: Sequence[str] = ()
) -> str:
    """`tidy_frame` as CSV text with a header row (empty cells for nulls)."""
    return str(tidy_frame(metrics, policies, stale).to_csv(index=False, lineterminator="\n"))
