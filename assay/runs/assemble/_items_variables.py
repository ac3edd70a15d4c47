"""Every item has what each judge reads, checked before any judgment is asked for.

A prompt needs its declared variables; a judge without a prompt reads `claim` and
`evidence`. A variable that no column provides is a mapping to add; a variable whose
column is empty in some row is that row's problem, and the error says so: the line and
the column (the mapped one, not the variable's name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.datasets import ItemsDataset
from assay.errors import DatasetError

PROMPTLESS_VARIABLES = ("claim", "evidence")


def needed_variables(judge: Any) -> Sequence[str]:
    """What `judge` reads from an item: its prompt's variables, else claim and evidence."""
    prompt = getattr(judge, "prompt", None)
    if prompt is None:
        return PROMPTLESS_VARIABLES
    return [v for v in prompt.meta.variables if v not in ("response_a", "response_b")]


def check_item_variables(dataset: ItemsDataset, judge_id: str, needed: Sequence[str]) -> None:
    """Each item has a value for every variable in `needed` (text where the judge has no
    prompt); the first gap is one error naming the line and the column."""
    text_only = tuple(needed) == PROMPTLESS_VARIABLES
    for variable in needed:
        column = dataset.variable_columns.get(variable, variable)
        for item in dataset.items:
            if variable not in item.variables:
                raise DatasetError(
                    f"judge {judge_id!r} needs variable {variable!r}, and no column "
                    f'provides it: map one with variables = {{ {variable} = "..." }}',
                    file=dataset.path,
                    line=item.line,
                    field=variable,
                )
            value = item.variables[variable]
            if value is None:
                raise DatasetError(
                    f"column {column!r} (variable {variable!r}) is empty in this row; "
                    f"judge {judge_id!r} needs it: fill the cell or drop the row",
                    file=dataset.path,
                    line=item.line,
                    field=column,
                )
            if text_only and not isinstance(value, str):
                raise DatasetError(
                    f"column {column!r} (variable {variable!r}) must be text for judge "
                    f"{judge_id!r}, got {type(value).__name__}",
                    file=dataset.path,
                    line=item.line,
                    field=column,
                )
