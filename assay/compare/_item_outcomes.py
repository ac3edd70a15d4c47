"""Per-item outcomes of judges on items datasets (items.jsonl + item_judgments.jsonl).

The conventions of the run's items metrics (`_item_metrics`): a judgment that is not ok
(or missing) gives no verdict and the item is left out for that judge; a comparison of
two judges is over the items both gave a verdict on (`n`).

- `accuracy` (items with a gold label): 1 when the label equals the gold label, else 0;
  McNemar's test.
- `balanced_accuracy`, `macro_f1`, `cohen_kappa`: from the confusion matrix of labels
  against gold (scikit-learn's definitions).
- ordinal labels (an order the runs' datasets or judges' prompts declare, else labels
  that are all integers; `assay.metrics._ordinal`): `linear_kappa`, `quadratic_kappa`,
  `ordinal_alpha`, `mae_rank`, from the confusion matrix of ranks, over the items whose
  label and gold label are both in the order. Datasets declaring different orders are
  compared without them (a note says so).
- `mae`, `pearson`, `spearman` (items with a gold score): the judge's raw score on the
  prompt's scale (else its score) against the gold score.
- pairwise items, judged in both orders (`ab`, `ba`), over the items with a verdict in
  both: `accuracy` per item is the share of its two verdicts (preferences mapped back to
  A/B) equal to the gold preference (0, 0.5 or 1: bootstrap p); `position_consistency`
  is 1 when both orders gave the same preference, McNemar's test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from assay.compare._load import Gold, ItemKey, LoadedRun, VoteKey
from assay.compare._universe import Common, DisplayId, common_keys, merge_gold
from assay.metrics._majority import Vote
from assay.metrics._ordinal import ORDINAL_STATISTICS, resolve_order, with_extras
from assay.metrics._paired_metrics import MetricOutcomes
from assay.metrics._paired_stats import (
    PairedStatistic,
    confusion_statistic,
    mean_of,
    ordinal_statistic,
    pearson_of,
    spearman_of,
)

CATEGORICAL = ("accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa")
NUMERIC = ("mae", "pearson", "spearman")
Labels = list[str | None]


@dataclass
class LabelTable:
    """Single-response items compared: gold, each judge's labels (None: failed or
    missing) and each human rater's labels, in `keys` order."""

    keys: list[ItemKey]
    gold: list[Gold]
    judges: dict[str, Labels] = field(default_factory=dict)
    scores: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    orders: dict[str, list[str]] = field(default_factory=dict)
    """dataset -> its declared label order."""
    declared: list[str] | None = None
    """The one declared order of the datasets compared (None: none, or they differ)."""
    probabilities: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    juries: set[str] = field(default_factory=set)
    """Judges that are juries (`[[juries]]`): left out of panels."""

    def raters(self) -> dict[str, Labels]:
        names = sorted({name for g in self.gold for name, _ in g.ratings})
        return {n: [dict(g.ratings).get(n) for g in self.gold] for n in names}


def _judges_of(run: LoadedRun, pairwise: bool) -> list[str]:
    assert run.items is not None
    return [
        j
        for j in sorted(run.items.votes)
        if any((len(k) == 3) == pairwise for k in run.items.votes[j])
    ]


def _common(
    runs: Sequence[LoadedRun], pairwise: bool, strict: bool, notes: list[str]
) -> tuple[Common[ItemKey], dict[ItemKey, Gold]]:
    kind = "pairwise items" if pairwise else "items"
    golds = []
    for run in runs:
        assert run.items is not None
        golds.append((run, {k: g for k, g in run.items.gold.items() if g.pairwise == pairwise}))
    common = common_keys(kind, [(r, set(g)) for r, g in golds], strict=strict, notes=notes)
    return common, merge_gold(kind[:-1], golds)


def label_table(
    runs: Sequence[LoadedRun], display: DisplayId, *, strict: bool, notes: list[str]
) -> LabelTable | None:
    """Labels and scores of every single-response judge on the items all runs share."""
    with_items = [r for r in runs if r.items is not None and _judges_of(r, False)]
    if not with_items:
        return None
    common, gold = _common(with_items, False, strict, notes)
    table = LabelTable(keys=common.keys, gold=[gold[k] for k in common.keys])
    _declared_orders(table, with_items, notes)
    for run in with_items:
        assert run.items is not None
        for judge in _judges_of(run, False):
            votes = run.items.votes[judge]
            got = list(map(votes.get, common.keys))
            table.judges[display(run, judge)] = [v.label if v and v.ok else None for v in got]
            if judge in run.items.juries:
                table.juries.add(display(run, judge))
            table.scores[display(run, judge)] = np.array(
                [v.score if v and v.ok and v.score is not None else np.nan for v in got]
            )
            table.probabilities[display(run, judge)] = np.array(
                [v.probability if v and v.ok and v.probability is not None else np.nan for v in got]
            )
    return table


def _declared_orders(table: LabelTable, runs: Sequence[LoadedRun], notes: list[str]) -> None:
    """Each compared dataset's declared order, and the one order of them all, if any."""
    datasets = {d for d, _ in table.keys}
    for run in runs:
        assert run.items is not None
        notes += [n for n in run.items.order_notes if n not in notes]
        for dataset, order in run.items.label_orders.items():
            if dataset in datasets:
                table.orders.setdefault(dataset, order)
    distinct = {tuple(resolve_order([], o) or []): d for d, o in table.orders.items()}
    if len(distinct) == 1:
        table.declared = list(next(iter(distinct)))
    elif distinct:
        notes.append(
            f"datasets {', '.join(sorted(distinct.values()))} declare different label "
            "orders: compared without ordinal statistics"
        )


def label_order(
    labels: Iterable[str], declared: Sequence[str] | None = None
) -> tuple[list[str], bool]:
    """(labels in order, ordinal?): a declared order (labels outside it after it), else
    integer labels ("1".."5") in numeric order (the run metrics' rule); others are
    sorted as strings."""
    seen = set(labels)
    order = resolve_order(seen, declared)
    return (with_extras(order, seen), True) if order else (sorted(seen), False)


def _codes(labels: Sequence[str | None], index: dict[str, int]) -> NDArray[np.int64]:
    """Label codes; 0 for a missing label (such items are never in `defined`)."""
    return np.array([0 if v is None else index[v] for v in labels], dtype=np.int64)


def categorical_outcomes(table: LabelTable) -> list[MetricOutcomes]:
    """`accuracy`, `balanced_accuracy`, `macro_f1`, `cohen_kappa` (and the ordinal
    statistics for ordinal labels) against gold labels, per judge over the items it
    labelled."""
    gold_labels = [g.label for g in table.gold]
    has_gold = np.array([x is not None for x in gold_labels], dtype=bool)
    defined = {j: has_gold & _labelled(v) for j, v in table.judges.items()}
    defined = {j: mask for j, mask in defined.items() if mask.any()}
    if not defined:
        return []
    seen = {x for j in defined for x in table.judges[j] if x is not None}
    seen |= {x for x in gold_labels if x is not None}
    labels, _ = label_order(seen, table.declared)
    names = CATEGORICAL
    index = {label: i for i, label in enumerate(labels)}
    gold = _codes(gold_labels, index)
    stats: dict[str, dict[str, PairedStatistic]] = {name: {} for name in names}
    correct: dict[str, NDArray[np.float64]] = {}
    for j in defined:
        pred = _codes(table.judges[j], index)
        correct[j] = ((pred == gold) & defined[j]).astype(np.float64)
        for name in names:  # accuracy too: one confusion table a judge serves them all
            stats[name][j] = confusion_statistic(name, gold, pred, len(labels), ("labels", j))
    nominal = [
        MetricOutcomes(name, stats[name], defined, correct if name == "accuracy" else None)
        for name in names
    ]
    order = resolve_order(seen, table.declared)
    return nominal + (ordinal_outcomes(table, order, defined, labels) if order else [])


def ordinal_outcomes(
    table: LabelTable,
    order: Sequence[str],
    labelled: dict[str, NDArray[np.bool_]],
    axes: Sequence[str] = (),
) -> list[MetricOutcomes]:
    """The ordinal statistics of each judge over the items it labelled whose label and
    gold label are both in `order` (ranks: position in it). When the nominal confusion
    axes are the order itself (no label outside it), the codes are the nominal ones and
    share their family: one resampled confusion table serves all eight statistics."""
    family = "labels" if list(axes) == list(order) else "ranks"
    rank = {label: i for i, label in enumerate(order)}
    gold = np.array([rank.get(g.label, -1) if g.label else -1 for g in table.gold])
    stats: dict[str, dict[str, PairedStatistic]] = {name: {} for name in ORDINAL_STATISTICS}
    defined: dict[str, NDArray[np.bool_]] = {}
    for j, mask in labelled.items():
        pred = np.array([rank.get(x, -1) if x else -1 for x in table.judges[j]])
        inside = mask & (gold >= 0) & (pred >= 0)
        if not inside.any():
            continue
        defined[j] = inside
        g, p = np.where(gold >= 0, gold, 0), np.where(pred >= 0, pred, 0)
        for name in ORDINAL_STATISTICS:
            stats[name][j] = ordinal_statistic(name, g, p, len(order), (family, j))
    return [MetricOutcomes(name, stats[name], defined) for name in ORDINAL_STATISTICS if defined]


def _labelled(labels: Labels) -> NDArray[np.bool_]:
    return np.array([x is not None for x in labels], dtype=bool)


def numeric_outcomes(table: LabelTable) -> list[MetricOutcomes]:
    """`mae`, `pearson`, `spearman` of scores vs gold scores, over the items scored."""
    gold = np.array([np.nan if g.score is None else g.score for g in table.gold])
    judges = {j: s for j, s in table.scores.items() if (~np.isnan(s) & ~np.isnan(gold)).any()}
    if not judges:
        return []
    defined = {j: ~np.isnan(s) & ~np.isnan(gold) for j, s in judges.items()}
    error = {j: np.nan_to_num(np.abs(s - gold)) for j, s in judges.items()}
    return [
        MetricOutcomes("mae", {j: mean_of(e, ("error", j)) for j, e in error.items()}, defined),
        MetricOutcomes(
            "pearson", {j: pearson_of(s, gold, ("pearson", j)) for j, s in judges.items()}, defined
        ),
        MetricOutcomes(
            "spearman",
            {j: spearman_of(s, gold, ("spearman", j)) for j, s in judges.items()},
            defined,
        ),
    ]


def pairwise_outcomes(
    runs: Sequence[LoadedRun], display: DisplayId, *, strict: bool, notes: list[str]
) -> list[MetricOutcomes]:
    """`accuracy` vs gold preference and `position_consistency` of pairwise judges."""
    with_pairwise = [r for r in runs if r.items is not None and _judges_of(r, True)]
    if not with_pairwise:
        return []
    common, gold = _common(with_pairwise, True, strict, notes)
    wanted = [gold[k].preference for k in common.keys]
    has_gold = np.array([g is not None for g in wanted], dtype=bool)
    hits: dict[str, NDArray[np.float64]] = {}
    consistent: dict[str, NDArray[np.float64]] = {}
    both: dict[str, NDArray[np.bool_]] = {}
    for run in with_pairwise:
        assert run.items is not None
        for judge in _judges_of(run, True):
            j = display(run, judge)
            hits[j], consistent[j], both[j] = _pairwise_columns(
                run.items.votes[judge], common, wanted
            )
    universe = "pairwise item"
    metrics = [
        MetricOutcomes(
            "position_consistency",
            {j: mean_of(c, ("consistent", j)) for j, c in consistent.items()},
            both,
            binary=consistent,
            universe=universe,
        )
    ]
    if has_gold.any():
        accuracy = {j: mean_of(h, ("hits", j)) for j, h in hits.items()}
        defined = {j: has_gold & both[j] for j in hits}
        metrics.insert(0, MetricOutcomes("accuracy", accuracy, defined, universe=universe))
    return metrics


def _preference(vote: Vote | None) -> str | None:
    return vote.preference if vote is not None and vote.ok else None


def _pairwise_columns(
    votes: dict[VoteKey, Vote], common: Common[ItemKey], wanted: Sequence[str | None]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Per item: share of the two verdicts equal to gold, 1 if both orders agree, and
    whether both orders have a verdict."""
    ab = [_preference(votes.get((d, i, "ab"))) for d, i in common.keys]
    ba = [_preference(votes.get((d, i, "ba"))) for d, i in common.keys]
    rows = zip(ab, ba, wanted, strict=True)
    hits = [((a == g) + (b == g)) / 2 if g is not None else 0.0 for a, b, g in rows]
    consistent = [a == b for a, b in zip(ab, ba, strict=True)]
    both = [a is not None and b is not None for a, b in zip(ab, ba, strict=True)]
    return (
        np.array(hits, dtype=np.float64),
        np.array(consistent, dtype=np.float64),
        np.array(both, dtype=bool),
    )
