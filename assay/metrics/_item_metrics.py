"""Metrics of an items run: each judge against gold, between judges and human raters,
pairwise preferences, and self-consistency of repeated samples.

Input is `items.jsonl` (the items with their gold and raters) and
`item_judgments.jsonl`. Rows are per (dataset, judge); a statistic's CI is `<name>_lo`,
`<name>_hi`. Conventions:
- A judgment that is not `ok` gives no label: agreement statistics are computed over the
  items with a verdict (`n_scored`), and `coverage` = n_scored / n_items says how many.
- Gold labels and raters' labels are compared after the same case/separator
  normalisation as judge labels ("Fully Supported" == "fully_supported").
- Ordinal labels (a declared order, `label_orders`, or all integers) add the statistics
  of `_ordinal`; raters' Krippendorff alpha then uses the ordinal level.
- Numeric gold (`gold_score`): against the judge's raw value on its declared scale
  (`raw_score`, e.g. Likert 1-5) when the prompt has one, else its [0, 1] score.
- Repeated samples (`judge#0`, `judge#1`, ...) add a `judge#majority` row: the modal
  label per item (ties: the label first in sorted order), with modal agreement and label
  entropy of the samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd

from assay.core.labels import comparable_label as comparable_label  # re-exported
from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.metrics._agreement_stats import agreement_with_gold
from assay.metrics._calibration import (
    CalibrationOptions,
    CalibrationRow,
    calibration_rows,
    with_calibration,
)
from assay.metrics._item_rows import ItemJudgeRow, ItemsReport, RaterRow
from assay.metrics._jury_rows import held_out, jury_fields, without_juries
from assay.metrics._majority import MAJORITY, majority_records, sample_base
from assay.metrics._ordinal import (
    ORDINAL_STATISTICS,
    ordinal_agreement,
    raters_order,
    resolve_order,
    with_extras,
)
from assay.metrics._ordinal import ordinal_order as ordinal_order
from assay.metrics._pairwise import pairwise_metrics
from assay.metrics._panel import PanelRow, dataset_panels
from assay.metrics._rater_agreement import kappa_matrix, rater_agreement
from assay.metrics._score_agreement import NUMERIC_STATISTICS, agreement_with_gold_scores
from assay.metrics._self_consistency import self_consistency

_KENDALL_CI_LIMIT = 5000  # Kendall's tau CI costs a scipy call per resample
_PAIRWISE_KEYS = ("win_rate_a", "win_rate_b", "tie_rate", "position_consistency")


def _producer(records: Sequence[ItemJudgmentRecord]) -> dict[str, Any]:
    last = records[-1] if records else None
    return {
        "model": getattr(last, "model", None),
        "prompt_id": getattr(last, "prompt_id", None),
        "prompt_version": getattr(last, "prompt_version", None),
    }


def _single_row(
    dataset: str,
    judge_id: str,
    items: Sequence[ItemRecord],
    labels: dict[str, str | None],
    scores: dict[str, float | None],
    boot: tuple[int, int],
    declared: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Coverage and agreement with gold labels and scores of one single-response judge;
    `declared`: the dataset's label order, if any (`resolve_order`)."""
    n_boot, seed = boot
    scored = sum(1 for it in items if labels.get(it.item_id) is not None)
    out: dict[str, Any] = {"stats": {}, "ci": {}, "n_of": {}}
    gold = [comparable_label(it.gold_label) for it in items]
    if any(g is not None for g in gold):
        pred = [labels.get(it.item_id) for it in items]
        order = resolve_order([*gold, *pred], declared)
        axes = with_extras(order, [*gold, *pred]) if order else None
        agree = agreement_with_gold(pred, gold, order=axes, n_boot=n_boot, seed=seed)
        names = ["accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa"]
        out["stats"].update({n: getattr(agree, n) for n in names})
        out["stats"]["n_gold"] = agree.n
        out["n_of"].update(dict.fromkeys(names, agree.n))
        out["ci"].update({n: c for n, c in agree.ci.items() if n in names})
        out.update(labels=agree.labels, confusion=agree.confusion)
        if order:
            ordinal = ordinal_agreement(pred, gold, order, n_boot=n_boot, seed=seed)
            out["stats"].update(ordinal.stats)
            out["n_of"].update(dict.fromkeys(ORDINAL_STATISTICS, ordinal.n))
            out["ci"].update(ordinal.ci)
    gold_scores = [it.gold_score for it in items]
    if any(g is not None for g in gold_scores):
        values = [scores.get(it.item_id) for it in items]
        few = len(items) <= _KENDALL_CI_LIMIT
        ci_for = NUMERIC_STATISTICS if few else ("pearson", "spearman", "mae")
        numeric = agreement_with_gold_scores(
            [np.nan if v is None else v for v in values],
            [np.nan if g is None else g for g in gold_scores],
            ci_for=ci_for,
            n_boot=n_boot,
            seed=seed,
        )
        out["stats"].update({n: getattr(numeric, n) for n in NUMERIC_STATISTICS})
        out["stats"]["n_gold_score"] = numeric.n
        out["n_of"].update(dict.fromkeys(NUMERIC_STATISTICS, numeric.n))
        out["ci"].update(numeric.ci)
    out["n_scored"] = scored
    return out


def _pairwise_row(
    items: Sequence[ItemRecord], recs: Sequence[ItemJudgmentRecord], boot: tuple[int, int]
) -> dict[str, Any]:
    """Win/tie rates, position consistency and bias of one pairwise judge; items whose
    verdict is missing in either order are left out (`n_scored`)."""
    slot: dict[tuple[str, str], str] = {}
    for r in recs:
        if r.status is Status.OK and r.label in ("a", "b", "tie") and r.order:
            slot[(r.item_id, r.order)] = "tie" if r.label == "tie" else r.label.upper()
    both = [it for it in items if (it.item_id, "ab") in slot and (it.item_id, "ba") in slot]
    out: dict[str, Any] = {"stats": {}, "ci": {}, "n_of": {}, "n_scored": len(both)}
    if not both:
        return out
    gold = [it.gold_preference for it in both]
    report = pairwise_metrics(
        [slot[(it.item_id, "ab")] for it in both],
        [slot[(it.item_id, "ba")] for it in both],
        gold if any(g is not None for g in gold) else None,
        n_boot=boot[0],
        seed=boot[1],
    )
    dumped = report.model_dump()
    for name in (*_PAIRWISE_KEYS, "position_bias", "accuracy"):
        out["stats"][name] = dumped[name]
        lo, hi = dumped.get(f"{name}_lo"), dumped.get(f"{name}_hi")
        out["ci"][name] = None if lo is None or hi is None else (lo, hi)
    out["stats"]["n_inconsistent"] = report.n_inconsistent
    out["stats"]["n_gold"] = report.n_gold
    out["n_of"] = dict.fromkeys(_PAIRWISE_KEYS, report.n)
    out["n_of"].update(position_bias=report.n_inconsistent, accuracy=report.n_gold)
    return out


def _score_of(record: ItemJudgmentRecord) -> float | None:
    if record.status is not Status.OK:
        return None
    return record.raw_score if record.raw_score is not None else record.score


def _judge_rows(
    dataset: str,
    items: Sequence[ItemRecord],
    by_judge: dict[str, list[ItemJudgmentRecord]],
    boot: tuple[int, int],
    declared: Sequence[str] | None = None,
) -> list[ItemJudgeRow]:
    pairwise = bool(items) and items[0].pairwise
    rows = []
    for judge_id, recs in by_judge.items():
        judged = held_out(items, recs)  # a fitted jury: not its fit split
        if pairwise:
            part = _pairwise_row(judged, recs, boot)
        else:
            labels = {r.item_id: comparable_label(r.label) for r in recs if r.status is Status.OK}
            scores = {r.item_id: _score_of(r) for r in recs}
            part = _single_row(dataset, judge_id, judged, labels, scores, boot, declared)
        producer = {**_producer(recs), **jury_fields(recs)}
        rows.append(_row(dataset, judge_id, judged, part, producer, pairwise))
    return rows


def _row(
    dataset: str,
    judge_id: str,
    items: Sequence[ItemRecord],
    part: dict[str, Any],
    producer: dict[str, Any],
    pairwise: bool,
    samples: int | None = None,
) -> ItemJudgeRow:
    n = len(items)
    return ItemJudgeRow(
        judge_id=judge_id,
        dataset=dataset,
        task="pairwise" if pairwise else "single",
        n_items=n,
        coverage=part["n_scored"] / n if n else None,
        samples=samples,
        **producer,
        **part,
    )


def _sample_groups(judge_ids: Iterable[str]) -> dict[str, list[str]]:
    """Base judge id -> its sample ids, for judges with more than one sample."""
    groups: dict[str, list[str]] = {}
    for jid in judge_ids:
        base = sample_base(jid)
        if base is not None:
            groups.setdefault(base, []).append(jid)
    return {base: sorted(ids) for base, ids in groups.items() if len(ids) > 1}


def _majority_rows(
    dataset: str,
    items: Sequence[ItemRecord],
    by_judge: dict[str, list[ItemJudgmentRecord]],
    boot: tuple[int, int],
    declared: Sequence[str] | None = None,
) -> tuple[list[ItemJudgeRow], dict[str, dict[str, str | None]]]:
    """A `base#majority` row per sampled judge: the vote (`majority_records`, the rule
    `assay compare` uses too) scored like any judge, plus how consistent the samples were."""
    voted: dict[str, list[ItemJudgmentRecord]] = {}
    for record in majority_records(r for recs in by_judge.values() for r in recs):
        voted.setdefault(record.judge_id, []).append(record)
    groups = _sample_groups(by_judge)
    rows = []
    for row in _judge_rows(dataset, items, voted, boot, declared):
        ids = groups[row.judge_id.removesuffix(f"#{MAJORITY}")]
        labels = [
            {
                (r.item_id, r.order): comparable_label(r.label)
                for r in by_judge[j]
                if r.status is Status.OK
            }
            for j in ids
        ]
        keys = sorted({key for lab in labels for key in lab}, key=str)
        samples = [[lab[key] for lab in labels if lab.get(key)] for key in keys]
        consistency = self_consistency(samples, n_boot=boot[0], seed=boot[1])
        stats = {
            **row.stats,
            "modal_agreement": consistency.modal_agreement,
            "label_entropy": consistency.label_entropy,
        }
        n_of = {**row.n_of, "modal_agreement": consistency.n_items}
        n_of["label_entropy"] = consistency.n_items
        update = {"stats": stats, "ci": {**row.ci, **consistency.ci}, "samples": len(ids)}
        update["n_of"] = n_of
        rows.append(row.model_copy(update=update))
    votes = {
        judge: {r.item_id: comparable_label(r.label) for r in recs if r.status is Status.OK}
        for judge, recs in voted.items()
    }
    return rows, votes


def _rater_row(
    dataset: str,
    items: Sequence[ItemRecord],
    judge_labels: dict[str, dict[str, str | None]],
    boot: tuple[int, int],
    declared: Sequence[str] | None = None,
) -> RaterRow | None:
    """Human-human agreement (alpha, Fleiss) and the judge+rater kappa matrix."""
    raters = sorted({r for it in items for r in it.ratings})
    if not raters:
        return None
    human = {r: [comparable_label(it.ratings.get(r)) for it in items] for r in raters}
    judges = {j: [labels.get(it.item_id) for it in items] for j, labels in judge_labels.items()}
    every = [v for col in [*human.values(), *judges.values()] for v in col]
    order = raters_order(every, [v for col in human.values() for v in col], declared)
    level: Literal["ordinal", "nominal"] = "ordinal" if order else "nominal"
    agree = rater_agreement(
        pd.DataFrame(human), level=level, order=order, n_boot=boot[0], seed=boot[1]
    )
    axes = with_extras(order, every) if order else None
    matrix = kappa_matrix(pd.DataFrame({**judges, **human}), order=axes)
    values = [
        [None if v is None else float(v) for v in row]
        for row in matrix.to_numpy(dtype=object, na_value=None).tolist()
    ]
    return RaterRow(
        dataset=dataset,
        raters=raters,
        level=level,
        n_items=agree.n_items,
        n_complete=agree.n_complete,
        krippendorff_alpha=agree.krippendorff_alpha,
        fleiss_kappa=agree.fleiss_kappa,
        ci=agree.ci,
        kappa_names=[str(c) for c in matrix.columns],
        kappa=values,
    )


def item_metrics(
    items: Sequence[ItemRecord],
    judgments: Sequence[ItemJudgmentRecord],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    label_orders: Mapping[str, Sequence[str]] | None = None,
    calibration: CalibrationOptions | None = None,
) -> ItemsReport:
    """Every judge of every items dataset against gold, raters and itself (samples).

    `label_orders`: dataset -> its labels in order (lowest first), declared by the
    dataset's `label_order` or its judges' prompts; labels that are all integers are
    ordinal without one. `calibration`: the spec's `[calibration]` table (bins, fit split)."""
    boot = (n_boot, seed)
    orders = label_orders or {}
    rows: list[ItemJudgeRow] = []
    raters: list[RaterRow] = []
    panels: list[PanelRow] = []
    calibrated: list[CalibrationRow] = []
    for dataset in dict.fromkeys(it.dataset for it in items):
        subset = [it for it in items if it.dataset == dataset]
        by_judge: dict[str, list[ItemJudgmentRecord]] = {}
        for r in judgments:
            if r.dataset == dataset:
                by_judge.setdefault(r.judge_id, []).append(r)
        declared = orders.get(dataset)
        rows += _judge_rows(dataset, subset, by_judge, boot, declared)
        majority, votes = _majority_rows(dataset, subset, by_judge, boot, declared)
        rows += majority
        found = calibration_rows(dataset, subset, by_judge, boot=boot, options=calibration)
        rows, calibrated = with_calibration(rows, found), [*calibrated, *found]
        if subset and subset[0].pairwise:
            continue
        labels = {
            j: {r.item_id: comparable_label(r.label) for r in recs if r.status is Status.OK}
            for j, recs in by_judge.items()
            if sample_base(j) is None
        }
        rater = _rater_row(dataset, subset, {**labels, **votes}, boot, declared)
        order_of = partial(resolve_order, declared=declared)
        voters = without_juries({**labels, **votes}, by_judge)  # a jury repeats its members
        panels += dataset_panels(dataset, subset, voters, order_of=order_of, boot=boot)
        if rater is not None:
            raters.append(rater)
    return ItemsReport(
        rows=rows, raters=raters, panels=panels, calibration=calibrated, n_boot=n_boot, seed=seed
    )
