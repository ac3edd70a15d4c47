"""Items datasets: any columns become template variables, with optional gold and raters.

A user's own labelled set (JSONL, CSV or Parquet) is read into `Item`s: an id, the
variables a prompt fills in, optional categorical and numeric gold, human raters' labels
and, for pairwise judging, the two responses and a gold preference. Errors name the
file, the line and the column, like those of ForceBench pairs.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay.datasets._jsonl import DatasetFile
from assay.datasets._label_order import check_levels, checked_order
from assay.datasets._load import resolve_dataset_path
from assay.datasets._rows import check_unique
from assay.datasets._tabular import Delimiter, file_delimiter, table_rows
from assay.errors import DatasetError
from assay.parsing import normalise_label

if TYPE_CHECKING:
    import pandas as pd

Preference = Literal["A", "B", "tie"]
_PREFERENCES: dict[str, Preference] = {"a": "A", "b": "B", "tie": "tie"}


class ItemsDatasetOptions(BaseModel):
    """A `[[datasets]] kind = "items"` block: the file and which column means what."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["items"] = Field(
        default="items", description="Items: any columns, optional gold and raters."
    )
    task: Literal["single", "pairwise"] = Field(
        default="single",
        description="single: one response judged per item; pairwise: response_a vs "
        "response_b, judged in both orders.",
    )
    path: str = Field(description="A .jsonl/.ndjson, .csv, .tsv or .parquet file.")
    delimiter: Delimiter | None = Field(
        default=None,
        description="CSV/TSV delimiter; default: tab for .tsv, else detected (`,` `;` tab `|`).",
    )
    name: str | None = Field(default=None, description="Defaults to the file's stem.")
    id_column: str = Field(
        default="id", min_length=1, description="Column of each item's unique id."
    )
    gold_label_column: str = Field(
        default="gold_label",
        min_length=1,
        description="Column of gold labels, if the file has one.",
    )
    gold_score_column: str = Field(
        default="gold_score",
        min_length=1,
        description="Column of gold scores, if the file has one.",
    )
    gold_preference_column: str = Field(
        default="gold_preference",
        min_length=1,
        description="Column of a pairwise item's gold preference (A, B or tie), if any.",
    )
    raters: list[str] = Field(default_factory=list, description="Human raters' columns.")
    split_column: str | None = Field(
        default=None,
        min_length=1,
        description="Column naming each item's split (e.g. dev / test): a jury's weights or "
        "a calibration are fitted on one split and reported on the others.",
    )
    variables: dict[str, str] = Field(
        default_factory=dict,
        description="Template variable -> column, e.g. {claim = 'response'}; "
        "`response_a`/`response_b` map a pairwise item's two responses.",
    )
    gold_map: dict[str, str] = Field(
        default_factory=dict,
        description="Gold or rater value -> the judges' label, e.g. { yes = 'supported' } "
        "(pairwise gold preferences: -> A, B or tie); "
        "values match after case/separator normalisation. It changes the numbers, so it "
        "is part of the spec the manifest records.",
    )
    label_order: list[str] | None = Field(
        default=None,
        description="The gold and rater labels in order, lowest first (after gold_map), "
        "e.g. ['unsupported', 'partially_supported', 'supported']: they are ordinal "
        "(weighted kappa, ordinal alpha, MAE in ranks). A value outside it is an error.",
    )
    _order_ok = field_validator("label_order")(checked_order)

    @field_validator("raters")
    @classmethod
    def _distinct_raters(cls, raters: list[str]) -> list[str]:
        if len(set(raters)) != len(raters):
            raise ValueError(f"raters are listed twice: {raters}")
        return raters

    @field_validator("gold_map")
    @classmethod
    def _distinct_gold_keys(cls, mapping: dict[str, str]) -> dict[str, str]:
        """Keys match normalised, so two keys that normalise alike would be ambiguous."""
        seen: dict[str, str] = {}
        for key, value in mapping.items():
            norm = normalise_label(key)
            if not norm or not value.strip():
                raise ValueError(f"empty key or value: {key!r} = {value!r}")
            if norm in seen:
                raise ValueError(f"keys {seen[norm]!r} and {key!r} name the same value")
            seen[norm] = key
        return mapping

    def mapped(self, label: str | None) -> str | None:
        """A gold or rater label after `gold_map` (unmapped labels as they are)."""
        if label is None or not self.gold_map:
            return label
        table = {normalise_label(k): v for k, v in self.gold_map.items()}
        return table.get(normalise_label(label), label)

    def gold_columns(self) -> dict[str, str]:
        """Item field -> column for the gold columns (never template variables)."""
        return {
            "gold_label": self.gold_label_column,
            "gold_score": self.gold_score_column,
            "gold_preference": self.gold_preference_column,
        }

    def reserved_columns(self) -> set[str]:
        """Columns that are not template variables: the id, gold, raters and the split."""
        split = [self.split_column] if self.split_column else []
        return {self.id_column, *self.gold_columns().values(), *self.raters, *split}


class Item(BaseModel):
    """One row: its id, the variables a prompt sees, and whatever gold it carries."""

    id: str
    line: int = Field(description="Line (Parquet: row) of the source file.")
    variables: dict[str, Any] = Field(default_factory=dict)
    gold_label: str | None = None
    gold_score: float | None = None
    gold_preference: Preference | None = None
    ratings: dict[str, str | None] = Field(default_factory=dict)
    split: str | None = Field(default=None, description="The item's split (`split_column`).")

    @property
    def response_a(self) -> Any:
        """The first response of a pairwise item (variable `response_a`), if any."""
        return self.variables.get("response_a")

    @property
    def response_b(self) -> Any:
        """The second response of a pairwise item (variable `response_b`), if any."""
        return self.variables.get("response_b")


class ItemsDataset(DatasetFile):
    """Items plus the identity of the file they came from and which gold it has."""

    items: list[Item]
    raters: list[str] = Field(default_factory=list)
    task: Literal["single", "pairwise"] = "single"
    variable_columns: dict[str, str] = Field(
        default_factory=dict,
        description="Template variable -> the column it was mapped from (`variables`).",
    )
    gold_columns: dict[str, str] = Field(
        default_factory=lambda: ItemsDatasetOptions(path="").gold_columns(),
        description="Item field -> the column its gold came from (messages name it).",
    )
    label_order: list[str] | None = Field(default=None, description="`label_order`, if any.")

    @property
    def rows(self) -> int:
        return len(self.items)

    @property
    def has_gold_label(self) -> bool:
        return any(item.gold_label is not None for item in self.items)

    @property
    def has_gold_score(self) -> bool:
        return any(item.gold_score is not None for item in self.items)

    @property
    def has_gold_preference(self) -> bool:
        return any(item.gold_preference is not None for item in self.items)

    def to_frame(self) -> pd.DataFrame:
        """One row per item: id, the variables, gold and each rater's column."""
        import pandas as pd

        records = [
            {
                "id": item.id,
                **item.variables,
                "gold_label": item.gold_label,
                "gold_score": item.gold_score,
                "gold_preference": item.gold_preference,
                **{rater: item.ratings.get(rater) for rater in self.raters},
            }
            for item in self.items
        ]
        return pd.DataFrame.from_records(records)


def _missing(value: Any) -> bool:
    """An absent cell: JSON null, an empty CSV cell, or a Parquet NaN."""
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _as_label(value: Any, path: Path, line: int, column: str) -> str | None:
    """A categorical value as text: `1`, `1.0` and `"1"` are the same label."""
    if _missing(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DatasetError("must be a text or number label", file=path, line=line, field=column)
    return str(int(value)) if float(value).is_integer() else repr(value)


def _as_score(value: Any, path: Path, line: int, column: str) -> float | None:
    """A numeric gold score: a finite number, or text that parses as one."""
    if _missing(value):
        return None
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        raise DatasetError(
            f"must be a finite number, got {value!r}", file=path, line=line, field=column
        )
    return number


def _as_preference(
    value: Any, opts: ItemsDatasetOptions, path: Path, line: int, column: str
) -> Preference | None:
    """A gold preference: A, B or tie (any case), after `gold_map`."""
    label = _as_label(value, path, line, column)
    if label is None:
        return None
    try:
        return _PREFERENCES[(opts.mapped(label) or label).strip().lower()]
    except KeyError:
        raise DatasetError(
            f'must be A, B or tie, got {label!r} (or map it: gold_map = {{ "{label}" = "A" }})',
            file=path,
            line=line,
            field=column,
        ) from None


def _item_id(row: dict[str, Any], path: Path, line: int, column: str) -> str:
    """The row's id, as text (a JSON number `7` is `"7"`); never missing or empty."""
    if column not in row:
        raise DatasetError(f"missing id column {column!r}", file=path, line=line, field=column)
    value = row[column]
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise DatasetError(
            f"id must be non-empty text or an integer, got {value!r}",
            file=path,
            line=line,
            field=column,
        )
    return str(value)


def _variables(
    row: dict[str, Any], opts: ItemsDatasetOptions, path: Path, line: int
) -> dict[str, Any]:
    """Every non-reserved column under its own name, then the mapped variables."""
    reserved = opts.reserved_columns()
    values = {k: (None if _missing(v) else v) for k, v in row.items() if k not in reserved}
    for variable, column in opts.variables.items():
        if column not in row:
            raise DatasetError(
                f"column {column!r} (mapped to variable {variable!r}) is not in this row",
                file=path,
                line=line,
                field=column,
            )
        values[variable] = None if _missing(row[column]) else row[column]
    return values


def _item(row: dict[str, Any], opts: ItemsDatasetOptions, path: Path, line: int) -> Item:
    """One row as an `Item`; the error names the column at fault."""
    gold = opts.gold_columns()
    return Item(
        id=_item_id(row, path, line, opts.id_column),
        line=line,
        variables=_variables(row, opts, path, line),
        gold_label=opts.mapped(
            _as_label(row.get(gold["gold_label"]), path, line, gold["gold_label"])
        ),
        gold_score=_as_score(row.get(gold["gold_score"]), path, line, gold["gold_score"]),
        gold_preference=_as_preference(
            row.get(gold["gold_preference"]), opts, path, line, gold["gold_preference"]
        ),
        ratings={r: opts.mapped(_as_label(row.get(r), path, line, r)) for r in opts.raters},
        split=(
            _as_label(row.get(opts.split_column), path, line, opts.split_column)
            if opts.split_column
            else None
        ),
    )


def _check_columns_present(
    rows: list[tuple[int, dict[str, Any]]], opts: ItemsDatasetOptions, path: Path
) -> None:
    """Raters' columns, and gold columns named explicitly, must appear in some row."""
    explicit = {
        column
        for fld, column in opts.gold_columns().items()
        if f"{fld}_column" in opts.model_fields_set
    }
    seen: set[str] = set().union(*(row.keys() for _, row in rows))
    split = [opts.split_column] if opts.split_column else []
    for column in [*opts.raters, *split, *sorted(explicit)]:
        if column not in seen:
            raise DatasetError(f"column {column!r} is in no row of the file", file=path)


def load_items(
    options: ItemsDatasetOptions | str | Path, *, base: Path | None = None
) -> ItemsDataset:
    """Read an items dataset; ids must be unique. A bare path takes the default columns."""
    opts = (
        options
        if isinstance(options, ItemsDatasetOptions)
        else ItemsDatasetOptions(path=str(options))
    )
    resolved = resolve_dataset_path(opts.path, base=base)
    if resolved.is_dir():
        raise DatasetError("is a directory; pass a .jsonl, .csv or .parquet file", file=resolved)
    if not resolved.is_file():
        raise DatasetError("dataset file not found", file=resolved)
    sep = file_delimiter(resolved, opts.delimiter)
    data = resolved.read_bytes()
    rows = table_rows(data, resolved, sep)
    if not rows:
        raise DatasetError("dataset has no rows", file=resolved)
    _check_columns_present(rows, opts, resolved)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        item = _item(row, opts, resolved, line)
        check_unique(item.id, seen, resolved, line, opts.id_column)
        cells = [(opts.gold_label_column, item.gold_label), *item.ratings.items()]
        check_levels(opts.label_order, cells, resolved, line)
        if opts.task == "pairwise":
            _check_pairwise(item, opts, resolved)
        items.append(item)
    return ItemsDataset(
        name=opts.name or resolved.stem,
        path=str(resolved),
        sha256=hashlib.sha256(data).hexdigest(),
        items=items,
        raters=list(opts.raters),
        task=opts.task,
        gold_columns=opts.gold_columns(),
        variable_columns=dict(opts.variables),
        label_order=opts.label_order,
        delimiter=sep,
    )


def _check_pairwise(item: Item, opts: ItemsDatasetOptions, path: Path) -> None:
    """A pairwise item needs both responses; the error names the column to fill or map."""
    for variable in ("response_a", "response_b"):
        if item.variables.get(variable) is None:
            column = opts.variables.get(variable, variable)
            how = (
                f"variable {variable!r} comes from here"
                if variable in opts.variables
                else f'or map another column with variables = {{ {variable} = "..." }}'
            )
            raise DatasetError(
                f"a pairwise item needs both responses: {column!r} is empty or missing ({how})",
                file=path,
                line=item.line,
                field=column,
            )
