"""Labels as every part of assay compares them: case and separators only
('Fully Supported' -> 'fully_supported'). One light home (no pandas, no schemas), so the
parser, the metrics, juries and the viewer's cold start all use the same rule."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[\s-]+")


def normalise_label(label: str) -> str:
    """Case and separator normalisation only: 'Fully Supported' -> 'fully_supported'."""
    return _SEPARATORS.sub("_", label.strip().lower())


def comparable_label(label: str | None) -> str | None:
    """A judge's, gold or rater's label as compared: `normalise_label`, None kept."""
    return None if label is None else normalise_label(label)


__all__ = ["comparable_label", "normalise_label"]
