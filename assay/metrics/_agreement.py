"""Agreement between two verifiers (or a verifier and a recorded reference judge).

Over the claims both scored (status ok on both sides): raw agreement, Cohen's kappa and
the confusion matrix of their labels. Claims either side did not score are counted, never
compared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._factuality import (
    _V,
    NOT_SUPPORTED,
    SUPPORTED,
    VERDICT_LABELS,
    ClaimKey,
    ConfusionDict,
    VerificationInput,
    _confusion_frame,
    _latest_verifications,
)

_OK = "ok"


def _kappa(matrix: NDArray[np.float64]) -> float | None:
    """Cohen's kappa of a square confusion matrix; None when it is undefined (p_e == 1)."""
    n = float(matrix.sum())
    if n == 0:
        return None
    p_o = float(np.trace(matrix)) / n
    p_e = float((matrix.sum(axis=1) / n) @ (matrix.sum(axis=0) / n))
    if np.isclose(p_e, 1.0, rtol=0.0, atol=1e-12):
        return None
    return (p_o - p_e) / (1.0 - p_e)


def cohen_kappa(labels_a: Sequence[str], labels_b: Sequence[str]) -> float | None:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e) for two raters' labels of the same items.

    p_o is the observed agreement, p_e the agreement expected from the raters' marginal
    label frequencies. None for no items, or when p_e == 1 (both raters always use one
    and the same label).
    """
    if len(labels_a) != len(labels_b):
        raise ValueError(f"label sequences differ in length: {len(labels_a)} != {len(labels_b)}")
    cats = sorted(set(labels_a) | set(labels_b))
    index = {c: i for i, c in enumerate(cats)}
    matrix = np.zeros((len(cats), len(cats)), dtype=np.float64)
    for a, b in zip(labels_a, labels_b, strict=True):
        matrix[index[a], index[b]] += 1
    return _kappa(matrix)


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
    index = {label: i for i, label in enumerate(labels)}

    def label_of(v: _V) -> str:
        assert v.label is not None  # status ok implies a verdict label
        if binary:
            return SUPPORTED if v.label == SUPPORTED else NOT_SUPPORTED
        return v.label

    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    only_a = only_b = neither = 0
    keys = set(a) | set(b)
    for ck in keys:
        va, vb = a.get(ck), b.get(ck)
        ok_a = va is not None and va.status == _OK
        ok_b = vb is not None and vb.status == _OK
        if ok_a and ok_b and va is not None and vb is not None:
            matrix[index[label_of(va)], index[label_of(vb)]] += 1
        elif ok_a:
            only_a += 1
        elif ok_b:
            only_b += 1
        else:
            neither += 1
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
        confusion={
            la: {lb: int(matrix[i, j]) for j, lb in enumerate(labels)}
            for i, la in enumerate(labels)
        },
    )
