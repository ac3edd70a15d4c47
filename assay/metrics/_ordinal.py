"""Ordinal labels: their order, and agreement statistics that use it.

An order comes from (first that applies) an items dataset's `label_order`, the judges'
prompts (`ordered = true` on the `[output.label]` enum: the declared `values` order),
or labels that are all integers ("1".."5", numeric order). Without one, labels are
nominal. `resolve_order` is the rule, `label_orders_from_manifest` finds the declared
orders of a finished run (its spec and its judges' prompt identities).

Statistics against gold, over the items whose judge label AND gold label are both in
the order (a label outside it, e.g. a judge's `unclear`, makes the item not comparable:
`n` counts the rest and a table shows it as `n_of`):

- `linear_kappa`, `quadratic_kappa`: Cohen's (1968) weighted kappa with weights
  |i - j| and (i - j)² on the ranks (scikit-learn `cohen_kappa_score(weights=...)`).
- `ordinal_alpha`: Krippendorff's (2004) alpha at the ordinal level, judge and gold as
  two coders (the `krippendorff` package, `level_of_measurement="ordinal"`, value domain
  the whole order).
- `mae_rank`: mean absolute difference of the ranks (0 = same level; 1 = one level off).

Point values come from the libraries; bootstrap CIs from `ordinal_statistics`, the same
statistics of a stack of confusion matrices at once (tests check both agree).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.core.labels import normalise_label
from assay.metrics._agreement_stats import Column, confusion_stack, paired_labels
from assay.metrics._item_bootstrap import Interval, item_bootstrap_cis
from assay.metrics._majority import MAJORITY, sample_base
from assay.metrics._resampling import Seed

ORDINAL_STATISTICS = ("linear_kappa", "quadratic_kappa", "ordinal_alpha", "mae_rank")
"""The statistics an order adds, in display order."""


def ordinal_order(values: Iterable[str | None]) -> list[str] | None:
    """The numeric order of labels that are all integers, else None (nominal)."""
    seen = {v for v in values if v is not None}
    if not seen or not all(re.fullmatch(r"-?\d+", v) for v in seen):
        return None
    return sorted(seen, key=int)


def resolve_order(values: Iterable[str | None], declared: Sequence[str] | None) -> list[str] | None:
    """The order labels are ranked in: `declared` (normalised like labels) when given,
    else the integer order of `values` (`ordinal_order`), else None (nominal)."""
    if declared:
        return list(dict.fromkeys(normalise_label(v) for v in declared))
    return ordinal_order(values)


def raters_order(
    values: Iterable[str | None], human: Iterable[str | None], declared: Sequence[str] | None
) -> list[str] | None:
    """The order raters' alpha uses: `resolve_order`, unless a rater's label is outside
    a declared order (adjudicated gold laid over): then None (nominal)."""
    order = resolve_order(values, declared)
    if order and any(v is not None and v not in order for v in human):
        return None
    return order


def with_extras(order: Sequence[str], values: Iterable[str | None]) -> list[str]:
    """`order` then the labels outside it (sorted): the axes of a nominal confusion
    matrix when some labels (a judge's `unclear`) have no rank."""
    known = set(order)
    extra = sorted({v for v in values if v is not None and v not in known})
    return [*order, *extra]


def _weighted_kappa(matrices: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[Any]:
    """1 - sum(w * observed) / sum(w * expected) of `(b, k, k)` matrices; NaN if undefined."""
    total = matrices.sum(axis=(1, 2))
    safe = np.where(total > 0, total, 1.0)[:, None, None]
    expected = matrices.sum(axis=2)[:, :, None] * matrices.sum(axis=1)[:, None, :] / safe
    observed = (weights * matrices).sum(axis=(1, 2))
    chance = (weights * expected).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - observed / chance
    return np.where(chance > 1e-12 * np.maximum(total, 1.0), value, np.nan)


def _ordinal_alpha(matrices: NDArray[np.float64]) -> NDArray[Any]:
    """Krippendorff's ordinal alpha of two coders from `(b, k, k)` [gold, pred] counts:
    coincidences o = C + Cᵀ, margins n_c, distance (Σ_{g=c..k} n_g - (n_c + n_k)/2)²,
    alpha = 1 - (n - 1) Σ o δ² / Σ n_c n_k δ²."""
    coincidence = matrices + np.swapaxes(matrices, 1, 2)
    margins = coincidence.sum(axis=2)
    cum = np.cumsum(margins, axis=1)
    half = margins / 2.0
    delta = (cum[:, None, :] - cum[:, :, None]) + half[:, :, None] - half[:, None, :]
    delta2 = delta**2
    n = margins.sum(axis=1)
    observed = (coincidence * delta2).sum(axis=(1, 2))
    expected = (margins[:, :, None] * margins[:, None, :] * delta2).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 1e-12, value, np.nan)


def ordinal_statistics(matrices: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Every ordinal statistic of a stack `(b, k, k)` of [gold, pred] confusion matrices
    whose axes are the ranks in order (lowest first)."""
    k = matrices.shape[1]
    ranks = np.arange(k, dtype=np.float64)
    distance = np.abs(ranks[:, None] - ranks[None, :])
    total = matrices.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        mae = np.where(total > 0, (distance * matrices).sum(axis=(1, 2)) / total, np.nan)
    return {
        "linear_kappa": _weighted_kappa(matrices, distance),
        "quadratic_kappa": _weighted_kappa(matrices, distance**2),
        "ordinal_alpha": _ordinal_alpha(matrices),
        "mae_rank": mae,
    }


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if np.isfinite(number) else None


def _library_values(pred: NDArray[np.int64], gold: NDArray[np.int64], k: int) -> dict[str, Any]:
    """Point values from scikit-learn and krippendorff (imported only when needed)."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    if len(pred) == 0:
        return dict.fromkeys(ORDINAL_STATISTICS)
    labels = np.arange(k)
    values: dict[str, Any] = {}
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # undefined values are reported as None
        for name, weights in (("linear_kappa", "linear"), ("quadratic_kappa", "quadratic")):
            values[name] = cohen_kappa_score(
                gold, pred, labels=labels, weights=weights, replace_undefined_by=np.nan
            )
        try:
            values["ordinal_alpha"] = krippendorff.alpha(
                reliability_data=np.vstack([pred, gold]).astype(np.float64),
                value_domain=labels.astype(np.float64),
                level_of_measurement="ordinal",
            )
        except (ValueError, ZeroDivisionError):  # one value only: undefined
            values["ordinal_alpha"] = np.nan
    values["mae_rank"] = float(np.abs(pred - gold).mean())
    return {name: _finite(v) for name, v in values.items()}


class OrdinalAgreement(BaseModel):
    """Ordinal statistics of judge labels against gold, with their CIs."""

    model_config = ConfigDict(frozen=True)

    order: list[str] = Field(description="The labels, lowest rank first.")
    n: int = Field(description="Items with both labels in the order (comparable).")
    stats: dict[str, float | None] = Field(description="statistic -> value.")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )


def rank_codes(
    pred: Column, gold: Column, order: Sequence[str]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Ranks of the items whose two labels are both in `order` (the others left out)."""
    p, g = paired_labels(pred, gold)
    index = {label: i for i, label in enumerate(order)}
    keep = [i for i, (a, b) in enumerate(zip(p.tolist(), g.tolist(), strict=True))
            if a in index and b in index]  # fmt: skip
    pr = np.array([index[p[i]] for i in keep], dtype=np.int64)
    gr = np.array([index[g[i]] for i in keep], dtype=np.int64)
    return pr, gr


def ordinal_agreement(
    pred: Column,
    gold: Column,
    order: Sequence[str],
    *,
    n_boot: int = 0,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> OrdinalAgreement:
    """Linear and quadratic weighted kappa, ordinal alpha and MAE in ranks of `pred`
    against `gold`, over the items whose labels are both in `order`; `n_boot > 0` adds
    percentile CIs (the same item draws as the other agreement statistics)."""
    pr, gr = rank_codes(pred, gold, order)
    k = len(order)

    def batched(pp: NDArray[np.int64], gg: NDArray[np.int64]) -> dict[str, NDArray[Any]]:
        return ordinal_statistics(confusion_stack(pp, gg, k))

    ci = item_bootstrap_cis(batched, pr, gr, n_boot=n_boot, seed=seed, confidence=confidence)
    if n_boot and not ci:
        ci = dict.fromkeys(ORDINAL_STATISTICS)
    return OrdinalAgreement(order=list(order), n=len(pr), stats=_library_values(pr, gr, k), ci=ci)


def _dataset_name(block: Mapping[str, Any]) -> str | None:
    """An items `[[datasets]]` block's name: `name`, else its file's stem (as loaded)."""
    name = block.get("name")
    if isinstance(name, str) and name:
        return name
    path = block.get("path")
    return Path(path).stem if isinstance(path, str) and path else None


def _prompt_order(judge: Mapping[str, Any]) -> list[str] | None:
    prompt = judge.get("prompt")
    order = prompt.get("label_order") if isinstance(prompt, Mapping) else None
    return [str(v) for v in order] if isinstance(order, list) and order else None


def _base_id(judge_id: str) -> str:
    """`j#0`, `j#majority` -> `j`: samples and their vote share the judge's prompt."""
    return sample_base(judge_id) or judge_id.removesuffix(f"#{MAJORITY}")


def label_orders_from_manifest(
    manifest: Mapping[str, Any], judged: Mapping[str, Iterable[str]]
) -> tuple[dict[str, list[str]], list[str]]:
    """(dataset -> declared order, notes) of a run: the spec's items datasets'
    `label_order` first; else the order the prompts of the judges that judged the dataset
    (`judged`: dataset -> judge ids) declare (`ordered = true`). Prompts declaring
    different orders leave the dataset nominal, with a note (a run refuses to start so)."""
    orders: dict[str, list[str]] = {}
    spec = manifest.get("spec") or {}
    for block in spec.get("datasets", []) if isinstance(spec, Mapping) else []:
        if isinstance(block, Mapping) and block.get("kind") == "items":
            name, order = _dataset_name(block), block.get("label_order")
            if name and isinstance(order, list) and order:
                orders[name] = [str(v) for v in order]
    prompts: dict[str, list[str]] = {}
    for judge in manifest.get("judges", []) or []:
        order = _prompt_order(judge) if isinstance(judge, Mapping) else None
        if order is not None:
            prompts[_base_id(str(judge.get("id")))] = order
    notes: list[str] = []
    for dataset, judge_ids in judged.items():
        if dataset in orders:
            continue
        found = {_base_id(j): prompts[_base_id(j)] for j in judge_ids if _base_id(j) in prompts}
        distinct = {tuple(resolve_order([], o) or []) for o in found.values()}
        if len(distinct) == 1:
            orders[dataset] = next(iter(found.values()))
        elif len(distinct) > 1:
            notes.append(
                f"dataset {dataset!r}: judges {', '.join(sorted(found))} declare different "
                "label orders; ordinal statistics left out (give the dataset a label_order)"
            )
    return orders, notes
