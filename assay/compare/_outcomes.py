"""Per-item outcomes of the ForceBench and factuality metrics, judges of every run aligned
on the items all runs share.

- `mvr`: per pair, violation 0/1 (a failed pair is a violation), McNemar's test;
  `fs`: per pair, the margin s_cal - s_raised (0 for a failed pair). Both over every pair.
- `factuality_macro`: per response, F(r) = supported / scored claims;
  `factuality_micro`: sum(supported) / sum(scored). Both over the responses where the
  verifier scored at least one claim (as the run metrics: others have no F).
- `balanced_accuracy` of a verifier: (recall + specificity) / 2 of "supported" against
  gold claim labels, over the gold claims it scored (unscored claims are left out, as in
  `gold_metrics`); undefined unless the gold holds both classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from assay.compare._load import LoadedRun
from assay.compare._universe import Common, DisplayId, common_keys, merge_gold
from assay.metrics._claim_records import OK, SUPPORTED, ClaimKey, ResponseKey
from assay.metrics._paired_metrics import MetricOutcomes
from assay.metrics._paired_stats import binary_balanced_accuracy, mean_of, ratio_of
from assay.metrics._response_scores import response_counts


def _aligned(pairs: pd.DataFrame, value: str, common: Common[tuple[str, str]]) -> pd.DataFrame:
    """pairs x judges matrix of one pair-table column, rows in `common` order."""
    wide = pairs.pivot(index=["dataset", "pair_id"], columns="judge_id", values=value)
    index = pd.MultiIndex.from_tuples(common.keys, names=["dataset", "pair_id"])
    return wide.reindex(index).astype(np.float64)


def force_outcomes(
    runs: Sequence[LoadedRun], display: DisplayId, *, strict: bool, notes: list[str]
) -> list[MetricOutcomes]:
    """`mvr` and `fs` of every ForceBench judge of every run."""
    with_force = [r for r in runs if r.force is not None]
    if not with_force:
        return []
    per_run = [
        (r, set(zip(r.force.pairs["dataset"], r.force.pairs["pair_id"], strict=True)))
        for r in with_force
        if r.force is not None
    ]
    common = common_keys("ForceBench pairs", per_run, strict=strict, notes=notes)
    violations: dict[str, np.ndarray] = {}
    margins: dict[str, np.ndarray] = {}
    for run in with_force:
        assert run.force is not None
        v = _aligned(run.force.pairs, "violation", common)
        m = _aligned(run.force.pairs, "margin", common)
        for judge in v.columns:
            violations[display(run, str(judge))] = v[judge].to_numpy()
            margins[display(run, str(judge))] = m[judge].to_numpy()
    everywhere = {j: np.ones(len(common), dtype=bool) for j in violations}
    mvr = {j: mean_of(x, ("violation", j)) for j, x in violations.items()}
    fs = {j: mean_of(x, ("margin", j)) for j, x in margins.items()}
    return [
        MetricOutcomes("mvr", mvr, everywhere, binary=violations, universe="pair"),
        MetricOutcomes("fs", fs, everywhere, universe="pair"),
    ]


def _response_columns(
    run: LoadedRun, verifier: str, common: Common[ResponseKey]
) -> tuple[np.ndarray, np.ndarray]:
    """(supported, scored) claim counts per common response."""
    assert run.facts is not None
    counts = response_counts(run.facts, verifier)
    row = {k: i for i, k in enumerate(run.facts.responses)}
    position = np.array([row[k] for k in common.keys], dtype=np.int64)
    supported = counts.n_supported[position].astype(np.float64)
    return supported, counts.n_scored[position].astype(np.float64)


def factuality_outcomes(
    runs: Sequence[LoadedRun], display: DisplayId, *, strict: bool, notes: list[str]
) -> list[MetricOutcomes]:
    """`factuality_macro`, `factuality_micro` and (with gold claims) `balanced_accuracy`
    of every verifier of every run."""
    with_facts = [r for r in runs if r.facts is not None]
    if not with_facts:
        return []
    per_run = [(r, set(r.facts.responses)) for r in with_facts if r.facts is not None]
    common = common_keys("factuality responses", per_run, strict=strict, notes=notes)
    macro, micro, defined = {}, {}, {}
    for run in with_facts:
        assert run.facts is not None
        for verifier in sorted(run.facts.verdicts):
            supported, scored = _response_columns(run, verifier, common)
            j = display(run, verifier)
            defined[j] = scored > 0
            f = np.divide(supported, scored, out=np.zeros_like(supported), where=scored > 0)
            macro[j] = mean_of(f, ("factuality", j))
            micro[j] = ratio_of(supported, scored, ("factuality_counts", j))
    metrics = [
        MetricOutcomes("factuality_macro", macro, defined, universe="response"),
        MetricOutcomes("factuality_micro", micro, defined, universe="response"),
    ]
    gold_runs = [r for r in with_facts if r.facts is not None and r.facts.gold]
    if gold_runs:
        metrics.append(_verifier_gold(gold_runs, display, strict=strict, notes=notes))
    return metrics


def _verifier_gold(
    runs: Sequence[LoadedRun], display: DisplayId, *, strict: bool, notes: list[str]
) -> MetricOutcomes:
    golds = [(r, r.facts.gold) for r in runs if r.facts is not None]
    common = common_keys("gold claims", [(r, set(g)) for r, g in golds], strict=strict, notes=notes)
    gold = merge_gold("claim", golds)
    positive = np.array([gold[k] == SUPPORTED for k in common.keys], dtype=bool)
    statistics, defined = {}, {}
    for run in runs:
        assert run.facts is not None
        for verifier, verdicts in sorted(run.facts.verdicts.items()):
            j = display(run, verifier)
            scored = np.zeros(len(common), dtype=bool)
            predicted = np.zeros(len(common), dtype=bool)
            for i, key in enumerate(common.keys):
                verdict = verdicts.get(key)
                scored[i] = verdict is not None and verdict.status == OK
                predicted[i] = scored[i] and verdict is not None and verdict.label == SUPPORTED
            defined[j] = scored
            statistics[j] = binary_balanced_accuracy(positive, predicted, ("claims", j))
    return MetricOutcomes("balanced_accuracy", statistics, defined, universe="gold claim")


__all__ = ["ClaimKey", "factuality_outcomes", "force_outcomes"]
