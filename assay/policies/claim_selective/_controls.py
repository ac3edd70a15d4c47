"""Shortcut controls, perturbations and overlap, and the agreement of a gold
re-audit.

- Majority controls predict each response's action as the majority `gold_action` of the
  `train` split under a key (intent; source and intent; source and claim type), ties by
  full, partial, conflict, abstain, unseen keys backing off to the overall train
  majority. They decide no claim, so every certificate metric is null.
- Perturbations: no intent (every response in the fallback family), and intents shuffled
  with the recorded random state (numpy PCG64).
- Overlap: exact matches of question, normalised source URL and normalised evidence text
  between train and an evaluation split; the *novel* slice keeps rows sharing neither URL
  nor evidence text with train. These compare dataset texts, never decide anything.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.core.answer_fields import GOLD_ACTIONS
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import METRIC_NAMES, confusion
from assay.policies.engine._numbers import Ratio, no_gold, ratio

CONTROL_KEYS: dict[str, tuple[str, ...]] = {
    "majority_intent": ("intent",),
    "majority_source_intent": ("source", "intent"),
    "majority_source_claim_type": ("source", "claim_type"),
}
NOT_APPLICABLE = "not_applicable"


class ControlResult(BaseModel):
    """A control's predicted actions and metrics (certificate metrics null)."""

    model_config = ConfigDict(frozen=True)

    name: str
    key: list[str]
    fallback: str | None
    predictions: list[tuple[str, str, str]]
    metrics: dict[str, Ratio]
    confusion: dict[str, dict[str, int]]


def majority_action(golds: Iterable[str]) -> str | None:
    """The most frequent action; ties by the order full, partial, conflict, abstain."""
    counts = Counter(golds)
    if not counts:
        return None
    return max(GOLD_ACTIONS, key=lambda a: (counts[a], -GOLD_ACTIONS.index(a)))


def _key(response: ResponseInput, fields: Sequence[str]) -> tuple[str | None, ...]:
    return tuple(getattr(response, f) for f in fields)


def majority_control(
    train: Iterable[ResponseInput], evaluation: Iterable[ResponseInput], name: str
) -> ControlResult:
    """The control `name` (a key of CONTROL_KEYS) fitted on `train`, scored on `evaluation`."""
    fields = CONTROL_KEYS[name]
    labelled = [r for r in train if r.gold_action is not None]
    by_key: dict[tuple[str | None, ...], list[str]] = {}
    for r in labelled:
        by_key.setdefault(_key(r, fields), []).append(str(r.gold_action))
    fallback = majority_action(str(r.gold_action) for r in labelled)
    rows = list(evaluation)
    predictions = []
    for r in rows:
        predicted = majority_action(by_key.get(_key(r, fields), [])) or fallback
        predictions.append((r.dataset, r.answer_id, predicted or "abstain"))
    golds = [r.gold_action for r in rows]
    with_gold = sum(g is not None for g in golds)
    correct = sum(p[2] == g for p, g in zip(predictions, golds, strict=True))
    accuracy = no_gold() if fallback is None or with_gold == 0 else ratio(correct, with_gold)
    null = Ratio(numerator=0, denominator=0, value=None, null_reason=NOT_APPLICABLE)
    metrics = {m: null for m in METRIC_NAMES} | {"action_accuracy": accuracy}
    return ControlResult(
        name=name,
        key=list(fields),
        fallback=fallback,
        predictions=predictions,
        metrics=metrics,
        confusion=confusion((p[2], g) for p, g in zip(predictions, golds, strict=True)),
    )


def without_intents(responses: Iterable[ResponseInput]) -> list[ResponseInput]:
    """The no-intent perturbation: every response falls to the fallback family."""
    return [r.model_copy(update={"intent": None}) for r in responses]


def shuffle_intents(
    responses: Iterable[ResponseInput], random_state: int = 0
) -> list[ResponseInput]:
    """The intent-shuffled perturbation: intents permuted across responses (PCG64)."""
    rows = list(responses)
    order = np.random.Generator(np.random.PCG64(random_state)).permutation(len(rows))
    return [
        r.model_copy(update={"intent": rows[int(j)].intent})
        for r, j in zip(rows, order, strict=True)
    ]


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")
_SPACES = re.compile(r"\s+")


def normalise_url(url: str | None) -> str | None:
    """Lower case, without scheme, leading `www.`, fragment or trailing `/`."""
    if not url or not url.strip():
        return None
    text = _SCHEME.sub("", url.strip().lower()).split("#", 1)[0]
    return text.removeprefix("www.").rstrip("/") or None


def normalise_text(text: str | None) -> str | None:
    """NFKC, lower case, whitespace collapsed."""
    if text is None:
        return None
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
    return folded or None


class OverlapReport(BaseModel):
    """Share of evaluation rows whose field also occurs in train (count / n)."""

    model_config = ConfigDict(frozen=True)

    question: Ratio
    source_url: Ratio
    evidence_text: Ratio


def _seen(train: Sequence[ResponseInput]) -> tuple[set[str], set[str], set[str]]:
    return (
        {r.question for r in train if r.question is not None},
        {u for r in train if (u := normalise_url(r.source_url)) is not None},
        {t for r in train if (t := normalise_text(r.evidence_text)) is not None},
    )


def overlap(train: Iterable[ResponseInput], evaluation: Iterable[ResponseInput]) -> OverlapReport:
    """Question (exact), source URL and evidence text (normalised) overlap with train."""
    questions, urls, texts = _seen(list(train))
    rows = list(evaluation)
    return OverlapReport(
        question=ratio(sum(r.question in questions for r in rows if r.question), len(rows)),
        source_url=ratio(sum(normalise_url(r.source_url) in urls for r in rows), len(rows)),
        evidence_text=ratio(sum(normalise_text(r.evidence_text) in texts for r in rows), len(rows)),
    )


def novel(
    train: Iterable[ResponseInput], evaluation: Iterable[ResponseInput]
) -> list[ResponseInput]:
    """Rows whose normalised URL and evidence text both never occur in train."""
    _, urls, texts = _seen(list(train))
    return [
        r
        for r in evaluation
        if normalise_url(r.source_url) not in urls and normalise_text(r.evidence_text) not in texts
    ]


class AuditAgreement(BaseModel):
    """Agreement of two labellings of the same items (e.g. weak vs audited gold)."""

    model_config = ConfigDict(frozen=True)

    n: int
    agreement: Ratio
    kappa: float | None


def audit_agreement(matrix: Sequence[Sequence[int]], labels: Sequence[str]) -> AuditAgreement:
    """Observed agreement and Cohen's κ (scikit-learn, via assay.metrics) of a square
    count matrix: rows the first labelling, columns the second, in `labels` order."""
    from assay.metrics import cohen_kappa

    first: list[str] = []
    second: list[str] = []
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            first += [labels[i]] * count
            second += [labels[j]] * count
    agree = sum(matrix[i][i] for i in range(len(labels)))
    return AuditAgreement(
        n=len(first), agreement=ratio(agree, len(first)), kappa=cohen_kappa(first, second)
    )


__all__ = [
    "CONTROL_KEYS",
    "AuditAgreement",
    "ControlResult",
    "OverlapReport",
    "audit_agreement",
    "majority_action",
    "majority_control",
    "normalise_text",
    "normalise_url",
    "novel",
    "overlap",
    "shuffle_intents",
    "without_intents",
]
