"""The metrics every claim-level policy has, needing no knowledge of its kind: the
decision and outcome mix, claim coverage, and — where the dataset gives gold fields —
action accuracy against `gold_action` and the precision/recall of expressed claims
against `gold_status` (a metric without its gold field is null with `no_gold`).
Intervals are Wilson's (statsmodels)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from assay.core.answer_fields import USABLE_GOLD
from assay.core.decisions import EXPRESSED, ClaimDecision, ResponseOutcome
from assay.policies.custom._guard import GuardedResponse
from assay.policies.engine._numbers import Ratio, no_gold, ratio, wilson

GOLD_OF = {
    ResponseOutcome.ANSWER_FULL: "full",
    ResponseOutcome.ANSWER_PARTIAL: "partial",
    ResponseOutcome.CONFLICT: "conflict",
    ResponseOutcome.ABSTAIN: "abstain",
}  # refuse matches no gold action


def _with_ci(r: Ratio, confidence: float) -> Ratio:
    if r.value is None or r.denominator == 0:
        return r
    return r.model_copy(
        update={"ci": wilson(r.numerator, r.denominator, confidence), "ci_method": "wilson"}
    )


def _gold_ratio(hits: int, total: int, has_gold: bool) -> Ratio:
    return ratio(hits, total) if has_gold else no_gold()


def metric_ratios(responses: list[GuardedResponse], confidence: float = 0.95) -> dict[str, Ratio]:
    """coverage, action_accuracy, assert_precision, expressed_precision, usable_recall."""
    claims = [c for r in responses for c in r.claims]
    expressed = [c for c in claims if c.decision in EXPRESSED]
    graded = [c for c in claims if c.claim.gold_status is not None]
    asserted_g = [c for c in graded if c.decision == ClaimDecision.ASSERT]
    expressed_g = [c for c in graded if c.decision in EXPRESSED]
    usable_g = [c for c in graded if c.claim.gold_status in USABLE_GOLD]
    with_action = [r for r in responses if r.response.gold_action is not None]
    found = {
        "coverage": ratio(len(expressed), len(claims)),
        "action_accuracy": _gold_ratio(
            sum(GOLD_OF.get(r.outcome) == r.response.gold_action for r in with_action),
            len(with_action),
            bool(with_action),
        ),
        "assert_precision": _gold_ratio(
            sum(c.claim.gold_status == "certified" for c in asserted_g),
            len(asserted_g),
            bool(graded),
        ),
        "expressed_precision": _gold_ratio(
            sum(c.claim.gold_status in USABLE_GOLD for c in expressed_g),
            len(expressed_g),
            bool(graded),
        ),
        "usable_recall": _gold_ratio(
            sum(c.decision in EXPRESSED for c in usable_g), len(usable_g), bool(graded)
        ),
    }
    return {k: _with_ci(v, confidence) for k, v in found.items()}


def common_metrics(responses: list[GuardedResponse], confidence: float = 0.95) -> dict[str, Any]:
    """metrics.json of a user policy: counts, mixes and `metrics` (name -> Ratio)."""
    claims = [c for r in responses for c in r.claims]
    decisions = Counter(c.decision.value for c in claims)
    outcomes = Counter(r.outcome.value for r in responses)
    return {
        "n_responses": len(responses),
        "n_claims": len(claims),
        "n_refused": outcomes.get(ResponseOutcome.REFUSE.value, 0),
        "n_guarded": sum(c.overridden is not None for c in claims),
        "decision_mix": {d.value: decisions.get(d.value, 0) for d in ClaimDecision},
        "outcome_mix": {o.value: outcomes.get(o.value, 0) for o in ResponseOutcome},
        "metrics": {
            k: v.model_dump(mode="json") for k, v in metric_ratios(responses, confidence).items()
        },
    }


def sliced(
    responses: list[GuardedResponse], by: str, confidence: float = 0.95
) -> list[dict[str, Any]]:
    """`common_metrics` per value of the response field `by` (None: the field is absent)."""
    groups: dict[str, list[GuardedResponse]] = {}
    for r in responses:
        value = getattr(r.response, by, None)
        groups.setdefault("null" if value is None else str(value), []).append(r)
    return [{"value": v, **common_metrics(rs, confidence)} for v, rs in sorted(groups.items())]


__all__ = ["GOLD_OF", "common_metrics", "metric_ratios", "sliced"]
