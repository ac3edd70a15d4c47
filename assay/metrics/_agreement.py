"""Agreement between two verifiers (or a verifier and a recorded reference judge).

Over the claims both scored (status ok on both sides): raw agreement, Cohen's kappa
(scikit-learn), Krippendorff's alpha (`krippendorff`) and the confusion matrix of their
labels. Claims either side did not score are counted, never compared.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._claim_records import (
    NOT_SUPPORTED,
    SUPPORTED,
    VERDICT_LABELS,
    ClaimKey,
    VerificationInput,
)
from assay.metrics._claim_records import VerdictEntry as _V
from assay.metrics._claim_records import latest_verifications as _latest_verifications
from assay.metrics._gold_agreement import ConfusionDict
from assay.metrics._gold_agreement import confusion_frame as _confusion_frame

_OK = "ok"


def _kappa(matrix: NDArray[np.float64]) -> float | None:
    """Cohen's kappa of a square confusion matrix (scikit-learn's `cohen_kappa_score`).

    None when there are no items or kappa is undefined (p_e == 1: both raters always use
    one and the same label).
    """
    if matrix.sum() == 0:
        return None
    from sklearn.metrics import cohen_kappa_score  # ~1 s to import: only when needed

    rows, cols = np.nonzero(matrix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the undefined case is reported as None
        value = cohen_kappa_score(
            rows,
            cols,
            labels=np.arange(len(matrix)),
            sample_weight=matrix[rows, cols],
            replace_undefined_by=np.nan,
        )
    return float(value) if np.isfinite(value) else None


def _alpha(matrix: NDArray[np.float64]) -> float | None:
    """Krippendorff's nominal alpha of two raters' confusion matrix (`krippendorff`).

    Each compared item is one unit with two values; None when there are no items or
    alpha is undefined (a single label used throughout).
    """
    if matrix.sum() == 0:
        return None
    import krippendorff

    size = len(matrix)
    rows, cols = np.nonzero(matrix)
    units = np.repeat(np.arange(len(rows)), matrix[rows, cols].astype(np.int64))
    counts = np.zeros((len(units), size), dtype=np.int64)
    np.add.at(counts, (np.arange(len(units)), rows[units]), 1)
    np.add.at(counts, (np.arange(len(units)), cols[units]), 1)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    except ValueError:  # "There has to be more than one value in the domain."
        return None
    return float(value) if np.isfinite(value) else None


def _label_matrix(labels_a: Sequence[str], labels_b: Sequence[str]) -> NDArray[np.float64]:
    if len(labels_a) != len(labels_b):
        raise ValueError(f"label sequences differ in length: {len(labels_a)} != {len(labels_b)}")
    cats = sorted(set(labels_a) | set(labels_b))
    index = {c: i for i, c in enumerate(cats)}
    matrix = np.zeros((len(cats), len(cats)), dtype=np.float64)
    for a, b in zip(labels_a, labels_b, strict=True):
        matrix[index[a], index[b]] += 1
    return matrix


def cohen_kappa(labels_a: Sequence[str], labels_b: Sequence[str]) -> float | None:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e) for two raters' labels of the same items.

    p_o is the observed agreement, p_e the agreement expected from the raters' marginal
    label frequencies. None for no items, or when p_e == 1 (both raters always use one
    and the same label). Computed by scikit-learn.
    """
    return _kappa(_label_matrix(labels_a, labels_b))


def krippendorff_alpha(labels_a: Sequence[str], labels_b: Sequence[str]) -> float | None:
    """Krippendorff's alpha (nominal) for two raters' labels of the same items.

    Unlike kappa it pools both raters' label frequencies for the expected disagreement,
    and corrects for small samples. None for no items or a single label throughout.
    Computed by the `krippendorff` package.
    """
    return _alpha(_label_matrix(labels_a, labels_b))


class AgreementReport(BaseModel):
    """How two verifiers' verdicts agree on the claims both scored."""

    model_config = ConfigDict(frozen=True)

    verifier_a: str
    verifier_b: str
    binary: bool = Field(description="Labels collapsed to supported / not_supported.")
    labels: list[str]
    n_claims: int = Field(description="Claims either side has a record for.")
    n: int = Field(description="Claims both scored (status ok on both sides).")
    n_only_a_scored: int
    n_only_b_scored: int
    n_neither_scored: int
    n_agree: int
    raw_agreement: float | None = Field(description="n_agree / n.")
    kappa: float | None = Field(description="Cohen's kappa; None when undefined.")
    krippendorff_alpha: float | None = Field(
        default=None, description="Krippendorff's nominal alpha; None when undefined."
    )
    confusion: ConfusionDict = Field(description="label of a -> label of b -> count.")

    def to_frame(self) -> pd.DataFrame:
        """One row: every scalar field (the confusion matrix is `confusion_frame()`)."""
        return pd.DataFrame([self.model_dump(exclude={"confusion", "labels"})])

    def confusion_frame(self) -> pd.DataFrame:
        """Index: a's label; columns: b's label."""
        return _confusion_frame(self.confusion, self.verifier_a, self.verifier_b)


def _pick(
    verdicts: dict[str, dict[ClaimKey, _V]], requested: str | None, side: str
) -> tuple[str, dict[ClaimKey, _V]]:
    if requested is not None:
        if requested not in verdicts:
            raise ValueError(
                f"verifier {requested!r} not in records_{side} (has {sorted(verdicts)})"
            )
        return requested, verdicts[requested]
    if len(verdicts) != 1:
        raise ValueError(
            f"records_{side} hold {len(verdicts)} verifiers {sorted(verdicts)}; "
            f"name one with verifier_{side}="
        )
    (vid, recs), *_ = verdicts.items()
    return vid, recs


def _label_of(v: _V, *, binary: bool) -> str:
    assert v.label is not None  # status ok implies a verdict label
    if binary:
        return SUPPORTED if v.label == SUPPORTED else NOT_SUPPORTED
    return v.label


def _cross_tab(
    a: dict[Any, _V], b: dict[Any, _V], labels: list[str], *, binary: bool
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], int, int, int]:
    """Label confusion over claims both scored ok, and the counts scored by one or none."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    only_a = only_b = neither = 0
    for ck in set(a) | set(b):
        va, vb = a.get(ck), b.get(ck)
        ok_a = va is not None and va.status == _OK
        ok_b = vb is not None and vb.status == _OK
        if ok_a and ok_b and va is not None and vb is not None:
            matrix[index[_label_of(va, binary=binary)], index[_label_of(vb, binary=binary)]] += 1
        elif ok_a:
            only_a += 1
        elif ok_b:
            only_b += 1
        else:
            neither += 1
    return matrix, only_a, only_b, neither


def agreement(
    records_a: VerificationInput,
    records_b: VerificationInput | None = None,
    *,
    verifier_a: str | None = None,
    verifier_b: str | None = None,
    binary: bool = False,
) -> AgreementReport:
    """Raw agreement, Cohen's kappa and confusion matrix of two verifiers' labels.

    `records_a` / `records_b` are verification records (models, dicts or a DataFrame);
    last record per key wins. A side holding one verifier needs no name; otherwise name it
    with `verifier_a` / `verifier_b`. With `records_b=None` both come from `records_a`.
    Claims are matched by (dataset, answer_id, claim_id) and compared only where both
    verifications have status ok. Labels are supported / unsupported / contradicted, or
    with `binary=True` supported / not_supported.
    """
    verdicts_a, _ = _latest_verifications(records_a)
    verdicts_b = verdicts_a if records_b is None else _latest_verifications(records_b)[0]
    if records_b is None and (verifier_a is None or verifier_b is None):
        raise ValueError("with records_b=None, name both verifier_a and verifier_b")
    vid_a, a = _pick(verdicts_a, verifier_a, "a")
    vid_b, b = _pick(verdicts_b, verifier_b, "b")

    labels = [SUPPORTED, NOT_SUPPORTED] if binary else list(VERDICT_LABELS)
    matrix, only_a, only_b, neither = _cross_tab(a, b, labels, binary=binary)
    keys = set(a) | set(b)
    n = int(matrix.sum())
    n_agree = int(np.trace(matrix))
    return AgreementReport(
        verifier_a=vid_a,
        verifier_b=vid_b,
        binary=binary,
        labels=labels,
        n_claims=len(keys),
        n=n,
        n_only_a_scored=only_a,
        n_only_b_scored=only_b,
        n_neither_scored=neither,
        n_agree=n_agree,
        raw_agreement=None if n == 0 else n_agree / n,
        kappa=_kappa(matrix.astype(np.float64)),
        krippendorff_alpha=_alpha(matrix.astype(np.float64)),
        confusion={
            la: {lb: int(matrix[i, j]) for j, lb in enumerate(labels)}
            for i, la in enumerate(labels)
        },
    )
