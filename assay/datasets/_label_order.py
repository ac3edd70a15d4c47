"""An items dataset's `label_order`: its gold and rater labels are ordinal levels.

The levels are compared after the normalisation every label gets (`normalise_label`);
a gold or rater value outside them is an error naming the file, line and column, as a
label the judges cannot give is (the fix is the order, or the dataset's `gold_map`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationInfo

from assay.errors import DatasetError
from assay.parsing import normalise_label


def checked_order(order: list[str] | None, info: ValidationInfo) -> list[str] | None:
    """Two or more distinct levels, on a single-response dataset."""
    if order is None:
        return None
    if info.data.get("task") == "pairwise":
        raise ValueError("label_order is for single-response items, not pairwise")
    norms = [normalise_label(v) for v in order]
    if len(order) < 2 or not all(norms):
        raise ValueError(f"needs two or more non-empty labels, got {order}")
    if len(set(norms)) != len(norms):
        raise ValueError(f"a label is listed twice (after normalisation): {order}")
    return order


def check_levels(
    order: list[str] | None, cells: Iterable[tuple[str, str | None]], path: Path, line: int
) -> None:
    """Every (column, value) of a row (gold label, raters; after gold_map) is a level."""
    if order is None:
        return
    levels = {normalise_label(v) for v in order}
    for column, value in cells:
        if value is not None and normalise_label(value) not in levels:
            raise DatasetError(
                f"{value!r} is not in label_order {order} (add it, or map it with gold_map)",
                file=path,
                line=line,
                field=column,
            )
