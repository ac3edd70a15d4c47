"""The report's tables for items runs: each judge against gold, pairwise preference
rates, and agreement among human raters, built from `metrics.json` alone.

A statistic computed on fewer items than the dataset has (empty gold cells, missing
verdicts, only the inconsistent pairs for position bias) gets its n in a column right
before it whenever some row's n differs from N, so no number hides its denominator.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from assay._table import Grid
from assay.report._cells import ci, num
from assay.report._views_calibration import calibration_grids
from assay.report._views_ordinal import ordinal_grids
from assay.report._views_panels import panel_grids

Row = Mapping[str, Any]
_GOLD = (
    ("acc", "accuracy"),
    ("bal acc", "balanced_accuracy"),
    ("macro F1", "macro_f1"),
    ("κ", "cohen_kappa"),
)
_NUMERIC = (("pearson", "pearson"), ("spearman", "spearman"), ("τ", "kendall_tau"))
_PAIRWISE = (
    ("win A", "win_rate_a"),
    ("win B", "win_rate_b"),
    ("tie", "tie_rate"),
    ("consistent", "position_consistency"),
    ("bias", "position_bias"),
    ("acc", "accuracy"),
)


# Statistic -> the row field holding its n in metrics.json from before `n_of`.
_N_FALLBACK = {key: "n_gold" for _, key in _GOLD} | {
    "quadratic_kappa": "n_gold",
    "pearson": "n_gold_score",
    "mae": "n_gold_score",
}
_N_FALLBACK |= {"spearman": "n_gold_score", "kendall_tau": "n_gold_score"}


def n_of(row: Row, key: str) -> Any:
    """The items statistic `key` of `row` is computed on (`n_of`, else the older fields)."""
    named = row.get("n_of")
    if isinstance(named, Mapping) and key in named:
        return named[key]
    return row.get(_N_FALLBACK.get(key, "n_scored"))


def _n_column(rows: Sequence[Row], key: str, total: str) -> bool:
    """Whether `key` needs its own n column: some row computes it on fewer than `total`."""
    return any(r.get(key) is not None and n_of(r, key) != r.get(total) for r in rows)


def _items(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    part = metrics.get("items")
    return part if isinstance(part, Mapping) else {}


def _present(rows: Sequence[Row], columns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The columns some row has a value for (a run without gold scores shows no MAE)."""
    return [(head, key) for head, key in columns if any(r.get(key) is not None for r in rows)]


def _title(name: str, label: str) -> str:
    return f"{name} · {label}" if label else name


def _grid(title: str, headers: list[str], rows: list[tuple[str, ...]], caption: str) -> Grid:
    numeric = tuple(i >= 2 for i in range(len(headers)))  # judge/dataset, then numbers
    return Grid(title=title, headers=tuple(headers), numeric=numeric, rows=rows, caption=caption)


def _blocks(rows: Sequence[Row]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(n header, columns) per group of statistics sharing one n: gold labels, scores."""
    numeric = _present(rows, _NUMERIC)
    numeric += [("MAE", "mae")] if any(r.get("mae") is not None for r in rows) else []
    return [("n gold", _present(rows, _GOLD)), ("n score", numeric)]


def single_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per judge and dataset: coverage, agreement with gold labels (CI on accuracy and
    kappa), and with gold scores; each group after its n when that is not N."""
    headers = ["judge", "dataset", "N", "cov"]
    blocks = [
        (n_head, cols, _n_column(rows, cols[0][1], "n_items"))
        for n_head, cols in _blocks(rows)
        if cols
    ]
    for n_head, cols, with_n in blocks:
        headers += [n_head] if with_n else []
        for head, key in cols:
            headers += (
                [head, "95% CI"] if key in ("accuracy", "cohen_kappa", "spearman") else [head]
            )
    out = []
    for r in rows:
        cells = [str(r["judge_id"]), str(r["dataset"]), str(r["n_items"])]
        cells.append(num(r.get("coverage"), ".0%"))
        for _, cols, with_n in blocks:
            cells += [_count(n_of(r, cols[0][1]))] if with_n else []
            for _, key in cols:
                cells.append(num(r.get(key)))
                if key in ("accuracy", "cohen_kappa", "spearman"):
                    cells.append(ci(r.get(f"{key}_lo"), r.get(f"{key}_hi")))
        out.append(tuple(cells))
    caption = (
        "vs gold over items with a gold value and a verdict · N: items · cov: share of "
        "items with a verdict · n gold / n score: items a group of statistics is over, "
        "shown when not N · κ: Cohen's kappa (weighted kappas of ordinal labels: the "
        "ordinal table) · CI: 95% bootstrap"
    )
    return _grid(title, headers, out, caption + held_out_note(rows))


def _count(value: Any) -> str:
    return "—" if value is None else str(value)


def held_out_note(rows: Sequence[Row]) -> str:
    """A fitted jury's row counts only the items outside its fit split: say which."""
    notes = [f"{r['judge_id']}: {r['evaluated_on']}" for r in rows if r.get("evaluated_on")]
    return "".join(f" · {note}" for note in dict.fromkeys(notes))


def pairwise_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per pairwise judge: win and tie rates, position consistency and bias, accuracy;
    a statistic on fewer items than N (both orders judged, inconsistent, gold) after its n."""
    columns = _present(rows, _PAIRWISE)
    n_heads = {"win_rate_a": "n both", "position_bias": "n incons.", "accuracy": "n gold"}
    shown = {key for key in n_heads if _n_column(rows, key, "n_items")}
    headers = ["judge", "dataset", "N"]
    for head, key in columns:
        headers += [n_heads[key], head] if key in shown else [head]
    headers.append("95% CI (acc)")
    out = []
    for r in rows:
        cells = [str(r["judge_id"]), str(r["dataset"]), str(r["n_items"])]
        for _, key in columns:
            cells += [_count(n_of(r, key))] if key in shown else []
            cells.append(num(r.get(key)))
        cells.append(ci(r.get("accuracy_lo"), r.get("accuracy_hi")))
        out.append(tuple(cells))
    caption = (
        "each item judged in both orders · N: items · n both: items with a verdict in both "
        "orders (the rates' n) · win/tie: share of all verdicts · consistent: same verdict "
        "after swapping · bias: share of inconsistent verdicts for the first slot (over n "
        "incons.) · acc: vs gold preference (over n gold)"
    )
    return _grid(title, headers, out, caption + held_out_note(rows))


def raters_grid(rows: Sequence[Row], title: str) -> Grid:
    """Human raters: Krippendorff's alpha and Fleiss' kappa (over the items every rater
    labelled: `n complete`, shown when not N) per dataset."""
    complete = any(r.get("n_complete") != r.get("n_items") for r in rows)
    headers = ["dataset", "raters", "N", "level", "α", "95% CI"]
    headers += ["n complete", "Fleiss κ"] if complete else ["Fleiss κ"]
    out = []
    for r in rows:
        interval = (r.get("ci") or {}).get("krippendorff_alpha") or (None, None)
        cells = [str(r["dataset"]), ", ".join(r["raters"]), str(r["n_items"]), str(r["level"])]
        cells += [num(r.get("krippendorff_alpha")), ci(*interval)]
        cells += [_count(r.get("n_complete"))] if complete else []
        cells.append(num(r.get("fleiss_kappa")))
        out.append(tuple(cells))
    caption = "agreement among the human raters' columns · α: over every pairable rating"
    caption += " · Fleiss κ: over the items every rater labelled" if complete else ""
    return _grid(title, headers, out, caption)


def kappa_grid(row: Row, title: str) -> Grid:
    """Cohen's kappa between every judge (majority votes included) and rater of a dataset."""
    names = [str(n) for n in row.get("kappa_names") or []]
    matrix = row.get("kappa") or []
    out = [(name, *(num(v) for v in values)) for name, values in zip(names, matrix, strict=False)]
    headers = ["judge / rater", *names]
    numeric = tuple(i >= 1 for i in range(len(headers)))
    caption = "unweighted Cohen's kappa, each cell over the items both labelled"
    return Grid(title=title, headers=tuple(headers), numeric=numeric, rows=out, caption=caption)


def items_grids(metrics: Mapping[str, Any], label: str) -> list[Grid]:
    """The tables of an items run: single-response judges, pairwise judges, raters and
    the judge-rater kappa matrix of each dataset with raters."""
    part = _items(metrics)
    rows = list(part.get("rows") or [])
    single = [r for r in rows if r.get("task") != "pairwise"]
    pairwise = [r for r in rows if r.get("task") == "pairwise"]
    grids = []
    if single:
        grids.append(single_grid(single, _title("Judges vs gold", label)))
    if pairwise:
        grids.append(pairwise_grid(pairwise, _title("Pairwise judges", label)))
    raters = [r for r in part.get("raters") or [] if isinstance(r, Mapping)]
    if raters:
        grids.append(raters_grid(raters, _title("Human raters", label)))
    for r in raters:
        if r.get("kappa_names"):
            name = f"Judges and raters: Cohen's κ · {r.get('dataset')}"
            grids.append(kappa_grid(r, _title(name, label)))
    grids += ordinal_grids(metrics, label)
    return grids + panel_grids(metrics, label) + calibration_grids(metrics, label)


def rater_records(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The raters' statistics as tidy CSV records (section "raters"): alpha over N items,
    Fleiss' kappa over the complete ones, and each judge-rater kappa (group: the other)."""
    for r in _items(metrics).get("raters") or []:
        base = {"section": "raters", "dataset": r.get("dataset"), "group_by": "overall"}
        base |= {"judge_or_verifier": ", ".join(r.get("raters") or []), "group": "all"}
        for metric, n in (("krippendorff_alpha", "n_items"), ("fleiss_kappa", "n_complete")):
            low, high = (r.get("ci") or {}).get(metric) or (None, None)
            yield (
                base
                | {"metric": metric, "value": r.get(metric), "n": r.get(n)}
                | {
                    "ci_low": low,
                    "ci_high": high,
                }
            )
        names = list(r.get("kappa_names") or [])
        for i, a in enumerate(names):
            for j in range(i + 1, len(names)):
                pair = {"judge_or_verifier": a, "group_by": "with", "group": names[j]}
                yield base | pair | {"metric": "cohen_kappa", "value": r["kappa"][i][j]}
