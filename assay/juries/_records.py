"""A jury's item judgments, built from its members' `item_judgments.jsonl` records.

Per item (pairwise: per order, so the jury's position consistency is measured too):
- the members present are those with an ok judgment carrying a vote (a label; pairwise a
  preference; `mean` a score); with fewer than the jury's quorum (`min_members`,
  default a majority of its members) the jury gives no verdict and no record is written:
  the item counts against its coverage, like a judge's failed judgment;
- majority / weighted: the label (pairwise: preference) with the greatest (weighted)
  count, ties to the earliest member in `members` order (`_vote.plurality`); a weighted
  jury also records the weighted means of its members' `raw_score` and `score`;
- mean: `raw_score` and `score` are the means of the members' raw scores (on the
  prompt's scale) and [0, 1] scores, each only when every member present has one (with
  neither, `raw_score` is the mean of integer labels), and `label` is the mean of the
  labels rounded half up when every label is an integer; a weighted jury whose members
  give scores and no labels votes the same way, with its weights.
A jury fitted on a split (`fit_on`) has no record on that split's items, so every table
and comparison judges it on the other items only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from assay.core.labels import comparable_label
from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord, JuryProvenance
from assay.juries._fit import inverse_mse_weights, log_odds_weights
from assay.juries._spec import JurySpec
from assay.juries._vote import integer_labels, plurality, round_half_up, weighted_mean

Slot = tuple[str, str | None]  # (item_id, order)
Kind = Literal["preference", "label", "score"]  # what members vote with on a dataset
_LABEL_OF: dict[tuple[str, str], str] = {
    ("A", "ab"): "a",
    ("B", "ab"): "b",
    ("A", "ba"): "b",
    ("B", "ba"): "a",
}


def member_value(record: ItemJudgmentRecord) -> float | None:
    """A member's score as the items metrics read it: raw score, else score, else an
    integer label."""
    if record.raw_score is not None:
        return record.raw_score
    if record.score is not None:
        return record.score
    ints = integer_labels([record.label])
    return float(ints[0]) if ints else None


def _vote_of(record: ItemJudgmentRecord, kind: Kind) -> str | float | None:
    if kind == "preference":
        return record.preference
    if kind == "score":
        return member_value(record)
    return comparable_label(record.label)


def _kind(jury: JurySpec, pairwise: bool, index: Mapping[Slot, Mapping[str, Any]]) -> Kind:
    """What the members vote with on a dataset: preferences (pairwise), scores (`mean`,
    or a weighted jury whose members give no label), else labels."""
    if pairwise:
        return "preference"
    labelled = any(r.label is not None for recs in index.values() for r in recs.values())
    return "score" if jury.vote == "mean" or not labelled else "label"


def _ballots(
    jury: JurySpec, recs: Mapping[str, ItemJudgmentRecord], kind: Kind
) -> dict[str, str | float]:
    """Member -> its vote, members in the jury's order, absent ones left out."""
    out: dict[str, str | float] = {}
    for member in jury.members:
        record = recs.get(member)
        vote = None if record is None else _vote_of(record, kind)
        if vote is not None:
            out[member] = vote
    return out


def _means(
    members: Sequence[str],
    recs: Mapping[str, ItemJudgmentRecord],
    weights: Mapping[str, float] | None,
) -> dict[str, Any]:
    """The (weighted) mean raw score and [0, 1] score of the members, each only when
    every member has one (a mean of two scales would mean nothing)."""
    ws = [weights[m] for m in members] if weights else None
    out: dict[str, Any] = {}
    for field in ("raw_score", "score"):
        values = [getattr(recs[m], field) for m in members]
        if members and all(v is not None for v in values):
            out[field] = weighted_mean([float(v) for v in values], ws)
    return out


def _mean_verdict(
    ballots: Mapping[str, str | float],
    recs: Mapping[str, ItemJudgmentRecord],
    weights: Mapping[str, float] | None,
) -> dict[str, Any]:
    out = _means(list(ballots), recs, weights)
    if not out:  # integer labels only: their mean on the labels' scale
        ws = [weights[m] for m in ballots] if weights else None
        out["raw_score"] = weighted_mean([float(v) for v in ballots.values()], ws)
    ints = integer_labels([recs[m].label for m in ballots])
    out["label"] = str(round_half_up(sum(ints) / len(ints))) if ints else None
    return out


def _label_verdict(
    ballots: Mapping[str, str | float],
    recs: Mapping[str, ItemJudgmentRecord],
    weights: Mapping[str, float] | None,
) -> dict[str, Any]:
    members = list(ballots)
    ws = [weights[m] for m in members] if weights else None
    label = plurality([str(ballots[m]) for m in members], ws)
    return {"label": label, **(_means(members, recs, weights) if weights else {})}


def _verdict(
    jury: JurySpec,
    recs: Mapping[str, ItemJudgmentRecord],
    slot: Slot,
    weights: Mapping[str, float] | None,
    kind: Kind,
) -> tuple[dict[str, Any], dict[str, str | float]] | None:
    """The jury's fields for one item (and order), or None below the quorum."""
    order = slot[1]
    ballots = _ballots(jury, recs, kind)
    if len(ballots) < jury.quorum:
        return None
    if order is not None:
        ws = [weights[m] for m in ballots] if weights else None
        preference = plurality([str(v) for v in ballots.values()], ws)
        label = "tie" if preference == "tie" else _LABEL_OF[(preference, order)]
        return {"preference": preference, "label": label}, ballots
    if kind == "score":
        return _mean_verdict(ballots, recs, weights), ballots
    return _label_verdict(ballots, recs, weights), ballots


def _index(
    judgments: Iterable[ItemJudgmentRecord], members: Sequence[str]
) -> dict[Slot, dict[str, ItemJudgmentRecord]]:
    """(item, order) -> member -> its ok judgment, for one dataset."""
    out: dict[Slot, dict[str, ItemJudgmentRecord]] = {}
    wanted = set(members)
    for r in judgments:
        if r.judge_id in wanted and r.status is Status.OK:
            out.setdefault((r.item_id, r.order), {})[r.judge_id] = r
    return out


def _slots(items: Sequence[ItemRecord]) -> list[tuple[ItemRecord, Slot]]:
    orders: tuple[str | None, ...] = ("ab", "ba")
    return [
        (it, (it.item_id, order)) for it in items for order in (orders if it.pairwise else (None,))
    ]


def fitted_weights(
    jury: JurySpec,
    items: Sequence[ItemRecord],
    index: Mapping[Slot, Mapping[str, Any]],
    kind: Kind,
) -> dict[str, float] | None:
    """Weights fitted on the `fit_on` items of one dataset (`_fit`); None without gold."""
    fit = [(it, slot) for it, slot in _slots(items) if it.split == jury.fit_on]
    columns = {
        m: [_vote_of(index[s][m], kind) if m in index.get(s, {}) else None for _, s in fit]
        for m in jury.members
    }
    gold_labels: list[str | None] = [
        it.gold_preference if it.pairwise else comparable_label(it.gold_label) for it, _ in fit
    ]
    if kind != "score" and any(g is not None for g in gold_labels):
        votes = {m: [None if v is None else str(v) for v in col] for m, col in columns.items()}
        return log_odds_weights(votes, gold_labels)
    gold_scores = [it.gold_score for it, _ in fit]
    if any(g is not None for g in gold_scores):
        values = {
            m: [member_value(index[s][m]) if m in index.get(s, {}) else None for _, s in fit]
            for m in jury.members
        }
        return inverse_mse_weights(values, gold_scores)
    return None


def _weights_for(
    jury: JurySpec,
    items: Sequence[ItemRecord],
    index: Mapping[Slot, Mapping[str, Any]],
    kind: Kind,
) -> dict[str, float] | None:
    if jury.weights is not None:
        return dict(jury.weights)
    return fitted_weights(jury, items, index, kind) if jury.fit_on is not None else None


def _dataset_records(
    jury: JurySpec, items: Sequence[ItemRecord], judgments: Sequence[ItemJudgmentRecord]
) -> list[ItemJudgmentRecord]:
    """One jury on one dataset; nothing when none of its members judged the dataset, or
    when its weights cannot be fitted (no gold on the fit split)."""
    index = _index(judgments, jury.members)
    if not index:
        return []
    kind = _kind(jury, items[0].pairwise, index)
    weights = _weights_for(jury, items, index, kind)
    if jury.vote == "weighted" and weights is None:
        return []
    out = []
    for it, slot in _slots(items):
        if jury.fit_on is not None and it.split == jury.fit_on:
            continue  # fitted on: judging it would report an in-sample number
        verdict = _verdict(jury, index.get(slot, {}), slot, weights, kind)
        if verdict is None:
            continue
        fields, ballots = verdict
        provenance = JuryProvenance(
            members=list(jury.members),
            vote=jury.vote,
            weights=weights,
            fit_on=jury.fit_on,
            min_members=jury.quorum,
            votes=ballots,
        )
        out.append(
            ItemJudgmentRecord(
                dataset=it.dataset,
                item_id=it.item_id,
                judge_id=jury.name,
                order=slot[1],
                status=Status.OK,
                jury=provenance,
                **fields,
            )
        )
    return out


def jury_records(
    items: Sequence[ItemRecord],
    judgments: Iterable[ItemJudgmentRecord],
    juries: Sequence[JurySpec],
) -> list[ItemJudgmentRecord]:
    """Every jury's judgments of every items dataset its members judged, computed from
    the members' latest records alone (no request)."""
    by_dataset: dict[str, list[ItemJudgmentRecord]] = {}
    for r in judgments:
        by_dataset.setdefault(r.dataset, []).append(r)
    out: list[ItemJudgmentRecord] = []
    for dataset in dict.fromkeys(it.dataset for it in items):
        subset = [it for it in items if it.dataset == dataset]
        for jury in juries:
            out += _dataset_records(jury, subset, by_dataset.get(dataset, []))
    return out
