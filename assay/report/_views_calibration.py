"""The report's calibration views (`metrics.json` items `calibration`): a table of Brier
and ECE per judge and dataset, a table of recalibration fitted on a split, the same
numbers as tidy CSV records (section "calibration"), and the reliability diagram's
geometry for the HTML page (`templates/charts.svg.j2`, macro `reliability`).

Built from `metrics.json` alone, like every other items view, so terminal, markdown,
HTML and CSV show the same numbers; a metrics.json without `calibration` shows none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay._table import Grid
from assay.report._cells import ci, num

Row = Mapping[str, Any]


def calibration_rows(metrics: Mapping[str, Any]) -> list[Row]:
    part = metrics.get("items")
    rows = part.get("calibration") if isinstance(part, Mapping) else None
    return [r for r in rows or [] if isinstance(r, Mapping)]


def _interval(row: Row, key: str) -> str:
    low, high = (row.get("ci") or {}).get(key) or (None, None)
    return ci(low, high)


def calibration_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per judge and dataset: where the probabilities come from, n, Brier and ECE."""
    headers = ("judge", "dataset", "source", "n", "Brier", "95% CI", "ECE", "95% CI", "bins")
    out = [
        (
            str(r.get("judge_id")),
            str(r.get("dataset")),
            str(r.get("source")),
            str(r.get("n")),
            num(r.get("brier")),
            _interval(r, "brier"),
            num(r.get("ece")),
            _interval(r, "ece"),
            str(r.get("bins")),
        )
        for r in rows
    ]
    caption = (
        "the judge's probability of its own label (logprobs: of the label's tokens; "
        "confidence: a declared field) against whether the label equals gold · n: items "
        "with gold, a verdict and a probability · Brier: mean (p − correct)², 0 best · "
        "ECE: Σ n_b/n |accuracy_b − confidence_b| over equal-width bins of [0, 1] "
        "(right-closed), 0 best · CI: 95% bootstrap over items"
    )
    numeric = tuple(i >= 3 for i in range(len(headers)))
    return Grid(title=title, headers=headers, numeric=numeric, rows=out, caption=caption)


def fitted_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per judge, dataset and method: fitted on which split, the test items' Brier and
    ECE before and after."""
    headers: tuple[str, ...] = ("judge", "dataset", "method", "fit on", "n fit", "n test", "T")
    headers += ("Brier before", "after", "ECE before", "after")
    out = []
    for r in rows:
        for f in r.get("fitted") or []:
            cells = [str(r.get("judge_id")), str(r.get("dataset")), str(f.get("method"))]
            cells += [str(f.get("fit_on")), str(f.get("n_fit")), str(f.get("n_test"))]
            cells += [num(f.get("temperature"), ".2f") if f.get("temperature") else "—"]
            cells += [num(f.get(k)) for k in ("brier_before", "brier_after")]
            cells += [num(f.get(k)) for k in ("ece_before", "ece_after")]
            out.append(tuple(cells))
    caption = (
        "recalibration fitted on the items of one split (temperature: sigmoid(logit(p)/T) "
        "by log loss; isotonic: monotone regression) and scored on the items of every "
        "other split (n test), before and after"
    )
    numeric = tuple(i >= 4 for i in range(len(headers)))
    return Grid(title=title, headers=headers, numeric=numeric, rows=out, caption=caption)


def calibration_grids(metrics: Mapping[str, Any], label: str) -> list[Grid]:
    """The calibration table, and the fitted table when a split was fitted on."""
    rows = calibration_rows(metrics)
    if not rows:
        return []
    suffix = f" · {label}" if label else ""
    grids = [calibration_grid(rows, "Calibration vs gold" + suffix)]
    if any(r.get("fitted") for r in rows):
        grids.append(fitted_grid(rows, "Calibration fitted on a split" + suffix))
    return grids


def calibration_records(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Tidy CSV records (section "calibration"): each reliability bin's `bin_count`,
    `bin_confidence` and `bin_accuracy` (group_by "bin", group "lo-hi"), then each
    fitted method's before/after Brier and ECE (group_by "fitted", group the method,
    n the test items). Brier and ECE themselves are in the judge's items row."""
    for r in calibration_rows(metrics):
        base = {"section": "calibration", "dataset": r.get("dataset")}
        base |= {"judge_or_verifier": r.get("judge_id")}
        for b in r.get("reliability") or []:
            head = base | {"group_by": "bin", "group": f"{b.get('lo'):g}-{b.get('hi'):g}"}
            n = b.get("count")
            yield head | {"metric": "bin_count", "value": n, "n": n}
            yield head | {"metric": "bin_confidence", "value": b.get("confidence"), "n": n}
            yield head | {"metric": "bin_accuracy", "value": b.get("accuracy"), "n": n}
        for f in r.get("fitted") or []:
            head = base | {"group_by": f"fitted on {f.get('fit_on')}", "group": f.get("method")}
            for key in ("brier_before", "brier_after", "ece_before", "ece_after"):
                yield head | {"metric": key, "value": f.get(key), "n": f.get("n_test")}
            if f.get("temperature") is not None:
                yield head | {"metric": "temperature", "value": f.get("temperature")}


@dataclass(frozen=True)
class ReliabilityBar:
    x: float
    y: float
    width: float
    height: float
    tip: str


@dataclass(frozen=True)
class ReliabilityChart:
    """One judge's reliability diagram: a bar per non-empty bin up to its accuracy, a
    dot at (mean confidence, accuracy), the diagonal of perfect calibration."""

    title: str
    size: float
    left: float
    top: float
    bars: tuple[ReliabilityBar, ...]
    dots: tuple[tuple[float, float, str], ...]
    ticks: tuple[tuple[float, str], ...]
    caption: str

    @property
    def width(self) -> float:
        return self.left + self.size + 16

    @property
    def height(self) -> float:
        return self.top + self.size + 44


def reliability_chart(row: Row, *, size: float = 220.0) -> ReliabilityChart:
    """The geometry of one calibration row's diagram (pixels of the SVG's viewBox)."""
    left, top = 44.0, 12.0

    def x(p: float) -> float:
        return left + p * size

    def y(p: float) -> float:
        return top + (1.0 - p) * size

    bars, dots = [], []
    for b in row.get("reliability") or []:
        n, acc, conf = b.get("count") or 0, b.get("accuracy"), b.get("confidence")
        if not n or acc is None or conf is None:
            continue
        tip = f"({b['lo']:g}, {b['hi']:g}]: n={n}, confidence {conf:.3f}, accuracy {acc:.3f}"
        bars.append(ReliabilityBar(x(b["lo"]), y(acc), (b["hi"] - b["lo"]) * size, acc * size, tip))
        dots.append((x(conf), y(acc), tip))
    ticks = tuple((t / 4, f"{t / 4:g}") for t in range(5))
    caption = (
        f"{row.get('judge_id')} · {row.get('dataset')}: n={row.get('n')}, "
        f"Brier {num(row.get('brier'))}, ECE {num(row.get('ece'))} ({row.get('bins')} bins)"
    )
    return ReliabilityChart(
        title=f"Reliability: {row.get('judge_id')} · {row.get('dataset')}",
        size=size,
        left=left,
        top=top,
        bars=tuple(bars),
        dots=tuple(dots),
        ticks=ticks,
        caption=caption,
    )


def reliability_charts(metrics: Mapping[str, Any]) -> tuple[ReliabilityChart, ...]:
    return tuple(reliability_chart(r) for r in calibration_rows(metrics))
