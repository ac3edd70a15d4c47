"""How a metric value and its CI are written in every table: one place for the format."""

from __future__ import annotations

from typing import Any

from assay._values import DASH


def num(value: Any, fmt: str = ".3f") -> str:
    """A metric at the displayed precision, or "—" when it is undefined (null)."""
    if value is None or (isinstance(value, float) and value != value):
        return DASH
    text = format(value, fmt)
    if text.startswith("-") and not any(d in text for d in "123456789"):
        # a tiny negative rounds to "-0.000": no sign a reader would take for a direction
        return ("+" if fmt.startswith("+") else "") + text[1:]
    return text


def ci(lo: Any, hi: Any) -> str:
    """`0.033–0.183`, or "—" when the bootstrap was off or the interval is undefined."""
    if num(lo) == DASH or num(hi) == DASH:
        return DASH
    return f"{num(lo)}–{num(hi)}"


__all__ = ["DASH", "ci", "num"]
