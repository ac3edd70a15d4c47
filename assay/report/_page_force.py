"""The ForceBench part of the HTML report as typed data: judges, charts and statuses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from assay._values import DASH, as_float, as_int, count, dict_of, prompt_ref
from assay.report._charts import DotChart, HeatGroup, Heatmap, dot_chart, estimate, heatmap
from assay.report._tables import AXES, force_summary_frame

STATUS_ORDER = ("ok", "parse_error", "refusal", "truncated", "api_error")


@dataclass(frozen=True)
class JudgeRow:
    """One judge's line of the summary table (sorted by MVR, then FS)."""

    id: str
    model: str | None
    prompt: str | None
    prompt_sha: str | None
    kind: str | None
    n: int | None
    failed: int | None
    mvr: float | None
    mvr_lo: float | None
    mvr_hi: float | None
    fs: float | None
    fs_lo: float | None
    fs_hi: float | None


def _column(frame: pd.DataFrame, name: str) -> dict[str, Any]:
    values = frame[name] if name in frame.columns else [None] * len(frame)
    return dict(zip(frame["judge_id"], values, strict=True))


def _judge_row(row: pd.Series, info: Mapping[str, Any], ids: Mapping[str, Any]) -> JudgeRow:
    prompt_info = dict_of(info.get("prompt"))
    model = ids["model"]
    model = model if isinstance(model, str) and model else dict_of(info.get("client")).get("model")
    pid = ids["prompt_id"]
    pid = pid if isinstance(pid, str) and pid else prompt_info.get("id")
    version = as_int(ids["prompt_version"])
    version = as_int(prompt_info.get("version")) if version is None else version
    return JudgeRow(
        id=str(row["judge"]),
        model=str(model) if model else None,
        prompt=prompt_ref(pid, version),
        prompt_sha=prompt_info.get("sha256"),
        kind=info.get("kind"),
        n=as_int(row["N"]),
        failed=as_int(row["failed"]),
        **{k.lower(): as_float(row[k]) for k in ("MVR", "MVR_lo", "MVR_hi")},
        **{k.lower(): as_float(row[k]) for k in ("FS", "FS_lo", "FS_hi")},
    )


def judge_rows(metrics: pd.DataFrame, by_id: Mapping[str, dict[str, Any]]) -> list[JudgeRow]:
    """Judges with pooled metrics; model and prompt from the rows, else the manifest."""
    if metrics.empty or "group_by" not in metrics.columns:
        return []
    overall = metrics[metrics["group_by"] == "overall"].drop_duplicates("judge_id")
    cols = {c: _column(overall, c) for c in ("model", "prompt_id", "prompt_version")}
    out = []
    for _, row in force_summary_frame(metrics).iterrows():
        jid = str(row["judge"])
        ids = {c: values.get(jid) for c, values in cols.items()}
        out.append(_judge_row(row, by_id.get(jid, {}), ids))
    return out


def _fs_domain(judges: Sequence[JudgeRow]) -> tuple[float, float]:
    values = [v for j in judges for v in (j.fs, j.fs_lo, j.fs_hi) if v is not None]
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    lo = max(-1.0, math.floor(lo * 10 - 1e-9) / 10) if lo < 0 else 0.0
    hi = min(1.0, math.ceil(hi * 10 + 1e-9) / 10) if hi > 0 else 0.1
    return (lo, max(hi, lo + 0.1))


def _estimates(judges: Sequence[JudgeRow], metric: str) -> list[tuple[str, list[Any]]]:
    rows = []
    for j in judges:
        values = {metric: getattr(j, metric)}
        values |= {f"{metric}_{b}": getattr(j, f"{metric}_{b}") for b in ("lo", "hi")}
        rows.append((j.id, [estimate(metric.upper(), j.id, values, metric, count(j.n))]))
    return rows


def force_charts(judges: Sequence[JudgeRow]) -> tuple[DotChart, DotChart]:
    """The MVR and FS dot charts, one row per judge in summary order."""
    mvr = dot_chart(
        _estimates(judges, "mvr"),
        domain=(0.0, 1.0),
        axis_title="MVR (monotonicity violation rate) — lower is better",
        aria="MVR per judge with 95% confidence interval",
    )
    fs = dot_chart(
        _estimates(judges, "fs"),
        domain=_fs_domain(judges),
        axis_title="FS (force sensitivity) — higher is better",
        aria="FS per judge with 95% confidence interval",
    )
    return mvr, fs


def _group_cells(metrics: pd.DataFrame, group_by: str) -> dict[tuple[str, str], dict[str, Any]]:
    if metrics.empty or "group_by" not in metrics.columns:
        return {}
    rows = metrics[metrics["group_by"] == group_by]
    return {(str(r["judge_id"]), str(r["group"])): dict(r) for _, r in rows.iterrows()}


def _axis_order(groups: Iterable[str]) -> list[str]:
    present = set(groups)
    return [a for a in AXES if a in present] + sorted(present - set(AXES))


def _severity_order(groups: Iterable[str]) -> list[str]:
    present = set(groups)
    numeric = sorted((g for g in present if g.isdigit()), key=int)
    return numeric + sorted(present - set(numeric))


def group_heatmap(judges: Sequence[JudgeRow], metrics: pd.DataFrame) -> Heatmap | None:
    """MVR per axis and per severity, or None when the metrics have no such rows."""
    groups: list[HeatGroup] = []
    axis_cells = _group_cells(metrics, "axis")
    if axis_cells:
        cols = [(a, a) for a in _axis_order(g for _, g in axis_cells)]
        groups.append(("per axis", cols, axis_cells))
    sev_cells = _group_cells(metrics, "severity")
    if sev_cells:
        sev = _severity_order(g for _, g in sev_cells)
        groups.append(
            ("per severity", [(s, f"severity {s}" if s.isdigit() else s) for s in sev], sev_cells)
        )
    return heatmap([j.id for j in judges], groups) if groups else None


@dataclass(frozen=True)
class StatusRow:
    judge: str
    planned: int | None
    recorded: int | None
    by_status: tuple[int | None, ...]
    requests: int | None
    cache_hits: int | None
    retries: int | None
    tokens: int | None
    tokens_tip: str
    cost: float | None
    latency: str


@dataclass(frozen=True)
class StatusTable:
    statuses: tuple[str, ...]
    rows: tuple[StatusRow, ...]
    from_records: bool


def status_counts(records: pd.DataFrame | None) -> dict[str, dict[str, int]]:
    """{judge: {status: judgments}} from the latest records, when given."""
    if records is None or records.empty or not {"judge_id", "status"} <= set(records.columns):
        return {}
    counts: dict[str, dict[str, int]] = {}
    for (jid, status), n in records.groupby(["judge_id", "status"]).size().items():
        counts.setdefault(str(jid), {})[str(getattr(status, "value", status))] = int(n)
    return counts


def _status_row(
    jid: str,
    stats: Mapping[str, Any],
    by_status: Mapping[str, Any],
    statuses: Sequence[str],
    recorded: Any,
) -> StatusRow:
    tokens = dict_of(stats.get("tokens"))
    latency = as_float(stats.get("mean_latency_s"))
    return StatusRow(
        judge=jid,
        planned=as_int(stats.get("planned")),
        recorded=as_int(recorded),
        by_status=tuple(as_int(by_status.get(s)) if by_status else None for s in statuses),
        requests=as_int(stats.get("requests_sent")),
        cache_hits=as_int(stats.get("cache_hits")),
        retries=as_int(stats.get("retries")),
        tokens=as_int(tokens.get("total")),
        tokens_tip=" · ".join(f"{k}: {count(v)}" for k, v in tokens.items()),
        cost=as_float(stats.get("cost_usd")),
        latency=DASH if latency is None else f"{latency:.2f} s",
    )


def status_table(
    order: Sequence[str], by_id: Mapping[str, dict[str, Any]], records: pd.DataFrame | None
) -> StatusTable:
    """Judgment statuses per judge: counted from the records when given, else the manifest's."""
    from_records = status_counts(records)
    stats = {jid: dict_of(by_id.get(jid, {}).get("stats")) for jid in order}
    by_status = {
        jid: from_records.get(jid) or dict_of(stats[jid].get("by_status")) for jid in order
    }
    statuses = list(STATUS_ORDER)
    for jid in order:
        statuses += [s for s in by_status[jid] if s not in statuses]
    rows = []
    for jid in order:
        recorded = stats[jid].get("recorded")
        if jid in from_records:
            recorded = sum(from_records[jid].values())
        rows.append(_status_row(jid, stats[jid], by_status[jid], statuses, recorded))
    return StatusTable(tuple(statuses), tuple(rows), bool(from_records))
