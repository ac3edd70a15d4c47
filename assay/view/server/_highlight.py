"""Evidence text with its supporting spans marked: `<mark>` built from character offsets.

The text is escaped piece by piece and only the `<mark>` tags are markup, so a passage
holding `<script>` is shown as text. Offsets outside the text are clipped; overlapping
spans are merged (one mark, the labels of all).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from markupsafe import Markup, escape


class Span(Protocol):
    start: int
    end: int
    label: str | None


def _merged(spans: Iterable[Span], length: int) -> list[tuple[int, int, list[str]]]:
    out: list[tuple[int, int, list[str]]] = []
    for s in sorted(spans, key=lambda s: (s.start, s.end)):
        start, end = max(0, s.start), min(length, s.end)
        if end <= start:
            continue
        labels = [s.label] if s.label else []
        if out and start <= out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], end), last[2] + labels)
        else:
            out.append((start, end, labels))
    return out


def highlight(text: str | None, spans: Iterable[Span]) -> Markup:
    """`text` escaped, each (merged) span wrapped in `<mark class="span">`."""
    if not text:
        return Markup("")
    parts: list[str] = []
    at = 0
    for start, end, labels in _merged(spans, len(text)):
        title = f' title="{escape(", ".join(labels))}"' if labels else ""
        parts.append(str(escape(text[at:start])))
        parts.append(f'<mark class="span"{title}>{escape(text[start:end])}</mark>')
        at = end
    parts.append(str(escape(text[at:])))
    return Markup("".join(parts))
