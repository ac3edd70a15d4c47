"""Identifiers as data files write them: JSON ids may be numbers, assay keeps strings."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _int_to_str(value: object) -> object:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


ItemId = Annotated[str, BeforeValidator(_int_to_str)]
"""An item, pair, passage or claim id: `7` in a file is read as `"7"`."""
