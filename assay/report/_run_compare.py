"""The run report's "Judges compared" section: `compare_runs` on the run itself, with
each judge's own value and CI taken from the run's `metrics.json`.

The summary tables and the comparison would otherwise show two bootstraps of the same
judge and metric (different draws, different CIs). So a judge's own estimate comes from
one bootstrap, the run's, wherever the comparison computes the same statistic (same
value); the paired Δs and their CIs stay the comparison's own paired bootstrap, and a
note says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from assay.compare import AblationCell, ComparisonReport, ForcePoint

Estimate = tuple[float, float | None, float | None]
POOLED = (None, "all")
NOTE = (
    "each judge's own value and CI are the run's (metrics.json, as in the summary); "
    "Δ and its CI come from the paired bootstrap of this comparison"
)


def _rows(part: Any) -> list[Mapping[str, Any]]:
    rows = part.get("rows") if isinstance(part, Mapping) else None
    return [r for r in rows or [] if isinstance(r, Mapping)]


def _pooled(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows over every dataset: the pooled ones, or all when the run has one dataset."""
    pooled = [r for r in rows if r.get("dataset") in POOLED]
    return pooled or (rows if len({r.get("dataset") for r in rows}) == 1 else [])


def _parts(
    metrics: Mapping[str, Any],
) -> Iterator[tuple[list[Mapping[str, Any]], str, dict[str, str]]]:
    """(rows, id field, comparison metric -> row field) per part of metrics.json."""
    force = [r for r in _rows(metrics.get("forcebench")) if r.get("group_by") == "overall"]
    yield _pooled(force), "judge_id", {"mvr": "mvr", "fs": "fs"}
    fact = metrics.get("factuality")
    fact = fact if isinstance(fact, Mapping) else {}
    macro = {"factuality_macro": "macro", "factuality_micro": "micro"}
    yield _pooled(_rows(fact.get("scores"))), "verifier_id", macro
    yield (
        _pooled(_rows(fact.get("gold"))),
        "verifier_id",
        {"balanced_accuracy": "balanced_accuracy"},
    )
    items = _pooled(_rows(metrics.get("items")))
    yield items, "judge_id", {k: k for r in items for k in r if f"{k}_lo" in r}


def run_estimates(metrics: Mapping[str, Any]) -> dict[tuple[str, str], Estimate]:
    """(judge, comparison metric) -> (value, lo, hi) as the summary shows it; a pair
    that two rows claim (a judge of two tasks) is left out."""
    out: dict[tuple[str, str], Estimate] = {}
    seen: set[tuple[str, str]] = set()
    for rows, id_field, fields in _parts(metrics):
        for row in rows:
            for metric, name in fields.items():
                value = row.get(name)
                if not isinstance(value, int | float) or isinstance(value, bool):
                    continue
                key = (str(row.get(id_field)), metric)
                if key in seen:
                    out.pop(key, None)
                    continue
                seen.add(key)
                out[key] = (float(value), row.get(f"{name}_lo"), row.get(f"{name}_hi"))
    return out


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a))


def _cell(cell: AblationCell, own: Estimate | None) -> AblationCell:
    if own is None or not _same(cell.value, own[0]):
        return cell  # not the statistic the summary shows: the comparison's own
    return cell.model_copy(update={"value": own[0], "ci_low": own[1], "ci_high": own[2]})


def _point(point: ForcePoint, runs: dict[tuple[str, str], Estimate]) -> ForcePoint:
    update: dict[str, float | None] = {}
    for metric in ("mvr", "fs"):
        own = runs.get((point.judge, metric))
        if own is not None and _same(getattr(point, metric), own[0]):
            update |= {metric: own[0], f"{metric}_lo": own[1], f"{metric}_hi": own[2]}
    return point.model_copy(update=update)


def with_run_estimates(compared: ComparisonReport, metrics: Mapping[str, Any]) -> ComparisonReport:
    """`compared` with every judge's own value and CI the run's (see the module doc),
    less the verifiers' confusion matrices the run page shows already."""
    runs = run_estimates(metrics)
    ablation = [
        row.model_copy(
            update={
                "metrics": {m: _cell(c, runs.get((row.judge, m))) for m, c in row.metrics.items()}
            }
        )
        for row in compared.ablation
    ]
    force = [_point(p, runs) for p in compared.force]
    fact = metrics.get("factuality")
    gold = _rows(fact.get("gold")) if isinstance(fact, Mapping) else []
    shown = {r.get("verifier_id") for r in gold}  # the page's gold section has their matrices
    confusions = [c for c in compared.confusions if c.judge not in shown]
    update = {"ablation": ablation, "force": force, "confusions": confusions}
    return compared.model_copy(update={**update, "notes": [*compared.notes, NOTE]})
