"""A run as one self-contained HTML page: tables plus hand-drawn inline SVG charts.

No external JS, CSS or fonts and nothing fetched: the file can be mailed, archived next to
the run directory, or opened offline. Every string that comes from a manifest, a spec, a
metrics row or a record goes through :func:`html.escape` before it reaches the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

import pandas as pd

from assay._version import __version__
from assay.report._html_datasets import dataset_section, pooled_metrics
from assay.report._tables import AXES, force_summary_frame

MVR_LEGEND = (
    "MVR: share of pairs where the raised claim scored ≥ the calibrated one; lower is better."
)
FS_LEGEND = "FS: mean score margin (calibrated − raised) over pairs; higher is better."
STATUS_ORDER = ("ok", "parse_error", "refusal", "truncated", "api_error")
_DASH = "—"


# --------------------------------------------------------------------------- helpers


def _e(value: object) -> str:
    """Escape anything for HTML text or a quoted attribute; None becomes an empty string."""
    return escape("" if value is None else str(value), quote=True)


def _num(value: object) -> float | None:
    """A finite float, or None for None/NaN/non-numbers."""
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _int(value: object) -> int | None:
    num = _num(value)
    return None if num is None else int(num)


def _f3(value: object) -> str:
    num = _num(value)
    return _DASH if num is None else f"{num:.3f}"


def _ci(lo: object, hi: object) -> str:
    a, b = _num(lo), _num(hi)
    return _DASH if a is None or b is None else f"[{a:.3f}, {b:.3f}]"


def _count(value: object) -> str:
    num = _int(value)
    return _DASH if num is None else f"{num:,}"


def _short(sha: object, n: int = 12) -> str:
    return str(sha)[:n] if sha else _DASH


def _when(iso: object) -> str:
    if not iso:
        return _DASH
    try:
        ts = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso)
    offset = ts.utcoffset()
    suffix = "" if offset is None else " UTC" if not offset else ts.strftime(" %z")
    return ts.strftime("%Y-%m-%d %H:%M:%S") + suffix


def _duration(start: object, end: object) -> str | None:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
        seconds = (b - a).total_seconds()
    except (TypeError, ValueError):
        return None
    if seconds < 0:
        return None
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _kv(value: object) -> str:
    """`k=v · k=v` HTML (escaped) for a mapping; each item stays on one line."""
    if isinstance(value, Mapping):
        items = [f"{k}={_plain(v)}" for k, v in value.items()]
        return " · ".join(
            f'<span class="kvi">{_e(t)}</span>' if len(t) <= 32 else _e(t) for t in items
        )
    return _e(_plain(value))


def _wrap(value: object) -> str:
    """Escaped text that may line-break after `/`, `:` and `@` (ids and paths)."""
    text = _e(value)
    return re.sub(r"(::|[/:@])(?=.)", r"\1<wbr>", text)


def _plain(value: object) -> str:
    if value is None:
        return _DASH
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    return str(value)


def _text_width(text: str, size: float = 12.0) -> float:
    """Rough rendered width of sans-serif text (errs wide, so labels are not clipped)."""
    narrow, wide = set("ijlrtf.,:;|!'()[] "), set("mwMW@%")
    em = 0.0
    for ch in text:
        em += 0.34 if ch in narrow else 0.92 if ch in wide else 0.7 if ch.isupper() else 0.6
    return em * size


def _clip(text: str, limit: int = 44) -> str:
    """Middle-ellipsis long labels; the full text goes into a <title> tooltip."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep - keep // 2] + "…" + text[-(keep // 2) :]


def _label_width(labels: Iterable[str]) -> float:
    widest = max((_text_width(_clip(s)) for s in labels), default=60.0)
    return min(max(widest + 18.0, 110.0), 340.0)


def _nice_step(span: float) -> float:
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if span / step <= 10:
            return step
    return 1.0


def _ticks(lo: float, hi: float) -> list[float]:
    step = _nice_step(hi - lo)
    first = math.ceil(lo / step - 1e-9)
    out: list[float] = []
    k = first
    while k * step <= hi + 1e-9:
        out.append(round(k * step, 10))
        k += 1
    return out


def _tick_label(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") if v not in (0.0, -0.0) else "0"


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class _Judge:
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


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _judges(metrics: pd.DataFrame, by_id: Mapping[str, dict[str, Any]]) -> list[_Judge]:
    if metrics.empty or "group_by" not in metrics.columns:
        return []
    summary = force_summary_frame(metrics)
    overall = metrics[metrics["group_by"] == "overall"].drop_duplicates("judge_id")
    model = dict(zip(overall["judge_id"], _col(overall, "model"), strict=True))
    pid = dict(zip(overall["judge_id"], _col(overall, "prompt_id"), strict=True))
    pver = dict(zip(overall["judge_id"], _col(overall, "prompt_version"), strict=True))
    out: list[_Judge] = []
    for _, row in summary.iterrows():
        jid = str(row["judge"])
        info = by_id.get(jid, {})
        prompt_info = _dict(info.get("prompt"))
        m = model.get(jid)
        m = m if isinstance(m, str) and m else _dict(info.get("client")).get("model")
        p_id = pid.get(jid)
        p_id = p_id if isinstance(p_id, str) and p_id else prompt_info.get("id")
        p_ver = _int(pver.get(jid))
        if p_ver is None:
            p_ver = _int(prompt_info.get("version"))
        prompt = None if not p_id else f"{p_id}@{p_ver}" if p_ver is not None else str(p_id)
        out.append(
            _Judge(
                id=jid,
                model=str(m) if m else None,
                prompt=prompt,
                prompt_sha=prompt_info.get("sha256"),
                kind=info.get("kind"),
                n=_int(row["N"]),
                failed=_int(row["failed"]),
                mvr=_num(row["MVR"]),
                mvr_lo=_num(row["MVR_lo"]),
                mvr_hi=_num(row["MVR_hi"]),
                fs=_num(row["FS"]),
                fs_lo=_num(row["FS_lo"]),
                fs_hi=_num(row["FS_hi"]),
            )
        )
    return out


def _group_cells(metrics: pd.DataFrame, group_by: str) -> dict[tuple[str, str], pd.Series]:
    if metrics.empty or "group_by" not in metrics.columns:
        return {}
    rows = metrics[metrics["group_by"] == group_by]
    return {(str(r["judge_id"]), str(r["group"])): r for _, r in rows.iterrows()}


def _axis_order(groups: Iterable[str]) -> list[str]:
    present = set(groups)
    return [a for a in AXES if a in present] + sorted(present - set(AXES))


def _severity_order(groups: Iterable[str]) -> list[str]:
    present = set(groups)
    numeric = sorted((g for g in present if g.isdigit()), key=int)
    return numeric + sorted(present - set(numeric))


# --------------------------------------------------------------------------- charts


def _dot_chart(
    judges: Sequence[_Judge],
    metric: str,
    *,
    domain: tuple[float, float],
    axis_title: str,
    aria: str,
) -> str:
    """Horizontal dot-and-whisker chart: one row per judge, point estimate and 95% CI."""
    label_w = _label_width(j.id for j in judges)
    plot_w, gutter, top, row_h, bottom = 480.0, 170.0, 24.0, 26.0, 48.0
    width = label_w + plot_w + gutter
    height = top + row_h * len(judges) + bottom
    lo_d, hi_d = domain
    y_end = top + row_h * len(judges)

    def x(v: float) -> float:
        v = min(max(v, lo_d), hi_d)
        return label_w + (v - lo_d) / (hi_d - lo_d) * plot_w

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{_e(aria)}">'
    ]
    for i in range(len(judges)):
        if i % 2 == 0:
            parts.append(
                f'<rect class="band" x="0" y="{top + i * row_h:.1f}" width="{width:.0f}" '
                f'height="{row_h:.0f}"/>'
            )
    for t in _ticks(lo_d, hi_d):
        cls = "zero" if abs(t) < 1e-12 and lo_d < 0 < hi_d else "grid"
        parts.append(
            f'<line class="{cls}" x1="{x(t):.1f}" y1="{top:.1f}" x2="{x(t):.1f}" y2="{y_end:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{x(t):.1f}" y="{y_end + 16:.1f}" '
            f'text-anchor="middle">{_e(_tick_label(t))}</text>'
        )
    parts.append(
        f'<line class="axis" x1="{label_w:.1f}" y1="{y_end:.1f}" x2="{label_w + plot_w:.1f}" '
        f'y2="{y_end:.1f}"/>'
    )
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w / 2:.1f}" y="{y_end + 38:.1f}" '
        f'text-anchor="middle">{_e(axis_title)}</text>'
    )
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w + 12:.1f}" y="15">estimate [95% CI]</text>'
    )
    for i, j in enumerate(judges):
        cy = top + i * row_h + row_h / 2
        v, lo, hi = (getattr(j, metric), getattr(j, f"{metric}_lo"), getattr(j, f"{metric}_hi"))
        tip = f"{j.id}: {metric.upper()} {_f3(v)} 95% CI {_ci(lo, hi)}, n={_count(j.n)}"
        parts.append(f"<g><title>{_e(tip)}</title>")
        parts.append(
            f'<text class="label" x="{label_w - 10:.1f}" y="{cy:.1f}" dy="0.35em" '
            f'text-anchor="end">{_e(_clip(j.id))}</text>'
        )
        if lo is not None and hi is not None:
            x1, x2 = x(lo), x(hi)
            parts.append(
                f'<line class="whisker" x1="{x1:.1f}" y1="{cy:.1f}" x2="{x2:.1f}" y2="{cy:.1f}"/>'
            )
            for xc in (x1, x2):
                parts.append(
                    f'<line class="whisker" x1="{xc:.1f}" y1="{cy - 5:.1f}" x2="{xc:.1f}" '
                    f'y2="{cy + 5:.1f}"/>'
                )
        if v is not None:
            parts.append(f'<circle class="dot" cx="{x(v):.1f}" cy="{cy:.1f}" r="5"/>')
        value = "n/a" if v is None else f"{v:.3f} {_ci(lo, hi)}"
        parts.append(
            f'<text class="value" x="{label_w + plot_w + 12:.1f}" y="{cy:.1f}" '
            f'dy="0.35em">{_e(value)}</text>'
        )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


_STOPS = ((0.0, (199, 233, 192)), (0.5, (254, 232, 154)), (1.0, (239, 122, 104)))


def _heat_colour(v: float) -> str:
    v = min(max(v, 0.0), 1.0)
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:], strict=False):
        if v <= b:
            t = (v - a) / (b - a)
            r, g, bl = (round(ca[k] + (cb[k] - ca[k]) * t) for k in range(3))
            return f"rgb({r},{g},{bl})"
    return "rgb(239,122,104)"


def _heatmap(
    judges: Sequence[_Judge],
    blocks: Sequence[tuple[str, list[tuple[str, str]], dict[tuple[str, str], pd.Series]]],
) -> str:
    """Judges × groups grid of MVR; one block of columns per grouping (axis, severity)."""
    label_w = _label_width(j.id for j in judges)
    cell_w, cell_h, gap, top = 68.0, 26.0, 22.0, 44.0
    n_cols = sum(len(cols) for _, cols, _ in blocks)
    grid_w = n_cols * cell_w + gap * (len(blocks) - 1)
    width = label_w + max(grid_w, 300.0) + 12
    y_end = top + cell_h * len(judges)
    height = y_end + 58
    parts = [
        f'<svg class="chart heat" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        'aria-label="MVR per axis and severity, one row per judge">'
    ]
    for i, j in enumerate(judges):
        cy = top + i * cell_h + cell_h / 2
        parts.append(
            f'<text class="label" x="{label_w - 10:.1f}" y="{cy:.1f}" dy="0.35em" '
            f'text-anchor="end"><title>{_e(j.id)}</title>{_e(_clip(j.id))}</text>'
        )
    x0 = label_w
    for title, cols, cells in blocks:
        block_w = len(cols) * cell_w
        parts.append(
            f'<text class="block-title" x="{x0 + block_w / 2:.1f}" y="14" '
            f'text-anchor="middle">{_e(title)}</text>'
        )
        parts.append(
            f'<line class="axis" x1="{x0 + 4:.1f}" y1="20" x2="{x0 + block_w - 4:.1f}" y2="20"/>'
        )
        for c, (key, label) in enumerate(cols):
            cx = x0 + c * cell_w
            parts.append(
                f'<text class="tick" x="{cx + cell_w / 2:.1f}" y="36" '
                f'text-anchor="middle">{_e(label)}</text>'
            )
            for i, j in enumerate(judges):
                y = top + i * cell_h
                row = cells.get((j.id, key))
                v = None if row is None else _num(row.get("mvr"))
                fill = "#eef1f4" if v is None else _heat_colour(v)
                text = _DASH if v is None else f"{v:.2f}"
                if row is None:
                    tip = f"{j.id} · {label}: no pairs"
                else:
                    tip = (
                        f"{j.id} · {label}: MVR {_f3(row.get('mvr'))} 95% CI "
                        f"{_ci(row.get('mvr_lo'), row.get('mvr_hi'))}, n={_count(row.get('n'))}"
                        f", failed={_count(row.get('n_failed'))}"
                    )
                parts.append(
                    f'<g><title>{_e(tip)}</title><rect class="cell" x="{cx + 1:.1f}" '
                    f'y="{y + 1:.1f}" width="{cell_w - 2:.0f}" height="{cell_h - 2:.0f}" '
                    f'fill="{fill}"/><text class="cell-text" x="{cx + cell_w / 2:.1f}" '
                    f'y="{y + cell_h / 2:.1f}" dy="0.35em" text-anchor="middle">'
                    f"{_e(text)}</text></g>"
                )
        x0 += block_w + gap
    # colour scale
    sx, sy, sw = label_w, y_end + 18, 220.0
    parts.append(
        '<defs><linearGradient id="assay-mvr-scale" x1="0" x2="1" y1="0" y2="0">'
        + "".join(f'<stop offset="{p:.2f}" stop-color="{_heat_colour(p)}"/>' for p, _ in _STOPS)
        + "</linearGradient></defs>"
    )
    parts.append(
        f'<rect class="cell" x="{sx:.1f}" y="{sy:.1f}" width="{sw:.0f}" height="10" '
        'fill="url(#assay-mvr-scale)"/>'
    )
    for p, label in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        parts.append(
            f'<text class="tick" x="{sx + p * sw:.1f}" y="{sy + 24:.1f}" '
            f'text-anchor="middle">{label}</text>'
        )
    parts.append(
        f'<text class="axis-title" x="{sx + sw + 14:.1f}" y="{sy + 9:.1f}">'
        "MVR per group (lower is better)</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- sections


def _header(
    manifest: Mapping[str, Any], *, forcebench: bool = True, factuality: bool = False
) -> str:
    env = _dict(manifest.get("environment"))
    git = _dict(env.get("git"))
    status = str(manifest.get("status") or "unknown")
    finished = manifest.get("finished_at")
    took = _duration(manifest.get("created_at"), finished) if finished else None
    if finished:
        done = _e(_when(finished)) + (f' <span class="muted">({_e(took)})</span>' if took else "")
    else:
        updated = _e(_when(manifest.get("updated_at")))
        done = f'<span class="muted">not finished · last update {updated}</span>'
    items: list[tuple[str, str]] = [
        ("created", _e(_when(manifest.get("created_at")))),
        ("finished", done),
        ("assay version", _e(env.get("assay_version") or _DASH)),
    ]
    if git:
        dirty = (
            ' <span class="badge warn">dirty</span>'
            if git.get("dirty")
            else ' <span class="badge ok">clean</span>'
        )
        items.append(
            (
                "git commit",
                f'<code title="{_e(git.get("commit"))}">{_e(_short(git.get("commit"), 10))}</code>'
                + dirty,
            )
        )
    else:
        items.append(("git commit", '<span class="muted">not a git checkout</span>'))
    for ds in _list(manifest.get("datasets")):
        ds = _dict(ds)
        items.append(
            (
                "dataset",
                f"{_e(ds.get('name'))} · {_count(ds.get('rows'))} rows · "
                f'sha256 <code title="{_e(ds.get("sha256"))}">{_e(_short(ds.get("sha256")))}'
                "</code>",
            )
        )
    fact = _dict(manifest.get("factuality"))
    for ds in _list(fact.get("datasets")):
        ds = _dict(ds)
        items.append(
            (
                "answers",
                f"{_e(ds.get('name'))} · {_count(ds.get('rows'))} responses · "
                f'sha256 <code title="{_e(ds.get("sha256"))}">{_e(_short(ds.get("sha256")))}'
                "</code>",
            )
        )
    if forcebench:
        planned = manifest.get("planned_judgments")
        recorded = manifest.get("recorded_judgments")
        items.append(("judgments", f"{_count(recorded)} recorded / {_count(planned)} planned"))
    if factuality:
        planned, recorded = fact.get("planned_verifications"), fact.get("recorded_verifications")
        items.append(("verifications", f"{_count(recorded)} recorded / {_count(planned)} planned"))
    meta = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items)
    badge = {"complete": "ok", "failed": "bad"}.get(status, "warn")
    kicker = " + ".join(
        name for name, on in (("ForceBench", forcebench), ("factuality", factuality)) if on
    )
    kicker = kicker[:1].upper() + kicker[1:] if kicker else "assay"
    out = [
        "<header>",
        f'<p class="kicker">assay · {_e(kicker)} run report</p>',
        f"<h1>{_e(manifest.get('name') or 'unnamed run')} "
        f'<span class="badge {badge}">{_e(status)}</span></h1>',
    ]
    if manifest.get("run_id"):
        out.append(f'<p class="muted">run <code>{_e(manifest.get("run_id"))}</code></p>')
    if manifest.get("message"):
        out.append(f'<p class="note bad">{_e(manifest.get("message"))}</p>')
    out.append(f'<dl class="meta">{meta}</dl>')
    for warning in _list(manifest.get("warnings")):
        out.append(f'<p class="note warn">warning: {_e(warning)}</p>')
    out.append("</header>")
    return "".join(out)


def _summary_table(judges: Sequence[_Judge]) -> str:
    head = (
        "<tr><th class=num>#</th><th>judge</th><th>model</th><th>prompt</th>"
        "<th class=num>N</th><th class=num>failed pairs</th>"
        "<th class=num title='lower is better'>MVR ↓</th><th class=num>MVR 95% CI</th>"
        "<th class=num title='higher is better'>FS ↑</th><th class=num>FS 95% CI</th></tr>"
    )
    rows = []
    for rank, j in enumerate(judges, 1):
        if j.prompt:
            prompt = f"<code>{_e(j.prompt)}</code>"
            if j.prompt_sha:
                prompt += (
                    f' <span class="muted mono" title="sha256 {_e(j.prompt_sha)}">'
                    f"{_e(_short(j.prompt_sha, 8))}</span>"
                )
        else:
            prompt = f'<span class="muted">{_DASH}</span>'
        model = (
            f"<code>{_e(j.model)}</code>"
            if j.model
            else f'<span class="muted">{_e(j.kind or _DASH)}</span>'
        )
        failed_cls = "num warn" if j.failed else "num"
        rows.append(
            f"<tr><td class=num>{rank}</td><td class=judge>{_wrap(j.id)}</td><td>{model}</td>"
            f"<td>{prompt}</td><td class=num>{_count(j.n)}</td>"
            f"<td class='{failed_cls}'>{_count(j.failed)}</td>"
            f"<td class='num strong'>{_f3(j.mvr)}</td><td class=num>{_ci(j.mvr_lo, j.mvr_hi)}</td>"
            f"<td class='num strong'>{_f3(j.fs)}</td><td class=num>{_ci(j.fs_lo, j.fs_hi)}</td>"
            "</tr>"
        )
    return (
        '<div class="scroll"><table class="summary"><thead>'
        + head
        + "</thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + '<p class="caption">Sorted by MVR (then FS). MVR ↓ lower is better, FS ↑ higher is '
        "better; a failed pair (a member missing or not <code>ok</code>) counts as a violation "
        "with margin 0 and stays in N. CIs: 95% bootstrap.</p>"
    )


def _fs_domain(judges: Sequence[_Judge]) -> tuple[float, float]:
    values = [v for j in judges for v in (j.fs, j.fs_lo, j.fs_hi) if v is not None]
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    lo = max(-1.0, math.floor(lo * 10 - 1e-9) / 10) if lo < 0 else 0.0
    hi = min(1.0, math.ceil(hi * 10 + 1e-9) / 10) if hi > 0 else 0.1
    return (lo, max(hi, lo + 0.1))


def _charts(judges: Sequence[_Judge], metrics: pd.DataFrame) -> str:
    mvr = _dot_chart(
        judges,
        "mvr",
        domain=(0.0, 1.0),
        axis_title="MVR (monotonicity violation rate) — lower is better",
        aria="MVR per judge with 95% confidence interval",
    )
    fs = _dot_chart(
        judges,
        "fs",
        domain=_fs_domain(judges),
        axis_title="FS (force sensitivity) — higher is better",
        aria="FS per judge with 95% confidence interval",
    )
    whisker = "Dot: estimate; whisker: 95% bootstrap CI."
    out = [
        '<section id="charts"><h2>MVR and FS per judge</h2>',
        f"<figure>{mvr}<figcaption><b>{_e(MVR_LEGEND)}</b> {whisker}</figcaption></figure>",
        f"<figure>{fs}<figcaption><b>{_e(FS_LEGEND)}</b> {whisker}</figcaption></figure>",
        "</section>",
    ]
    axis_cells = _group_cells(metrics, "axis")
    sev_cells = _group_cells(metrics, "severity")
    blocks: list[tuple[str, list[tuple[str, str]], dict[tuple[str, str], pd.Series]]] = []
    if axis_cells:
        cols = [(a, a) for a in _axis_order(g for _, g in axis_cells)]
        blocks.append(("per axis", cols, axis_cells))
    if sev_cells:
        sev = _severity_order(g for _, g in sev_cells)
        cols = [(s, f"severity {s}" if s.isdigit() else s) for s in sev]
        blocks.append(("per severity", cols, sev_cells))
    out.append('<section id="groups"><h2>MVR by axis and severity</h2>')
    if blocks:
        out.append(
            f"<figure>{_heatmap(judges, blocks)}<figcaption><b>{_e(MVR_LEGEND)}</b> Each "
            "cell is the judge's MVR on the pairs of one axis or severity; hover for n and "
            "the 95% CI. Greener is better.</figcaption></figure>"
        )
    else:
        out.append('<p class="muted">No per-axis or per-severity rows in the metrics.</p>')
    out.append("</section>")
    return "".join(out)


def _status_counts(records: pd.DataFrame | None) -> dict[str, dict[str, int]]:
    if records is None or records.empty or not {"judge_id", "status"} <= set(records.columns):
        return {}
    counts: dict[str, dict[str, int]] = {}
    for (jid, status), n in records.groupby(["judge_id", "status"]).size().items():
        counts.setdefault(str(jid), {})[str(getattr(status, "value", status))] = int(n)
    return counts


def _status_table(
    order: Sequence[str],
    by_id: Mapping[str, dict[str, Any]],
    from_records: Mapping[str, dict[str, int]],
) -> str:
    statuses = list(STATUS_ORDER)
    for jid in order:
        by_status = from_records.get(jid) or _dict(
            _dict(by_id.get(jid, {}).get("stats")).get("by_status")
        )
        statuses += [s for s in by_status if s not in statuses]
    head = (
        "<tr><th>judge</th><th class=num>planned</th><th class=num>recorded</th>"
        + "".join(f"<th class=num>{_e(s.replace('_', ' '))}</th>" for s in statuses)
        + "<th class=num>requests sent</th><th class=num>cache hits</th>"
        "<th class=num>retries</th><th class=num>tokens</th><th class=num>cost (USD)</th>"
        "<th class=num>mean latency</th></tr>"
    )
    rows = []
    for jid in order:
        stats = _dict(by_id.get(jid, {}).get("stats"))
        by_status = from_records.get(jid) or _dict(stats.get("by_status"))
        cells = [f"<td class=judge>{_wrap(jid)}</td>"]
        cells.append(f"<td class=num>{_count(stats.get('planned'))}</td>")
        recorded = stats.get("recorded")
        if jid in from_records:
            recorded = sum(from_records[jid].values())
        cells.append(f"<td class=num>{_count(recorded)}</td>")
        for s in statuses:
            n = _int(by_status.get(s)) if by_status else None
            cls = "num warn" if s != "ok" and n else "num"
            cells.append(f"<td class='{cls}'>{_count(n)}</td>")
        cells.append(f"<td class=num>{_count(stats.get('requests_sent'))}</td>")
        cells.append(f"<td class=num>{_count(stats.get('cache_hits'))}</td>")
        retries = _int(stats.get("retries"))
        cells.append(f"<td class='{'num warn' if retries else 'num'}'>{_count(retries)}</td>")
        tokens = _dict(stats.get("tokens"))
        tip = " · ".join(f"{k}: {_count(v)}" for k, v in tokens.items())
        cells.append(f"<td class=num title='{_e(tip)}'>{_count(tokens.get('total'))}</td>")
        cost = _num(stats.get("cost_usd"))
        cells.append(f"<td class=num>{_DASH if cost is None else f'${cost:,.4f}'}</td>")
        lat = _num(stats.get("mean_latency_s"))
        cells.append(f"<td class=num>{_DASH if lat is None else f'{lat:.2f} s'}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    source = (
        "Status counts from <code>judgments.jsonl</code>"
        if from_records
        else "From the manifest's <code>judges[].stats</code>"
    )
    return (
        '<section id="statuses"><h2>Judgment statuses</h2>'
        '<div class="scroll"><table class="statuses"><thead>'
        + head
        + "</thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + f'<p class="caption">{source}. Requests are HTTP attempts (retries included); cost '
        "covers uncached calls only and is blank when the model is unknown to litellm's cost "
        "map.</p></section>"
    )


def _judge_repro_row(info: Mapping[str, Any]) -> str:
    jid = info.get("id")
    kind = info.get("kind")
    client = _dict(info.get("client"))
    prompt = _dict(info.get("prompt"))
    if client:
        retry = _dict(client.get("retry"))
        client_html = (
            f"<div>{_e(client.get('provider') or client.get('kind'))} · "
            f"<code>{_e(client.get('model'))}</code></div>"
            f"<div class=mono>{_e(client.get('api_base') or 'provider default')}</div>"
            f'<div class="muted">timeout {_e(client.get("timeout_s"))} s · concurrency '
            f"{_e(client.get('max_concurrency'))} · attempts {_e(retry.get('max_attempts'))}"
            f" · structured output {_e(client.get('structured_output'))}</div>"
        )
    else:
        params = {
            k: v for k, v in info.items() if k not in ("id", "name", "kind", "stats", "version")
        }
        client_html = (
            f"<div>{_e(kind or 'judge')} <code>{_e(info.get('name') or jid)}</code> "
            f"v{_e(info.get('version') or '?')}</div>"
            f'<div class="muted mono">{_kv(params)}</div>'
        )
    decoding = _dict(info.get("decoding"))
    decoding_html = (
        "".join(f'<div class="mono">{_e(k)}={_e(_plain(v))}</div>' for k, v in decoding.items())
        if decoding
        else f'<span class="muted">{_DASH}</span>'
    )
    if info.get("output_cap_tokens") is not None and "max_tokens" not in decoding:
        decoding_html += f"<div>output cap {_e(info.get('output_cap_tokens'))}</div>"
    if prompt:
        prompt_html = (
            f"<div><code>{_e(prompt.get('id'))}@{_e(prompt.get('version'))}</code>"
            + (" (built-in)" if prompt.get("builtin") else "")
            + f"</div><div class=mono>{_wrap(prompt.get('file'))}</div>"
            f'<div class="muted mono">sha256 {_e(prompt.get("sha256"))}</div>'
        )
    else:
        prompt_html = f'<span class="muted">{_DASH}</span>'
    parser = info.get("parser_version")
    if parser:
        prompt_html += f'<div class="muted">parser {_e(parser)}</div>'
    return (
        f"<tr><td class=judge>{_wrap(jid)}</td><td>{client_html}</td><td>{decoding_html}</td>"
        f"<td>{prompt_html}</td></tr>"
    )


def _repro(manifest: Mapping[str, Any], order: Sequence[str], *, forcebench: bool = True) -> str:
    env = _dict(manifest.get("environment"))
    git = _dict(env.get("git"))
    spec = _dict(manifest.get("spec"))
    cache = _dict(manifest.get("cache"))
    items: list[tuple[str, str]] = [
        ("spec", f"<span class=mono>{_wrap(manifest.get('spec_path') or _DASH)}</span>"),
        ("spec sha256", f"<span class=mono>{_e(manifest.get('spec_sha256') or _DASH)}</span>"),
        (
            "bootstrap",
            f"{_e(spec.get('bootstrap', 1000))} resamples · seed {_e(spec.get('seed', 0))} · "
            "95% CIs",
        ),
    ]
    if forcebench:
        items.insert(
            2, ("parser version", f"<code>{_e(manifest.get('parser_version') or _DASH)}</code>")
        )
    for ds in _list(manifest.get("datasets")):
        ds = _dict(ds)
        items.append(
            (
                f"dataset {_e(ds.get('name'))}",
                f"<span class=mono>{_wrap(ds.get('path'))}</span><br>"
                f"<span class=mono>sha256 {_e(ds.get('sha256'))}</span> · "
                f"{_count(ds.get('rows'))} rows",
            )
        )
    fact = _dict(manifest.get("factuality"))
    for ds in _list(fact.get("datasets")):
        ds = _dict(ds)
        fmt = f" · format {_e(ds.get('format'))}" if ds.get("format") else ""
        items.append(
            (
                f"answers {_e(ds.get('name'))}",
                f"<span class=mono>{_wrap(ds.get('path'))}</span><br>"
                f"<span class=mono>sha256 {_e(ds.get('sha256'))}</span> · "
                f"{_count(ds.get('rows'))} responses{fmt}",
            )
        )
    if git:
        items.append(
            (
                "git",
                f"<span class=mono>{_e(git.get('commit'))}</span>"
                + (" (dirty working tree)" if git.get("dirty") else ""),
            )
        )
    if env:
        items.append(
            (
                "environment",
                f"Python {_e(env.get('python'))} ({_e(env.get('implementation'))}) · "
                f"{_e(env.get('platform'))}",
            )
        )
        packages = _dict(env.get("packages"))
        if packages:
            items.append(
                (
                    "packages",
                    '<span class="mono">'
                    + " · ".join(f"{_e(k)} {_e(v)}" for k, v in packages.items() if v is not None)
                    + "</span>",
                )
            )
    if cache:
        items.append(("cache", f"<span class=mono>{_kv(cache)}</span>"))
    if manifest.get("failure_policy"):
        items.append(
            ("failure policy", f"<span class=mono>{_kv(manifest['failure_policy'])}</span>")
        )
    for rp in _list(manifest.get("reparses")):
        items.append(("reparse", f"<span class=mono>{_kv(rp)}</span>"))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    by_id = {str(_dict(j).get("id")): _dict(j) for j in _list(manifest.get("judges"))}
    ordered = [by_id[j] for j in order if j in by_id]
    ordered += [j for jid, j in by_id.items() if jid not in set(order)]
    judge_rows = "".join(_judge_repro_row(j) for j in ordered)
    table = (
        '<div class="scroll"><table class="repro-judges"><colgroup><col style="width:18%">'
        '<col style="width:30%"><col style="width:17%"><col style="width:35%"></colgroup>'
        "<thead><tr><th>judge</th>"
        "<th>client / parameters</th><th>decoding</th><th>prompt</th></tr></thead><tbody>"
        + judge_rows
        + "</tbody></table></div>"
        if judge_rows
        else ""
    )
    if table and fact:
        table = "<h3>ForceBench judges</h3>" + table
    return (
        '<section id="repro" class="repro"><h2>Reproducibility</h2>'
        f'<dl class="kv">{dl}</dl>{table}{_fact_repro(fact)}</section>'
    )


# --------------------------------------------------------------------------- factuality

VERDICT_ORDER = ("supported", "unsupported", "contradicted")
UNSCORED_ORDER = ("parse_error", "refusal", "truncated", "api_error", "missing")
OUTCOME_COLOURS = {
    "supported": "#16a34a",
    "unsupported": "#f59e0b",
    "contradicted": "#dc2626",
    "parse_error": "#7c3aed",
    "refusal": "#db2777",
    "truncated": "#0891b2",
    "api_error": "#334155",
    "missing": "#94a3b8",
}
MACRO_LEGEND = "macro: mean over responses of F(r) = supported / scored claims of r"
MICRO_LEGEND = "micro: supported / scored over all claims pooled"
_UNSCORED_NOTE = (
    "Unscored claims (parse error, refusal, truncated, API error, or no verification: "
    "missing) are never counted as supported and never enter a denominator."
)


def _label(status: str) -> str:
    return status.replace("_", " ")


def _pct(value: object, digits: int = 1) -> str:
    num = _num(value)
    return _DASH if num is None else f"{num * 100:.{digits}f}%"


def _prompt_ref(pid: object, version: object) -> str | None:
    if not pid:
        return None
    ver = _int(version)
    return f"{pid}@{ver}" if ver is not None else str(pid)


@dataclass(frozen=True)
class _Verifier:
    id: str
    kind: str | None
    model: str | None
    prompt: str | None
    prompt_sha: str | None
    row: dict[str, Any]
    info: dict[str, Any]

    def get(self, name: str) -> object:
        return self.row.get(name)

    def count(self, status: str) -> int:
        return _int(self.row.get(f"n_{status}")) or 0


def _model_of(info: Mapping[str, Any]) -> str | None:
    model = _dict(info.get("client")).get("model") or info.get("model")
    return str(model) if model else None


def _verifiers(fact_manifest: Mapping[str, Any], scores: Mapping[str, Any]) -> list[_Verifier]:
    """Verifiers in the spec's order, then any that only the metrics know."""
    infos = {str(_dict(v).get("id")): _dict(v) for v in _list(fact_manifest.get("verifiers"))}
    rows = {str(_dict(r).get("verifier_id")): _dict(r) for r in _list(scores.get("rows"))}
    out: list[_Verifier] = []
    for vid in [*infos, *(r for r in rows if r not in infos)]:
        info, row = infos.get(vid, {}), rows.get(vid, {})
        prompt_info = _dict(info.get("prompt"))
        model = row.get("model") or _model_of(info)
        prompt = _prompt_ref(row.get("prompt_id"), row.get("prompt_version")) or _prompt_ref(
            prompt_info.get("id"), prompt_info.get("version")
        )
        sha = prompt_info.get("sha256")
        out.append(
            _Verifier(
                id=vid,
                kind=str(info["kind"]) if info.get("kind") else None,
                model=str(model) if model else None,
                prompt=prompt,
                prompt_sha=str(sha) if sha else None,
                row=row,
                info=info,
            )
        )
    return out


def _fact_dot_chart(verifiers: Sequence[_Verifier]) -> str:
    """Macro and micro per verifier on a 0–1 axis: two markers and whiskers per row."""
    label_w = _label_width(v.id for v in verifiers)
    plot_w, gutter, top, row_h, bottom = 480.0, 220.0, 34.0, 40.0, 48.0
    width = label_w + plot_w + gutter
    y_end = top + row_h * len(verifiers)
    height = y_end + bottom

    def x(v: float) -> float:
        return label_w + min(max(v, 0.0), 1.0) * plot_w

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        'aria-label="Macro and micro factuality per verifier with 95% confidence intervals">'
    ]
    # legend
    lx = label_w
    parts.append(f'<circle class="dot" cx="{lx + 6:.1f}" cy="13" r="5"/>')
    parts.append(f'<text class="axis-title" x="{lx + 16:.1f}" y="13" dy="0.35em">macro</text>')
    lx += 16 + _text_width("macro") + 18
    parts.append(_diamond(lx + 6, 13))
    parts.append(f'<text class="axis-title" x="{lx + 16:.1f}" y="13" dy="0.35em">micro</text>')
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w + 12:.1f}" y="13" dy="0.35em">'
        "estimate [95% CI]</text>"
    )
    for i in range(len(verifiers)):
        if i % 2 == 0:
            parts.append(
                f'<rect class="band" x="0" y="{top + i * row_h:.1f}" width="{width:.0f}" '
                f'height="{row_h:.0f}"/>'
            )
    for t in _ticks(0.0, 1.0):
        parts.append(
            f'<line class="grid" x1="{x(t):.1f}" y1="{top:.1f}" x2="{x(t):.1f}" y2="{y_end:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{x(t):.1f}" y="{y_end + 16:.1f}" '
            f'text-anchor="middle">{_e(_tick_label(t))}</text>'
        )
    parts.append(
        f'<line class="axis" x1="{label_w:.1f}" y1="{y_end:.1f}" x2="{label_w + plot_w:.1f}" '
        f'y2="{y_end:.1f}"/>'
    )
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w / 2:.1f}" y="{y_end + 38:.1f}" '
        'text-anchor="middle">factuality F = supported / scored claims</text>'
    )
    for i, v in enumerate(verifiers):
        cy = top + i * row_h + row_h / 2
        parts.append(
            f'<text class="label" x="{label_w - 10:.1f}" y="{cy:.1f}" dy="0.35em" '
            f'text-anchor="end"><title>{_e(v.id)}</title>{_e(_clip(v.id))}</text>'
        )
        for metric, dy in (("macro", -7.0), ("micro", 7.0)):
            y = cy + dy
            val, lo, hi = (
                _num(v.get(metric)),
                _num(v.get(f"{metric}_lo")),
                _num(v.get(f"{metric}_hi")),
            )
            tip = f"{v.id}: {metric} {_f3(val)} 95% CI {_ci(lo, hi)}"
            parts.append(f"<g><title>{_e(tip)}</title>")
            if lo is not None and hi is not None:
                x1, x2 = x(lo), x(hi)
                parts.append(
                    f'<line class="whisker" x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}"/>'
                )
                for xc in (x1, x2):
                    parts.append(
                        f'<line class="whisker" x1="{xc:.1f}" y1="{y - 4:.1f}" x2="{xc:.1f}" '
                        f'y2="{y + 4:.1f}"/>'
                    )
            if val is not None:
                parts.append(
                    f'<circle class="dot" cx="{x(val):.1f}" cy="{y:.1f}" r="5"/>'
                    if metric == "macro"
                    else _diamond(x(val), y)
                )
            text = f"{metric} " + ("n/a" if val is None else f"{val:.3f} {_ci(lo, hi)}")
            parts.append(
                f'<text class="value" x="{label_w + plot_w + 12:.1f}" y="{y:.1f}" '
                f'dy="0.35em">{_e(text)}</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _diamond(cx: float, cy: float, r: float = 6.0) -> str:
    return (
        f'<path class="dot2" d="M{cx:.1f} {cy - r:.1f}L{cx + r:.1f} {cy:.1f}'
        f'L{cx:.1f} {cy + r:.1f}L{cx - r:.1f} {cy:.1f}Z"/>'
    )


def _outcome_bars(verifiers: Sequence[_Verifier]) -> str:
    """One 100% stacked bar per verifier: verdicts, then every kind of unscored claim."""
    label_w = _label_width(v.id for v in verifiers)
    plot_w, gutter, top, row_h, bar_h, bottom = 520.0, 250.0, 22.0, 32.0, 20.0, 40.0
    width = label_w + plot_w + gutter
    y_end = top + row_h * len(verifiers)
    height = y_end + bottom
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        'aria-label="Claim outcomes per verifier: verdicts and unscored claims">'
        '<defs><pattern id="assay-unscored" width="6" height="6" '
        'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="2.2" height="6" fill="#fff" fill-opacity="0.45"/></pattern></defs>'
    ]
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w + 12:.1f}" y="13" dy="0.35em">claims</text>'
    )
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        xt = label_w + t * plot_w
        parts.append(
            f'<line class="grid" x1="{xt:.1f}" y1="{top:.1f}" x2="{xt:.1f}" y2="{y_end:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{xt:.1f}" y="{y_end + 16:.1f}" '
            f'text-anchor="middle">{t:.0%}</text>'
        )
    parts.append(
        f'<text class="axis-title" x="{label_w + plot_w / 2:.1f}" y="{y_end + 34:.1f}" '
        'text-anchor="middle">share of the verifier\'s claims</text>'
    )
    for i, v in enumerate(verifiers):
        cy = top + i * row_h + row_h / 2
        y = cy - bar_h / 2
        parts.append(
            f'<text class="label" x="{label_w - 10:.1f}" y="{cy:.1f}" dy="0.35em" '
            f'text-anchor="end"><title>{_e(v.id)}</title>{_e(_clip(v.id))}</text>'
        )
        counts = [(s, v.count(s)) for s in (*VERDICT_ORDER, *UNSCORED_ORDER)]
        total = _int(v.get("n_claims"))
        total = total if total is not None and total > 0 else sum(n for _, n in counts)
        if total <= 0:
            parts.append(
                f'<rect class="empty" x="{label_w:.1f}" y="{y:.1f}" width="{plot_w:.0f}" '
                f'height="{bar_h:.0f}"/><text class="tick" x="{label_w + plot_w / 2:.1f}" '
                f'y="{cy:.1f}" dy="0.35em" text-anchor="middle">no claims</text>'
            )
        else:
            x0 = label_w
            for status, n in counts:
                if n <= 0:
                    continue
                w = n / total * plot_w
                tip = f"{v.id} · {_label(status)}: {n:,} of {total:,} claims ({n / total:.1%})"
                parts.append(
                    f'<g><title>{_e(tip)}</title><rect x="{x0:.2f}" y="{y:.1f}" '
                    f'width="{w:.2f}" height="{bar_h:.0f}" fill="{OUTCOME_COLOURS[status]}"/>'
                )
                if status in UNSCORED_ORDER:
                    parts.append(
                        f'<rect x="{x0:.2f}" y="{y:.1f}" width="{w:.2f}" height="{bar_h:.0f}" '
                        'fill="url(#assay-unscored)"/>'
                    )
                text = f"{n:,}"
                if w >= _text_width(text, 11) + 8:
                    parts.append(
                        f'<text class="seg" x="{x0 + w / 2:.1f}" y="{cy:.1f}" dy="0.35em" '
                        f'text-anchor="middle">{_e(text)}</text>'
                    )
                parts.append("</g>")
                x0 += w
            parts.append(
                f'<rect class="outline" x="{label_w:.1f}" y="{y:.1f}" width="{plot_w:.0f}" '
                f'height="{bar_h:.0f}"/>'
            )
        unscored = sum(n for s, n in counts if s in UNSCORED_ORDER)
        scored = sum(n for s, n in counts if s in VERDICT_ORDER)
        share = f" ({unscored / total:.1%})" if total > 0 and unscored else ""
        cls = "value warn-text" if unscored else "value"
        parts.append(
            f'<text class="{cls}" x="{label_w + plot_w + 12:.1f}" y="{cy:.1f}" dy="0.35em">'
            f"{_e(f'{scored:,} scored · {unscored:,} unscored{share}')}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _outcome_legend() -> str:
    def item(status: str) -> str:
        cls = "swatch hatched" if status in UNSCORED_ORDER else "swatch"
        return (
            f'<span class="legend-item"><span class="{cls}" '
            f'style="background-color:{OUTCOME_COLOURS[status]}"></span>{_e(_label(status))}'
            "</span>"
        )

    return (
        '<div class="legend"><span class="legend-group">scored:</span>'
        + "".join(item(s) for s in VERDICT_ORDER)
        + '<span class="legend-group">unscored (hatched):</span>'
        + "".join(item(s) for s in UNSCORED_ORDER)
        + "</div>"
    )


def _estimate(v: _Verifier, metric: str) -> str:
    """A table cell: the estimate in bold, its CI on a second line."""
    ci = _ci(v.get(f"{metric}_lo"), v.get(f"{metric}_hi"))
    return (
        f"<td class=num><span class=strong>{_f3(v.get(metric))}</span>"
        f'<div class="sub muted">{ci}</div></td>'
    )


def _fact_table(verifiers: Sequence[_Verifier], scores: Mapping[str, Any]) -> str:
    penalized = any(_num(v.get("macro_length_penalized")) is not None for v in verifiers)
    conf = _num(scores.get("confidence"))
    level = "95%" if conf is None else f"{conf:.0%}"
    head = (
        "<tr><th>verifier</th><th>model</th><th>prompt</th>"
        "<th class=num>responses</th><th class=num title='responses with no claim'>"
        "<span class=nowrap>0-claim</span> rate</th><th class=num>claims</th>"
        "<th class=num>scored</th>"
        "<th class=num>unscored</th>"
        f"<th class=num title='{_e(MACRO_LEGEND)}'>macro<br>[{_e(level)} CI]</th>"
        f"<th class=num title='{_e(MICRO_LEGEND)}'>micro<br>[{_e(level)} CI]</th>"
        + (f"<th class=num>macro, length-penalized<br>[{_e(level)} CI]</th>" if penalized else "")
        + "</tr>"
    )
    rows = []
    for v in verifiers:
        model = (
            f"<code>{_wrap(v.model)}</code>"
            if v.model
            else f'<span class="muted nowrap">{_e(v.kind or _DASH)}</span>'
        )
        if v.prompt:
            prompt = f"<code>{_wrap(v.prompt)}</code>"
            if v.prompt_sha:
                prompt += (
                    f' <span class="muted mono" title="sha256 {_e(v.prompt_sha)}">'
                    f"{_e(_short(v.prompt_sha, 8))}</span>"
                )
        else:
            prompt = f'<span class="muted">{_DASH}</span>'
        resp_tip = (
            f"with a score {_count(v.get('n_responses_scored'))} · zero-claim "
            f"{_count(v.get('n_zero_claim'))} · claims but none scored "
            f"{_count(v.get('n_responses_unscored'))} · undecomposed "
            f"{_count(v.get('n_responses_undecomposed'))}"
        )
        zero_tip = f"{_count(v.get('n_zero_claim'))} of {_count(v.get('n_responses'))} responses"
        verdicts = " · ".join(f"{_label(s)} {v.count(s):,}" for s in VERDICT_ORDER)
        unscored = _int(v.get("n_unscored"))
        unscored_html = _count(unscored) + "".join(
            f'<div class="sub">{_e(_label(s))} {v.count(s):,}</div>'
            for s in UNSCORED_ORDER
            if v.count(s)
        )
        cells = [
            f"<td class=judge>{_wrap(v.id)}</td><td>{model}</td><td>{prompt}</td>",
            f"<td class=num title='{_e(resp_tip)}'>{_count(v.get('n_responses'))}</td>",
            f"<td class=num title='{_e(zero_tip)}'>{_pct(v.get('zero_claim_rate'))}</td>",
            f"<td class=num>{_count(v.get('n_claims'))}</td>",
            f"<td class=num title='{_e(verdicts)}'>{_count(v.get('n_scored'))}</td>",
            f"<td class='{'num warn' if unscored else 'num'}'>{unscored_html}</td>",
            _estimate(v, "macro"),
            _estimate(v, "micro"),
        ]
        if penalized:
            cells.append(_estimate(v, "macro_length_penalized"))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    boot = f"{level} bootstrap over responses ({_count(scores.get('n_boot'))} resamples)"
    pen = ""
    if penalized:
        pen = (
            f" Length-penalized macro: FActScore-style penalty (γ = "
            f"{_e(_plain(scores.get('gamma')))}) for responses with few claims."
        )
    return (
        '<div class="scroll"><table class="fact-summary"><thead>'
        + head
        + "</thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + f'<p class="caption">F(r) = supported / scored claims of response r. <b>macro</b>: '
        "mean of F(r) over responses with at least one scored claim; <b>micro</b>: supported"
        f" / scored over all claims pooled. CIs: {_e(boot)}. 0-claim rate: share of "
        f"responses with no claim at all. {_e(_UNSCORED_NOTE)}{pen}</p>"
    )


def _fact_overview(fact_manifest: Mapping[str, Any], fact_metrics: Mapping[str, Any] | None) -> str:
    """One line: what was decomposed into how many claims, checked by how many verifiers."""
    bits: list[str] = []
    dec = _dict(fact_manifest.get("decomposer"))
    if dec:
        stats = _dict(dec.get("stats"))
        text = f"Decomposer <code>{_e(dec.get('id') or dec.get('kind'))}</code>"
        if stats:
            text += (
                f": {_count(stats.get('recorded'))} sentences → "
                f"{_count(stats.get('claims'))} claims"
            )
            by_status = _dict(stats.get("by_status"))
            failed = sum(_int(n) or 0 for s, n in by_status.items() if s != "ok")
            if failed:
                text += f' (<span class="warn-text">{failed:,} sentences failed</span>)'
        bits.append(text)
    n_verifiers = len(_list(fact_manifest.get("verifiers")))
    planned = fact_manifest.get("planned_verifications")
    recorded = fact_manifest.get("recorded_verifications")
    if n_verifiers or recorded is not None:
        text = f"{n_verifiers} verifier{'s' if n_verifiers != 1 else ''}"
        if recorded is not None or planned is not None:
            text += f", {_count(recorded)} / {_count(planned)} verifications recorded"
        bits.append(text)
    scores = _dict(_dict(fact_metrics).get("scores"))
    pen = scores.get("length_penalty") or fact_manifest.get("length_penalty")
    if pen:
        bits.append(f"length penalty <code>{_e(pen)}</code> (γ {_e(_plain(scores.get('gamma')))})")
    return f'<p class="lead">{" · ".join(bits)}.</p>' if bits else ""


def _gold_section(gold: Mapping[str, Any], order: Sequence[str]) -> str:
    rows_by_id = {str(_dict(r).get("verifier_id")): _dict(r) for r in _list(gold.get("rows"))}
    ids = [i for i in order if i in rows_by_id] + [i for i in rows_by_id if i not in order]
    if not ids:
        return ""
    head = (
        "<tr><th>verifier</th><th class=num>accuracy</th><th class=num>balanced accuracy</th>"
        "<th class=num>precision</th><th class=num>recall</th><th class=num>F1</th>"
        "<th class=num>n</th><th class=num>excluded unscored</th><th class=num>gold claims</th>"
        "</tr>"
    )
    rows = []
    for vid in ids:
        r = rows_by_id[vid]
        excluded = _int(r.get("n_excluded_unscored"))
        rows.append(
            f"<tr><td class=judge>{_wrap(vid)}</td>"
            f"<td class=num>{_f3(r.get('accuracy'))}</td>"
            f"<td class='num strong'>{_f3(r.get('balanced_accuracy'))}</td>"
            f"<td class=num>{_f3(r.get('precision'))}</td>"
            f"<td class=num>{_f3(r.get('recall'))}</td>"
            f"<td class='num strong'>{_f3(r.get('f1'))}</td>"
            f"<td class=num>{_count(r.get('n'))}</td>"
            f"<td class='{'num warn' if excluded else 'num'}'>{_count(excluded)}</td>"
            f"<td class=num>{_count(r.get('n_gold'))}</td></tr>"
        )
    positive = ", ".join(str(p) for p in _list(gold.get("positive"))) or "supported"
    policy = str(gold.get("unscored") or "exclude")
    policy_text = (
        "unscored gold claims are left out of the metrics and counted under "
        "<i>excluded unscored</i>"
        if policy == "exclude"
        else "unscored gold claims count as errors (predicted the opposite of their gold class)"
    )
    cards = "".join(_confusion_card(vid, rows_by_id[vid]) for vid in ids)
    return (
        '<h3>Verdicts against gold claim labels</h3><div class="scroll">'
        '<table class="gold"><thead>'
        + head
        + "</thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + '<p class="caption">Precision, recall and F1 are for the class <b>supported</b> '
        f"(gold labels counted as supported: {_e(positive)}; a prediction is supported iff the "
        f"verdict is <code>supported</code>). Balanced accuracy: mean of recall on each gold "
        f"class. Unscored policy <code>{_e(policy)}</code>: {policy_text}.</p>"
        + f'<div class="cards">{cards}</div>'
    )


def _confusion_card(vid: str, row: Mapping[str, Any]) -> str:
    confusion = _dict(row.get("confusion"))
    gold_keys = ["supported", "not_supported"]
    gold_keys += [g for g in confusion if g not in gold_keys]
    pred_keys = ["supported", "not_supported"]
    for g in confusion.values():
        pred_keys += [p for p in _dict(g) if p not in pred_keys]
    cells = {
        (g, p): _int(_dict(confusion.get(g)).get(p)) or 0 for g in gold_keys for p in pred_keys
    }
    peak = max(cells.values(), default=0) or 1
    head = "".join(f"<th class=num>{_e(_label(p))}</th>" for p in pred_keys)
    body = []
    for g in gold_keys:
        tds = []
        for p in pred_keys:
            n = cells[(g, p)]
            alpha = 0.08 + 0.5 * n / peak if n else 0.0
            hue = "22,163,74" if g == p else "220,38,38"
            style = f' style="background:rgba({hue},{alpha:.2f})"' if n else ""
            cls = "num strong" if g == p else "num"
            tds.append(f"<td class='{cls}'{style}>{n:,}</td>")
        body.append(f"<tr><th>{_e(_label(g))}</th>{''.join(tds)}</tr>")
    table = (
        '<table class="confusion"><thead><tr><th class="corner">gold ↓ · predicted →</th>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )
    extra = _label_confusion(row)
    return (
        f'<figure class="card"><figcaption class="card-title">{_wrap(vid)}</figcaption>'
        f"{table}{extra}</figure>"
    )


def _label_confusion(row: Mapping[str, Any]) -> str:
    """The raw gold-label × verdict/status table, when it says more than the 2×2 does."""
    raw = _dict(row.get("label_confusion"))
    cols: list[str] = []
    for counts in raw.values():
        cols += [c for c in _dict(counts) if c not in cols]
    plain = {"supported", "unsupported", "not_supported"}
    if not raw or (set(raw) <= plain and set(cols) <= plain):
        return ""
    head = "".join(f"<th class=num>{_e(_label(c))}</th>" for c in cols)
    body = "".join(
        f"<tr><th>{_e(_label(g))}</th>"
        + "".join(
            f"<td class='{'num warn' if c in UNSCORED_ORDER and n else 'num'}'>{_count(n)}</td>"
            for c in cols
            for n in [_int(_dict(counts).get(c)) or 0]
        )
        + "</tr>"
        for g, counts in raw.items()
    )
    return (
        '<table class="confusion raw"><thead><tr><th class="corner">gold label ↓ · verdict / '
        f"status →</th>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _correlation_section(corr: Mapping[str, Any], order: Sequence[str]) -> str:
    rows_by_id = {str(_dict(r).get("verifier_id")): _dict(r) for r in _list(corr.get("rows"))}
    ids = [i for i in order if i in rows_by_id] + [i for i in rows_by_id if i not in order]
    if not ids:
        return ""
    rows = []
    for vid in ids:
        r = rows_by_id[vid]
        degenerate = _int(r.get("n_boot_degenerate"))
        rows.append(
            f"<tr><td class=judge>{_wrap(vid)}</td>"
            f"<td class='num strong'>{_f3(r.get('spearman'))}</td>"
            f"<td class=num>{_ci(r.get('spearman_lo'), r.get('spearman_hi'))}</td>"
            f"<td class=num>{_count(r.get('n'))}</td>"
            f"<td class=num>{_count(r.get('n_predicted'))}</td>"
            f"<td class=num>{_count(r.get('n_gold'))}</td>"
            f"<td class='{'num warn' if degenerate else 'num'}'>{_count(degenerate)}</td></tr>"
        )
    conf = _num(corr.get("confidence"))
    level = "95%" if conf is None else f"{conf:.0%}"
    predicted = str(corr.get("predicted") or "factuality").replace("_", " ")
    source = corr.get("gold_source")
    source_text = {
        "given": "given with the dataset",
        "claims": "computed from gold claim labels",
    }.get(str(source), str(source or _DASH))
    return (
        "<h3>Correlation with gold factuality</h3>"
        '<div class="scroll"><table class="correlation"><thead><tr><th>verifier</th>'
        f"<th class=num>Spearman ρ</th><th class=num>{_e(level)} CI</th><th class=num>n</th>"
        "<th class=num>responses predicted</th><th class=num>responses with gold</th>"
        "<th class=num>degenerate resamples</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
        + '<p class="caption">Spearman rank correlation, per response, between the '
        f"verifier's {_e(predicted)} and the gold factuality ({_e(source_text)}); n counts "
        f"responses where both are defined. CI: {_e(level)} bootstrap "
        f"({_count(corr.get('n_boot'))} resamples); degenerate resamples (a constant side) "
        "are left out.</p>"
    )


def _factuality_section(
    fact_manifest: Mapping[str, Any], fact_metrics: Mapping[str, Any] | None
) -> str:
    scores = _dict(_dict(fact_metrics).get("scores"))
    verifiers = _verifiers(fact_manifest, scores)
    out = [
        '<section id="factuality"><h2>Factuality</h2>',
        _fact_overview(fact_manifest, fact_metrics),
    ]
    scored = [v for v in verifiers if v.row]
    if not scored:
        out.append(
            '<p class="muted">No factuality metrics yet: the run recorded no verifications.</p>'
        )
        out.append("</section>")
        return "".join(out)
    out.append("<h3>Scores per verifier</h3>")
    out.append(_fact_table(scored, scores))
    out.append(
        f"<figure>{_fact_dot_chart(scored)}<figcaption><b>{_e(MACRO_LEGEND)}; "
        f"{_e(MICRO_LEGEND)}.</b> Dot / diamond: estimate; whisker: 95% bootstrap CI."
        "</figcaption></figure>"
    )
    out.append(
        f"<figure>{_outcome_bars(scored)}{_outcome_legend()}<figcaption><b>Claim outcomes "
        "per verifier.</b> Each bar is the verifier's claims: verdicts first, then unscored "
        f"claims, hatched. {_e(_UNSCORED_NOTE)} Hover a segment for its count.</figcaption>"
        "</figure>"
    )
    order = [v.id for v in verifiers]
    gold = _dict(_dict(fact_metrics).get("gold"))
    if gold:
        out.append(_gold_section(gold, order))
    corr = _dict(_dict(fact_metrics).get("correlation"))
    if corr:
        out.append(_correlation_section(corr, order))
    out.append("</section>")
    return "".join(out)


_FACT_HANDLED = frozenset(
    {
        "id",
        "kind",
        "name",
        "client",
        "model",
        "prompt",
        "decoding",
        "output_cap_tokens",
        "parser",
        "parser_version",
        "threshold",
        "retriever",
        "top_k",
        "stats",
    }
)


def _retriever_html(retriever: Mapping[str, Any], top_k: object) -> str:
    """Kind, corpus and the scalar parameters of a retriever (components for a hybrid)."""
    if not retriever:
        return f'<span class="muted">{_DASH}</span>'
    out = [
        f"<div><code>{_e(retriever.get('kind') or 'retriever')}</code>"
        + (f" · {_e(retriever.get('method'))}" if retriever.get("method") else "")
        + (f" · top {_e(top_k)}" if top_k is not None else "")
        + "</div>"
    ]
    corpus = _dict(retriever.get("corpus"))
    if corpus:
        out.append(
            f'<div class="mono">{_wrap(corpus.get("path"))}</div>'
            f'<div class="muted mono">{_count(corpus.get("size"))} passages · sha256 '
            f"{_e(_short(corpus.get('sha256')))}</div>"
        )
    scalars = {
        k: v
        for k, v in retriever.items()
        if k not in ("kind", "method", "corpus", "components", "formula", "idf")
        and not isinstance(v, Mapping | list)
    }
    tokenizer = _dict(retriever.get("tokenizer"))
    if tokenizer.get("name"):
        scalars["tokenizer"] = f"{tokenizer['name']}/{tokenizer.get('version') or '?'}"
    if scalars:
        out.append(f'<div class="muted mono">{_kv(scalars)}</div>')
    for name, comp in _dict(retriever.get("components")).items():
        comp = _dict(comp)
        embedder = _dict(comp.get("embedder"))
        what = embedder.get("model_dir") or comp.get("kind")
        out.append(f'<div class="muted">{_e(name)}: <span class="mono">{_wrap(what)}</span></div>')
        if not corpus and _dict(comp.get("corpus")):
            corpus = _dict(comp.get("corpus"))
            out.append(
                f'<div class="mono">{_wrap(corpus.get("path"))}</div>'
                f'<div class="muted mono">{_count(corpus.get("size"))} passages · sha256 '
                f"{_e(_short(corpus.get('sha256')))}</div>"
            )
    return "".join(out)


def _stage_repro_row(role: str, info: Mapping[str, Any]) -> str:
    kind = info.get("kind")
    client = _dict(info.get("client"))
    model = _model_of(info)
    what = [f"<div>{_e(kind or _DASH)}" + (f" · <code>{_e(model)}</code>" if model else "")]
    what.append("</div>")
    if client:
        what.append(
            f'<div class="mono">{_e(client.get("provider") or client.get("kind"))} · '
            f"{_e(client.get('api_base') or 'provider default')}</div>"
        )
    decoding = _dict(info.get("decoding"))
    if decoding:
        what.append(f'<div class="muted mono">{_kv(decoding)}</div>')
    params = {k: v for k, v in info.items() if k not in _FACT_HANDLED}
    if params:
        what.append(f'<div class="muted mono">{_kv(params)}</div>')
    stats = _dict(info.get("stats"))
    if stats:
        bits = [f"recorded {_count(stats.get('recorded'))}"]
        if stats.get("planned") is not None:
            bits[0] += f" / {_count(stats.get('planned'))}"
        if _int(stats.get("requests_sent")):
            bits.append(f"requests {_count(stats.get('requests_sent'))}")
            bits.append(f"cache hits {_count(stats.get('cache_hits'))}")
            bits.append(f"retries {_count(stats.get('retries'))}")
        cost = _num(stats.get("cost_usd"))
        if cost is not None:
            bits.append(f"${cost:,.4f}")
        what.append(f'<div class="muted">{" · ".join(bits)}</div>')
    prompt = _dict(info.get("prompt"))
    if prompt:
        prompt_html = (
            f"<div><code>{_e(prompt.get('id'))}@{_e(prompt.get('version'))}</code>"
            + (" (built-in)" if prompt.get("builtin") else "")
            + f"</div><div class=mono>{_wrap(prompt.get('file'))}</div>"
            f'<div class="muted mono">sha256 {_e(prompt.get("sha256"))}</div>'
        )
    else:
        prompt_html = f'<span class="muted">{_DASH}</span>'
    parser_bits = []
    if info.get("parser"):
        parser_bits.append(f"<div><code>{_e(info.get('parser'))}</code></div>")
    if info.get("parser_version"):
        parser_bits.append(f'<div class="mono">{_e(info.get("parser_version"))}</div>')
    if info.get("threshold") is not None:
        parser_bits.append(f"<div>threshold {_e(info.get('threshold'))}</div>")
    parser_html = "".join(parser_bits) or f'<span class="muted">{_DASH}</span>'
    retriever = _dict(info.get("retriever"))
    retriever_html = (
        _retriever_html(retriever, info.get("top_k"))
        if retriever
        else f'<span class="muted">{_DASH}</span>'
    )
    return (
        f'<tr><td class=judge><div class="muted role">{_e(role)}</div>'
        f"{_wrap(info.get('id') or kind)}</td><td>{''.join(what)}</td><td>{prompt_html}</td>"
        f"<td>{parser_html}</td><td>{retriever_html}</td></tr>"
    )


def _fact_repro(fact_manifest: Mapping[str, Any]) -> str:
    rows = []
    dec = _dict(fact_manifest.get("decomposer"))
    if dec:
        rows.append(_stage_repro_row("decomposer", dec))
    for v in _list(fact_manifest.get("verifiers")):
        rows.append(_stage_repro_row("verifier", _dict(v)))
    if not rows:
        return ""
    return (
        '<h3>Factuality pipeline</h3><div class="scroll"><table class="repro-judges">'
        '<colgroup><col style="width:16%"><col style="width:29%"><col style="width:23%">'
        '<col style="width:14%"><col style="width:18%"></colgroup>'
        "<thead><tr><th>stage</th><th>kind / model / parameters</th><th>prompt</th>"
        "<th>parser · threshold</th><th>retriever</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


_CSS = """
:root{color-scheme:light;--fg:#1e293b;--muted:#64748b;--line:#e2e8f0;--panel:#f8fafc;
--accent:#1d4ed8;--ok:#166534;--okbg:#dcfce7;--warn:#92400e;--warnbg:#fef3c7;--bad:#991b1b;
--badbg:#fee2e2}
*{box-sizing:border-box}
html{background:#fff}
body{margin:0;color:var(--fg);background:#fff;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1160px;margin:0 auto;padding:28px 32px 48px}
h1{font-size:26px;margin:2px 0 4px;line-height:1.2}
h2{font-size:18px;margin:34px 0 12px;padding-bottom:5px;border-bottom:2px solid var(--line)}
.kicker{margin:0;color:var(--muted);font-size:12px;letter-spacing:.06em;text-transform:uppercase}
.muted{color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;
font-size:12.5px}
.mono{overflow-wrap:break-word}
.kvi,.nowrap{white-space:nowrap}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;
vertical-align:middle;border:1px solid currentColor}
.badge.ok{color:var(--ok);background:var(--okbg)}
.badge.warn{color:var(--warn);background:var(--warnbg)}
.badge.bad{color:var(--bad);background:var(--badbg)}
.note{padding:8px 12px;border-radius:6px;margin:8px 0}
.note.warn{background:var(--warnbg);color:var(--warn)}
.note.bad{background:var(--badbg);color:var(--bad)}
dl.meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:10px 28px;
margin:16px 0 0;padding:14px 18px;background:var(--panel);border:1px solid var(--line);
border-radius:8px}
dl.meta dt{font-size:11.5px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
dl.meta dd{margin:1px 0 0;overflow-wrap:break-word}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 9px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{font-size:12px;font-weight:600;color:var(--muted);background:var(--panel);
border-bottom:1px solid #cbd5e1;white-space:nowrap}
tbody tr:nth-child(even){background:#fbfcfe}
td.num,th.num{text-align:right;white-space:nowrap}
td.judge{font-weight:600;overflow-wrap:break-word;min-width:11em}
table.statuses thead th{white-space:normal;vertical-align:bottom}
table.statuses th,table.statuses td{padding:6px 7px}
table.statuses td.judge{min-width:17.5em}
td.strong{font-weight:700}
td.warn{background:var(--warnbg);color:var(--warn);font-weight:600}
.caption,figcaption{color:var(--muted);font-size:12.5px;margin:6px 0 0}
figcaption b{color:var(--fg);font-weight:600}
figure{margin:10px 0 26px}
svg.chart{display:block;max-width:100%;height:auto}
svg.chart text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;
font-size:12px;fill:var(--fg)}
svg.chart .tick{fill:var(--muted);font-size:11px}
svg.chart .axis-title{fill:var(--muted);font-size:12px}
svg.chart .block-title{font-weight:600;font-size:12px}
svg.chart .value{font-variant-numeric:tabular-nums}
svg.chart .band{fill:#f5f7fa}
svg.chart .grid{stroke:#e2e8f0;stroke-width:1}
svg.chart .zero{stroke:#94a3b8;stroke-width:1.2}
svg.chart .axis{stroke:#94a3b8;stroke-width:1}
svg.chart .whisker{stroke:#475569;stroke-width:1.6}
svg.chart .dot{fill:var(--accent);stroke:#fff;stroke-width:1.5}
svg.chart .cell{stroke:#fff;stroke-width:1}
svg.chart .dot2{fill:#ea580c;stroke:#fff;stroke-width:1.5}
svg.chart .seg{fill:#fff;font-size:11px;font-weight:600;font-variant-numeric:tabular-nums}
svg.chart .outline{fill:none;stroke:#64748b;stroke-width:1}
svg.chart .empty{fill:#f1f5f9;stroke:#cbd5e1;stroke-dasharray:4 3}
svg.chart .warn-text{fill:var(--warn);font-weight:600}
.warn-text{color:var(--warn);font-weight:600}
h3{font-size:15px;margin:26px 0 8px}
p.lead{margin:0 0 6px}
td .sub{font-size:11.5px;font-weight:400;white-space:nowrap}
table.fact-summary thead th{white-space:normal;vertical-align:bottom}
table.fact-summary th,table.fact-summary td{padding:6px 7px}
table.fact-summary code{font-size:12px}
span.strong{font-weight:700}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;align-items:center;font-size:12.5px;
margin:4px 0 0}
.legend-group{color:var(--muted);font-weight:600}
.legend-item{display:inline-flex;align-items:center;gap:5px;white-space:nowrap}
.swatch{display:inline-block;width:14px;height:11px;border-radius:2px}
.swatch.hatched{background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.45) 0 2px,
transparent 2px 5px)}
.cards{display:flex;flex-wrap:wrap;gap:14px;margin:12px 0 22px}
figure.card{margin:0;padding:10px 12px;border:1px solid var(--line);border-radius:8px;
background:#fff}
.card-title{color:var(--fg);font-weight:600;font-size:13px;margin:0 0 6px}
table.confusion{width:auto;font-size:13px}
table.confusion th,table.confusion td{padding:4px 10px}
table.confusion tbody th{font-weight:600;white-space:nowrap}
table.confusion th.corner{font-weight:400}
table.confusion.raw{margin-top:10px}
table.confusion tbody tr:nth-child(even){background:transparent}
.role{font-size:11px;text-transform:uppercase;letter-spacing:.04em;font-weight:600}
svg.chart .cell-text{font-variant-numeric:tabular-nums;fill:#111827}
section.repro{background:var(--panel);border:1px solid var(--line);border-radius:8px;
padding:2px 18px 16px;margin-top:34px}
section.repro h2{margin-top:16px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:5px 18px;margin:0 0 14px}
dl.kv dt{color:var(--muted);font-weight:600}
dl.kv dd{margin:0;overflow-wrap:anywhere}
table.repro-judges{table-layout:fixed}
table.repro-judges td{font-size:13px}
table.repro-judges tbody tr:nth-child(even){background:transparent}
footer{margin-top:28px;color:var(--muted);font-size:12px}
@page{margin:14mm}
@media print{
main{max-width:none;padding:0}
body{font-size:11.5px}
h2{break-after:avoid}
figure,tr,dl.meta,section.repro,.cards{break-inside:avoid}
.scroll{overflow:visible}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"""


def _forcebench_frame(part: object) -> pd.DataFrame:
    """The ForceRow rows of ``metrics.json["forcebench"]`` (a ForceReport dump or its rows)."""
    if isinstance(part, pd.DataFrame):
        return part
    if isinstance(part, Mapping):
        part = part.get("rows")
    rows = [r for r in part if isinstance(r, Mapping)] if isinstance(part, list) else []
    return pd.DataFrame(rows)


def render_html_report(
    manifest: Mapping[str, Any],
    metrics: Mapping[str, Any] | pd.DataFrame,
    records: pd.DataFrame | None = None,
) -> str:
    """One self-contained HTML page for a run: header, tables, inline SVG charts.

    ``manifest`` is the run's ``manifest.json``; ``metrics`` its ``metrics.json`` as a dict
    (``{"forcebench": ForceReport dump | None, "factuality": {...} | None}``) — or, as
    before, a DataFrame of ForceBench rows (ForceRow columns). Each part renders only when
    the run has it. ``records``, when given, are the judgments (at least ``judge_id`` and
    ``status``) and then supply the status counts instead of the manifest's stats — use it
    for runs whose manifest may lag behind ``judgments.jsonl``.
    """
    fact_manifest = _dict(manifest.get("factuality"))
    by_id = {str(_dict(j).get("id")): _dict(j) for j in _list(manifest.get("judges"))}
    fact_metrics: dict[str, Any] | None
    by_dataset = ""
    if isinstance(metrics, pd.DataFrame):
        frame, fact_metrics = metrics, None
    else:
        by_dataset = dataset_section(metrics)  # every row; the rest of the page is pooled
        metrics = pooled_metrics(metrics)
        frame = _forcebench_frame(metrics.get("forcebench"))
        fact_metrics = _dict(metrics.get("factuality")) or None
    has_fact = bool(fact_manifest or fact_metrics)
    has_force = (
        isinstance(metrics, pd.DataFrame)
        or not frame.empty
        or bool(by_id)
        or bool(_int(manifest.get("planned_judgments")))
        or not has_fact
    )
    judges = _judges(frame, by_id) if has_force else []
    order = [j.id for j in judges] + [jid for jid in by_id if jid not in {j.id for j in judges}]
    body = [_header(manifest, forcebench=has_force, factuality=has_fact)]
    if has_force:
        heading = "ForceBench summary" if has_fact else "Summary"
        body.append(f'<section id="summary"><h2>{heading}</h2>')
        if judges:
            body.append(_summary_table(judges))
        else:
            body.append('<p class="muted">No metrics yet: the run recorded no complete pairs.</p>')
        body.append("</section>")
        if judges:
            body.append(_charts(judges, frame))
        if order:
            body.append(_status_table(order, by_id, _status_counts(records)))
    if has_fact:
        body.append(_factuality_section(fact_manifest, fact_metrics))
    body.append(by_dataset)
    body.append(_repro(manifest, order, forcebench=has_force))
    body.append(
        f"<footer>Generated by assay {_e(__version__)} from <code>manifest.json</code> and "
        "<code>metrics.json</code>. Self-contained: no scripts, no external resources."
        "</footer>"
    )
    title = f"{manifest.get('name') or 'run'} · assay report"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )
