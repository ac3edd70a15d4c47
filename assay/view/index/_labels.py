"""Labels as the agreement metrics compare them, without importing the metrics.

`assay.metrics._item_metrics.comparable_label` is `assay.parsing.normalise_label` with
None kept; importing either loads pandas and the prompt schemas (about 2 s), which the
viewer's cold start (first page in a second) cannot pay. This is the same rule, and
tests/test_view_index.py checks it gives the metrics' answer on awkward labels."""

from __future__ import annotations

import re

__all__ = ["comparable_label"]

_SEPARATORS = re.compile(r"[\s-]+")


def comparable_label(label: str | None) -> str | None:
    """'Fully Supported' -> 'fully_supported' (case and separators only); None kept."""
    return None if label is None else _SEPARATORS.sub("_", label.strip().lower())
