"""Gold that fits the judges: checked before any judgment, and said when it is missing.

A gold or rater label the judge can never answer (gold `yes`/`no`, judge
`supported`/`unsupported`) scores every item wrong: accuracy 0.000 that looks measured.
So each label column of a single-response items dataset is checked against every judge
whose label set is known, after the normalisation metrics use (`normalise_label`); the
fix is the dataset's `gold_map`. Empty gold cells are legal, but the statistics are then
over fewer items than the dataset has: one warning line per dataset and gold kind says so.
Gold scores outside a judge's scale leave correlations valid but not the MAE: a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from assay.core.judging import Judge
from assay.datasets import ItemsDataset
from assay.errors import DatasetError, SpecError
from assay.parsing import normalise_label
from assay.prompts import declared_order, score_scale_of

_SHOWN = 5  # offending values named in the error


def judge_labels(judge: Judge) -> list[str] | None:
    """The labels a judge answers with: its prompt's, else its `labels` attribute
    (baselines, Python judges that declare one); None when unknown (not checked)."""
    prompt = getattr(judge, "prompt", None)
    meta = getattr(prompt, "meta", None)
    labels = getattr(meta, "labels", None) if meta is not None else getattr(judge, "labels", None)
    if not labels or not all(isinstance(label, str) for label in labels):
        return None
    return list(labels)


def _label_columns(dataset: ItemsDataset) -> Iterator[tuple[str, str, list[tuple[int, str]]]]:
    """(what, column, [(line, value)]) for the gold label column and each rater's."""
    gold = [(it.line, it.gold_label) for it in dataset.items if it.gold_label is not None]
    yield "gold", dataset.gold_columns["gold_label"], gold
    for rater in dataset.raters:
        cells = [(it.line, it.ratings.get(rater)) for it in dataset.items]
        yield "rater", rater, [(line, value) for line, value in cells if value is not None]


def _quoted(values: Sequence[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:_SHOWN])
    more = len(values) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def check_gold_fits(
    dataset: ItemsDataset, judges: Sequence[Judge], spec_path: str, field: str
) -> None:
    """Every gold and rater label of a single-response dataset is a label of every judge
    with a known label set; else one error naming column, values, judge and labels.
    Judges' prompts declaring different label orders need the dataset's own."""
    if dataset.task != "single":
        return
    _check_orders(dataset, judges, spec_path, field)
    for judge in judges:
        labels = judge_labels(judge)
        if labels is None:
            continue
        known = {normalise_label(label) for label in labels}
        for what, column, cells in _label_columns(dataset):
            bad = [(line, v) for line, v in cells if normalise_label(v) not in known]
            if not bad:
                continue
            values = list(dict.fromkeys(v for _, v in bad))
            example = ", ".join(
                f'{json.dumps(v, ensure_ascii=False)} = "<label>"' for v in values[:2]
            )
            raise DatasetError(
                f"{what} values {_quoted(values)} are not labels of judge {judge.id!r} "
                f"({', '.join(labels)}); map them in {Path(spec_path).name} {field}: "
                f"gold_map = {{ {example} }}",
                file=dataset.path,
                line=bad[0][0],
                field=column,
            )


def _check_orders(
    dataset: ItemsDataset, judges: Sequence[Judge], spec_path: str, field: str
) -> None:
    """Ordinal statistics need one order: prompts (`ordered = true`) that disagree are
    refused before any judgment unless the dataset sets `label_order`, which wins."""
    if dataset.label_order is not None:
        return
    orders: dict[tuple[str, ...], str] = {}
    for judge in judges:
        meta = getattr(getattr(judge, "prompt", None), "meta", None)
        order = declared_order(getattr(meta, "output", None)) if meta is not None else None
        if order is not None:
            orders.setdefault(tuple(normalise_label(v) for v in order), judge.id)
    if len(orders) > 1:
        shown = "; ".join(f"{j}: {', '.join(o)}" for o, j in orders.items())
        raise SpecError(
            f"items dataset {dataset.name!r}: its judges' prompts declare different label "
            f"orders ({shown}); set label_order on the dataset",
            file=spec_path,
            field=f"{field}.label_order",
        )


def missing_gold_warnings(dataset: ItemsDataset) -> list[str]:
    """One line per gold kind the dataset has but some items lack."""
    out = []
    n = len(dataset.items)
    for fld, column in dataset.gold_columns.items():
        have = sum(1 for it in dataset.items if getattr(it, fld) is not None)
        if 0 < have < n:
            kind = fld.replace("_", " ")
            out.append(
                f"{n - have} of {n} items of dataset {dataset.name!r} have no {kind} "
                f"(column {column!r}); {kind} statistics are over the other {have} at most"
            )
    return out


def judge_scale(judge: Judge) -> tuple[float, float] | None:
    """The range of the score gold scores are compared with: a prompt's declared scale
    (`score_field`, raw values), else [0, 1] for judges with labels; None if unknown."""
    prompt = getattr(judge, "prompt", None)
    output = getattr(prompt, "output_model", None) if prompt is not None else None
    scale = score_scale_of(output) if isinstance(output, type) else None
    if scale is not None:
        return (scale.minimum, scale.maximum)
    return (0.0, 1.0) if judge_labels(judge) is not None else None


def gold_scale_warnings(dataset: ItemsDataset, judges: Sequence[Judge]) -> list[str]:
    """One line per judge whose scale the dataset's gold scores leave."""
    scores = [it.gold_score for it in dataset.items if it.gold_score is not None]
    if dataset.task != "single" or not scores:
        return []
    low, high = min(scores), max(scores)
    out = []
    for judge in judges:
        scale = judge_scale(judge)
        if scale is None or scale[0] <= low <= high <= scale[1]:
            continue
        out.append(
            f"gold scores of dataset {dataset.name!r} (column "
            f"{dataset.gold_columns['gold_score']!r}) span {low:g}–{high:g}, outside the scale "
            f"{scale[0]:g}–{scale[1]:g} of judge {judge.id!r}: its MAE compares two scales "
            "(correlations do not depend on the scale)"
        )
    return out
