"""How a page writes a value: numbers, CIs, counts, times, ids and label widths.

Each helper is also a Jinja filter (`FILTERS`, used by the HTML report's templates and
by `assay view`'s), so a number reads the same in a table cell, a tooltip, a chart label
and the viewer. Helpers accept anything a JSON file may hold: a missing or non-numeric
value becomes "—", never an exception. It lives outside `assay.report` so the viewer
can format numbers without loading the report package (pandas, the comparison code).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape

DASH = "—"


def as_float(value: object) -> float | None:
    """A finite float, or None for None/NaN/bool/non-numbers."""
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def as_int(value: object) -> int | None:
    number = as_float(value)
    return None if number is None else int(number)


def dict_of(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def list_of(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def f3(value: object) -> str:
    number = as_float(value)
    return DASH if number is None else f"{number:.3f}"


def ci(lo: object, hi: object) -> str:
    """`[0.100, 0.400]`, or "—" when either bound is undefined."""
    a, b = as_float(lo), as_float(hi)
    return DASH if a is None or b is None else f"[{a:.3f}, {b:.3f}]"


def count(value: object) -> str:
    number = as_int(value)
    return DASH if number is None else f"{number:,}"


def pct(value: object, digits: int = 1) -> str:
    number = as_float(value)
    return DASH if number is None else f"{number * 100:.{digits}f}%"


def money(value: object) -> str:
    number = as_float(value)
    return DASH if number is None else f"${number:,.4f}"


def short(sha: object, n: int = 12) -> str:
    return str(sha)[:n] if sha else DASH


def _parse_time(iso: object) -> datetime:
    return datetime.fromisoformat(str(iso).replace("Z", "+00:00"))


def when(iso: object) -> str:
    """`2024-05-01 12:00:00 UTC`; text that is not a timestamp is shown as written."""
    if not iso:
        return DASH
    try:
        ts = _parse_time(iso)
    except ValueError:
        return str(iso)
    offset = ts.utcoffset()
    suffix = "" if offset is None else " UTC" if not offset else ts.strftime(" %z")
    return ts.strftime("%Y-%m-%d %H:%M:%S") + suffix


def duration(start: object, end: object) -> str | None:
    try:
        seconds = (_parse_time(end) - _parse_time(start)).total_seconds()
    except (TypeError, ValueError):
        return None
    if seconds < 0:
        return None
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def plain(value: object) -> str:
    """A JSON value as short text: `{k: v}`, `[a, b]`, "—" for null."""
    if value is None:
        return DASH
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    return str(value)


def kv_items(value: object) -> list[str]:
    """`k=v` texts of a mapping (one item for anything else); the template joins them."""
    if isinstance(value, Mapping):
        return [f"{k}={plain(v)}" for k, v in value.items()]
    return [plain(value)]


def label(status: object) -> str:
    return str(status).replace("_", " ")


def prompt_ref(pid: object, version: object) -> str | None:
    if not pid:
        return None
    ver = as_int(version)
    return f"{pid}@{ver}" if ver is not None else str(pid)


def wrap(value: object) -> Markup:
    """Escaped text that may line-break after `/`, `:` and `@` (ids and paths)."""
    text = str(escape("" if value is None else str(value)))
    return Markup(re.sub(r"(::|[/:@])(?=.)", r"\1<wbr>", text))


def text_width(text: str, size: float = 12.0) -> float:
    """Rough rendered width of sans-serif text (errs wide, so labels are not clipped)."""
    narrow, wide = set("ijlrtf.,:;|!'()[] "), set("mwMW@%")
    em = 0.0
    for ch in text:
        em += 0.34 if ch in narrow else 0.92 if ch in wide else 0.7 if ch.isupper() else 0.6
    return em * size


def clip(text: str, limit: int = 44) -> str:
    """Middle-ellipsis long labels; the full text goes into a <title> tooltip."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep - keep // 2] + "…" + text[-(keep // 2) :]


def label_width(labels: Iterable[str]) -> float:
    widest = max((text_width(clip(s)) for s in labels), default=60.0)
    return min(max(widest + 18.0, 110.0), 340.0)


def ticks(lo: float, hi: float) -> list[float]:
    """Round tick values covering [lo, hi], at most about ten."""
    step = next((s for s in (0.05, 0.1, 0.2, 0.25, 0.5) if (hi - lo) / s <= 10), 1.0)
    out: list[float] = []
    k = math.ceil(lo / step - 1e-9)
    while k * step <= hi + 1e-9:
        out.append(round(k * step, 10))
        k += 1
    return out


def tick_label(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") if v not in (0.0, -0.0) else "0"


FILTERS = {
    "f3": f3,
    "ci": ci,
    "count": count,
    "pct": pct,
    "money": money,
    "short": short,
    "when": when,
    "plain": plain,
    "kv_items": kv_items,
    "label": label,
    "wrap": wrap,
    "clip": clip,
}
