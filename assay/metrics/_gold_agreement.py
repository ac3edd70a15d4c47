"""Each verifier's verdicts against gold claim labels: confusion matrix, accuracy, F1."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import pandas as pd
from pydantic import Field

from assay.metrics._claim_records import (
    GOLD_LABELS,
    MISSING,
    NOT_SUPPORTED,
    OK,
    SUPPORTED,
    UNSCORED_STATUSES,
    VERDICT_LABELS,
    ClaimInput,
    ClaimKey,
    VerdictEntry,
    VerificationInput,
)
from assay.metrics._claim_universe import ClaimUniverse, claim_universe
from assay.metrics._metric_rows import RowsReport, VerifierRow, safe_div
from assay.metrics._pooling import pooled_and_per_dataset

UnscoredPolicy = Literal["exclude", "wrong"]
ConfusionDict: TypeAlias = dict[str, dict[str, int]]
_MATRIX_FIELDS = ("confusion", "label_confusion")


def positive_labels(positive: str | Iterable[str]) -> frozenset[str]:
    """The gold labels counted as the positive class ("supported")."""
    labels = frozenset((positive,) if isinstance(positive, str) else positive)
    if not labels:
        raise ValueError("positive must name at least one gold label")
    return labels


def confusion_frame(confusion: ConfusionDict, index: str, columns: str) -> pd.DataFrame:
    """A nested `row -> column -> count` dict as an int64 DataFrame (absent cells 0)."""
    rows = list(confusion)
    cols: list[str] = []
    for counts in confusion.values():
        cols += [c for c in counts if c not in cols]
    frame = pd.DataFrame(
        [[confusion[r].get(c, 0) for c in cols] for r in rows], index=rows, columns=cols
    ).astype("int64")
    frame.index.name = index
    frame.columns.name = columns
    return frame


class GoldRow(VerifierRow):
    """One verifier against gold claim labels (binary: supported vs not supported)."""

    unscored: UnscoredPolicy = Field(description="How unscored claims count: exclude or wrong.")
    n: int = Field(description="Claims in the confusion matrix.")
    n_gold: int = Field(description="Claims with a gold label (scored or not).")
    n_scored: int = Field(description="Gold claims this verifier scored.")
    n_unscored: int = Field(description="Gold claims this verifier did not score.")
    n_excluded_unscored: int = Field(description="n_unscored if unscored='exclude', else 0.")
    n_no_gold: int = Field(description="Claims verified by this verifier with no gold label.")
    tp: int = Field(description="Gold positive, predicted supported.")
    fp: int = Field(description="Gold negative, predicted supported (or unscored if 'wrong').")
    fn: int = Field(description="Gold positive, not predicted supported (or unscored if 'wrong').")
    tn: int = Field(description="Gold negative, not predicted supported.")
    accuracy: float | None = Field(description="(tp + tn) / n.")
    balanced_accuracy: float | None = Field(description="None unless both gold classes occur.")
    precision: float | None = Field(description="tp / (tp + fp).")
    recall: float | None = Field(description="tp / (tp + fn).")
    f1: float | None = Field(description="Harmonic mean of precision and recall.")
    confusion: ConfusionDict = Field(
        description="gold ('supported' | 'not_supported') -> predicted -> count."
    )
    label_confusion: ConfusionDict = Field(
        description="Raw gold label -> verdict label, or status when unscored -> count; "
        "every gold claim, whatever `unscored` says."
    )

    def confusion_frame(self) -> pd.DataFrame:
        """The 2x2 matrix: index gold, columns predicted."""
        return confusion_frame(self.confusion, "gold", "predicted")

    def label_confusion_frame(self) -> pd.DataFrame:
        return confusion_frame(self.label_confusion, "gold", "verdict")


class GoldReport(RowsReport[GoldRow]):
    """One `GoldRow` per verifier (sorted)."""

    positive: list[str] = Field(description="The gold labels counted as supported.")
    unscored: UnscoredPolicy = Field(description="How unscored claims count: exclude or wrong.")

    def to_frame(self) -> pd.DataFrame:
        """One row per verifier; the nested confusion dicts are left out (see `row()`)."""
        cols = [c for c in GoldRow.model_fields if c not in _MATRIX_FIELDS]
        return pd.DataFrame(
            [r.model_dump(exclude=set(_MATRIX_FIELDS)) for r in self.rows], columns=cols
        )

    def row(self, verifier_id: str) -> GoldRow:
        for r in self.rows:
            if r.verifier_id == verifier_id:
                return r
        raise KeyError(verifier_id)

    def confusion_frame(self, verifier_id: str) -> pd.DataFrame:
        return self.row(verifier_id).confusion_frame()


def gold_metrics(
    verifications: VerificationInput,
    *,
    claims: ClaimInput | None = None,
    positive: str | Iterable[str] | None = None,
    unscored: UnscoredPolicy = "exclude",
) -> GoldReport:
    """Each verifier's verdicts against gold claim labels.

    Gold labels come from the verifications' `gold_label` (and from `claims`, if given);
    a gold label in `positive` (default "supported") is the positive class, any other
    gold label negative; claims with no gold label are skipped. Without `positive`, a gold
    label outside `GOLD_LABELS` is a ValueError (a "yes" would count silently as negative);
    naming `positive` takes that mapping on. The prediction is positive iff the
    verdict is "supported" (unsupported and contradicted are negative).

    `unscored="exclude"` (default): metrics over gold claims whose verification is ok;
    the rest are counted in `n_excluded_unscored`. `unscored="wrong"`: every gold claim
    counts, an unscored one as an error (predicted the opposite of its gold class: a false
    negative if gold is positive, a false positive if not).
    """
    if unscored not in ("exclude", "wrong"):
        raise ValueError(f"unscored must be 'exclude' or 'wrong', got {unscored!r}")
    pos = positive_labels(SUPPORTED if positive is None else positive)
    u = claim_universe(verifications, None, claims, with_gold=True)
    if positive is None:
        _check_gold_labels(u.gold.values())
    rows = [
        _gold_row(part, vid, name, pos, unscored)
        for name, part in pooled_and_per_dataset(u, u.datasets(), ClaimUniverse.subset)
        for vid in sorted(u.verdicts)
    ]
    return GoldReport(rows=rows, positive=sorted(pos), unscored=unscored)


def _check_gold_labels(labels: Iterable[str]) -> None:
    """An unknown gold label would count silently as negative under the default mapping."""
    unknown = sorted(set(labels) - set(GOLD_LABELS))
    if unknown:
        shown = ", ".join(repr(x) for x in unknown[:5])
        raise ValueError(
            f"gold labels {shown} are not gold labels assay knows ({', '.join(GOLD_LABELS)}); "
            "map them, or name the positive ones with `positive=` (every other label is "
            "then negative)"
        )


@dataclass(slots=True)
class _Confusion:
    """The binary confusion matrix, and gold claims this verifier did not score."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    n_unscored: int = 0

    def add(self, gold: bool, predicted: bool) -> None:
        if gold and predicted:
            self.tp += 1
        elif gold:
            self.fn += 1
        elif predicted:
            self.fp += 1
        else:
            self.tn += 1

    def scores(self) -> dict[str, Any]:
        """The counts, and every rate computed from them (None where undefined)."""
        tp, fp, fn, tn = self.tp, self.fp, self.fn, self.tn
        n = tp + fp + fn + tn
        recall = safe_div(tp, tp + fn)
        specificity = safe_div(tn, tn + fp)
        balanced = None if recall is None or specificity is None else (recall + specificity) / 2
        return {
            "n": n,
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "tn": tn,
            "accuracy": safe_div(tp + tn, n),
            "balanced_accuracy": balanced,
            "precision": safe_div(tp, tp + fp),
            "recall": recall,
            "f1": safe_div(2 * tp, 2 * tp + fp + fn),
            "confusion": {
                SUPPORTED: {SUPPORTED: tp, NOT_SUPPORTED: fn},
                NOT_SUPPORTED: {SUPPORTED: fp, NOT_SUPPORTED: tn},
            },
        }


def _gold_counts(
    u: ClaimUniverse, per_claim: dict[ClaimKey, VerdictEntry], pos: frozenset[str], unscored: str
) -> tuple[_Confusion, ConfusionDict]:
    c = _Confusion()
    raw: ConfusionDict = {}
    for ck in sorted(u.gold):
        g_label = u.gold[ck]
        v = per_claim.get(ck)
        scored = v is not None and v.status == OK
        verdict = MISSING if v is None else str(v.label) if scored else v.status
        cell = raw.setdefault(g_label, {})
        cell[verdict] = cell.get(verdict, 0) + 1
        gold = g_label in pos
        if scored:
            c.add(gold, verdict == SUPPORTED)
            continue
        c.n_unscored += 1
        if unscored != "exclude":
            c.add(gold, not gold)  # counted as wrong
    return c, raw


def _gold_row(
    u: ClaimUniverse, vid: str, dataset: str, pos: frozenset[str], unscored: UnscoredPolicy
) -> GoldRow:
    per_claim = u.verdicts[vid]
    c, raw = _gold_counts(u, per_claim, pos, unscored)
    return GoldRow(
        verifier_id=vid,
        **u.meta[vid].row_fields(),
        dataset=dataset,
        unscored=unscored,
        n_gold=len(u.gold),
        n_scored=len(u.gold) - c.n_unscored,
        n_unscored=c.n_unscored,
        n_excluded_unscored=c.n_unscored if unscored == "exclude" else 0,
        n_no_gold=sum(1 for ck in per_claim if ck not in u.gold),
        **c.scores(),
        label_confusion=_ordered_confusion(raw),
    )


def _label_order(labels: Iterable[str], known: Sequence[str]) -> list[str]:
    present = set(labels)
    return [k for k in known if k in present] + sorted(present - set(known))


def _ordered_confusion(raw: ConfusionDict) -> ConfusionDict:
    cols = _label_order(
        (c for counts in raw.values() for c in counts), (*VERDICT_LABELS, *UNSCORED_STATUSES)
    )
    return {g: {c: raw[g][c] for c in cols if c in raw[g]} for g in _label_order(raw, GOLD_LABELS)}
