"""`compare_runs`: judges of one or more run directories compared on the same items."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from assay._interrupts import beside
from assay._limits import MAX_BOOTSTRAP
from assay.adjudication import GoldOverlay, check_gold_source, gold_overlay
from assay.compare._calibration import calibration_outcomes, ece_bins, reliability_tables
from assay.compare._item_outcomes import (
    LabelTable,
    categorical_outcomes,
    label_table,
    numeric_outcomes,
    pairwise_outcomes,
)
from assay.compare._load import LoadedRun, collector_paused, load_run
from assay.compare._model import ComparedRun, ComparisonReport
from assay.compare._outcomes import factuality_outcomes, force_outcomes
from assay.compare._overlap import check_overlap
from assay.compare._panels import panel_table
from assay.compare._parts import (
    ablation_rows,
    claim_confusions,
    confusion_tables,
    force_points,
    kappa_table,
)
from assay.errors import AssayError
from assay.metrics._calibration_stats import DEFAULT_BINS
from assay.metrics._paired_metrics import JudgeEstimate, MetricOutcomes, compare_statistics
from assay.metrics._record_fields import ProducerMeta

METRIC_ORDER = (
    "mvr",
    "fs",
    "accuracy",
    "balanced_accuracy",
    "macro_f1",
    "cohen_kappa",
    "linear_kappa",
    "quadratic_kappa",
    "ordinal_alpha",
    "mae_rank",
    "mae",
    "pearson",
    "spearman",
    "brier",
    "ece",
    "position_consistency",
    "factuality_macro",
    "factuality_micro",
)
"""Every metric `assay compare` knows, in display order."""

MAJORITY_RULE = (
    "majority vote of the samples #0, #1, ...: the modal label of the ok samples (a tie "
    "goes to the label first in sorted order; a pairwise tie is 'tie'), the median score"
)


class _Names:
    """Judge ids as shown: prefixed with `<run name>/` when several runs use the id."""

    def __init__(self, runs: Sequence[LoadedRun], notes: list[str]) -> None:
        uses = Counter(j for run in runs for j in run.producers())
        self.shared = {j for j, n in uses.items() if n > 1}
        if self.shared:
            shown = [self(run, j) for run in runs for j in run.producers() if j in self.shared]
            notes.append(
                f"judge ids used by several runs are prefixed with the run name: {', '.join(shown)}"
            )

    def __call__(self, run: LoadedRun, judge: str) -> str:
        return f"{run.name}/{judge}" if judge in self.shared else judge


def _unique_run_names(runs: Sequence[LoadedRun]) -> None:
    """Runs with the same manifest name are named by their directory (or its path)."""
    for pick in (lambda r: r.run_dir.name, lambda r: str(r.run_dir)):
        counts = Counter(r.name for r in runs)
        for run in runs:
            if counts[run.name] > 1:
                run.name = pick(run)


def _outcomes(
    runs: Sequence[LoadedRun], names: _Names, strict: bool, notes: list[str]
) -> tuple[list[MetricOutcomes], LabelTable | None]:
    metrics = force_outcomes(runs, names, strict=strict, notes=notes)
    table = label_table(runs, names, strict=strict, notes=notes)
    if table is not None:
        metrics += categorical_outcomes(table) + numeric_outcomes(table)
        bins = ece_bins(runs, notes) if table.probabilities else DEFAULT_BINS
        metrics += calibration_outcomes(table.judges, table.probabilities, table.gold, bins=bins)
    metrics += pairwise_outcomes(runs, names, strict=strict, notes=notes)
    metrics += factuality_outcomes(runs, names, strict=strict, notes=notes)
    metrics.sort(key=lambda m: METRIC_ORDER.index(m.name))
    return metrics, table


def _select(metrics: list[MetricOutcomes], wanted: Sequence[str] | None) -> list[MetricOutcomes]:
    available = list(dict.fromkeys(m.name for m in metrics))
    if wanted:
        unknown = [w for w in wanted if w not in available]
        if unknown:
            raise AssayError(
                f"--metric {', '.join(unknown)}: not in these runs; "
                f"available: {', '.join(available) or 'none'}"
            )
        metrics = [m for m in metrics if m.name in wanted]
    if not any(len(m.statistics) >= 2 for m in metrics):
        shown = ", ".join(available) or "none"
        raise AssayError(
            f"no comparable metric: no metric has two judges to compare (metrics: {shown}); "
            "pass runs with two or more judges on the same items"
        )
    return metrics


def _overlay(run_dirs: Sequence[str | Path], gold: str) -> GoldOverlay:
    """The runs' adjudicated gold for `gold`. A missing or broken run is reported as
    such first, not as a run without a labels file."""
    from assay.runs.store._rundir import read_run_manifest

    if check_gold_source(gold) != "dataset":
        for run_dir in run_dirs:
            read_run_manifest(run_dir)
    return gold_overlay([Path(d) for d in run_dirs], gold)


def _gold_notes(runs: Sequence[LoadedRun], overlay: GoldOverlay) -> list[str]:
    """Where the items' gold came from, when it is not only the datasets'."""
    keys = {k for run in runs if run.items is not None for k in run.items.gold}
    note = overlay.note(keys)
    return [note] if note else []


def _check_settings(n_boot: int, seed: int, confidence: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise AssayError(f"--n-boot must be a positive integer, got {n_boot!r}")
    if n_boot > MAX_BOOTSTRAP:
        raise AssayError(f"--n-boot must be at most {MAX_BOOTSTRAP}, got {n_boot}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise AssayError(f"--seed must be a non-negative integer, got {seed!r}")
    if not 0.0 < confidence < 1.0:
        raise AssayError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _coverage_notes(estimates: Sequence[JudgeEstimate]) -> list[str]:
    """A judge whose metric rests on fewer items than the other judges' (it has no
    verdict on some of the items compared): said, since its Δs use only those."""
    most: dict[str, int] = {}
    for e in estimates:
        most[e.metric] = max(most.get(e.metric, 0), e.n)
    short: dict[tuple[str, int, int], list[str]] = {}
    for e in estimates:
        if e.n < most[e.metric]:
            short.setdefault((e.judge, e.n, most[e.metric]), []).append(e.metric)
    return [
        f"{judge}: {', '.join(metrics)} on {n} items, the other judges on {top} "
        "(no verdict on the rest; its comparisons use the items it has)"
        for (judge, n, top), metrics in short.items()
    ]


def _check_reference(reference: str, judges: list[str], outcomes: list[MetricOutcomes]) -> None:
    """`--reference` must name a judge as shown, with a metric another judge also has
    (else every Δ would be missing and the comparison table empty)."""
    if reference not in judges:
        meant = [j for j in judges if j.endswith(f"/{reference}")]
        hint = f"did you mean {' or '.join(meant)}?" if meant else f"judges: {', '.join(judges)}"
        raise AssayError(f"--reference {reference!r} is not a judge here; {hint}")
    own = [m.name for m in outcomes if reference in m.statistics]
    if not any(reference in m.statistics and len(m.statistics) > 1 for m in outcomes):
        has = ", ".join(own) or "none of the metrics compared"
        compared = ", ".join(dict.fromkeys(m.name for m in outcomes))
        raise AssayError(
            f"--reference {reference!r} shares no metric with another judge "
            f"(its metrics: {has}; compared: {compared}); pick a judge of the same kind"
        )


def _producers(runs: Sequence[LoadedRun], names: _Names) -> list[tuple[str, str, ProducerMeta]]:
    out = []
    for run in runs:
        meta: dict[str, ProducerMeta] = {}
        for part in (run.facts and run.facts.meta, run.items and run.items.meta):
            meta.update(part or {})
        meta.update(run.force.meta if run.force else {})
        out += [(names(run, j), run.name, meta.get(j, ProducerMeta())) for j in run.producers()]
    return out


def _compared(run: LoadedRun, names: _Names) -> ComparedRun:
    judges = [names(run, j) for j in run.producers()]
    return ComparedRun(run_dir=str(run.run_dir), name=run.name, judges=judges)


def compare_runs(
    run_dirs: Sequence[str | Path],
    *,
    reference: str | None = None,
    strict: bool = False,
    metrics: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    gold: str = "dataset",
) -> ComparisonReport:
    """Compare the judges (and verifiers) of one or more runs on the items they share.

    Each metric's judges are compared pairwise, or each against `reference` (a judge id
    as shown in the report), with a paired bootstrap CI of the difference (items
    resampled jointly, one draw for all judges), McNemar's exact test for 0/1 outcomes
    and a bootstrap p otherwise, Holm-adjusted within each family of comparisons on the
    same items. Runs whose item sets differ are compared on the intersection (a note says
    so; `strict=True` refuses); runs sharing no item with any other are refused.

    `gold` is where items' gold comes from: "dataset" (what the runs recorded),
    "adjudicated" (each run's labels.jsonl laid over it, pooled across the runs) or
    "adjudicated-only" (only adjudicated items have gold); see `assay.adjudication`.
    """
    _check_settings(n_boot, seed, confidence)
    if not run_dirs:
        raise AssayError("give at least one run directory")
    with collector_paused():  # millions of long-lived objects, no cycles among them
        return _compare(
            run_dirs, reference=reference, strict=strict, metrics=metrics,
            n_boot=n_boot, seed=seed, confidence=confidence, gold=gold,
        )  # fmt: skip


def _compare(
    run_dirs: Sequence[str | Path],
    *,
    reference: str | None,
    strict: bool,
    metrics: Sequence[str] | None,
    n_boot: int,
    seed: int,
    confidence: float,
    gold: str,
) -> ComparisonReport:
    overlay = _overlay(run_dirs, gold)
    runs = [load_run(d, overlay) for d in run_dirs]
    _unique_run_names(runs)
    notes: list[str] = _gold_notes(runs, overlay)
    check_overlap(runs, notes)
    names = _Names(runs, notes)
    outcomes, table = _outcomes(runs, names, strict, notes)
    outcomes = _select(outcomes, metrics)
    producers = _producers(runs, names)
    if reference is not None:
        _check_reference(reference, [j for j, _, _ in producers], outcomes)
    notes += [f"{names(r, j)}: {MAJORITY_RULE}" for r in runs for j in r.majority]

    def beside_work() -> dict[str, Any]:
        """The parts that do not need the comparisons, on the second core."""
        parts = _label_parts(table, runs, names, producers)
        if table is not None:
            parts["panels"] = panel_table(table, n_boot=n_boot, seed=seed, confidence=confidence)
        return parts

    with beside(beside_work) as label_parts:
        result = compare_statistics(
            outcomes, reference=reference, n_boot=n_boot, seed=seed, confidence=confidence
        )
        notes += _coverage_notes(result.estimates) + result.notes
        return ComparisonReport(
            runs=[_compared(r, names) for r in runs],
            reference=reference,
            metrics=list(dict.fromkeys(m.name for m in outcomes)),
            comparisons=result.comparisons,
            ablation=ablation_rows(producers, result.estimates, result.comparisons, reference),
            force=force_points(result.estimates),
            notes=notes,
            holm_families=result.families,
            n_boot=n_boot,
            seed=seed,
            confidence=confidence,
            **label_parts(),
        )


def _label_parts(
    table: LabelTable | None,
    runs: Sequence[LoadedRun],
    names: _Names,
    producers: Sequence[tuple[str, str, ProducerMeta]],
) -> dict[str, Any]:
    """The report's parts read off the label table: kappa, confusions (a factuality
    run's verifiers' too), reliability bins (panels: `panel_table`)."""
    facts = [c for r in runs if r.facts for c in claim_confusions(r.facts, partial(names, r))]
    if table is None:
        return {"kappa": None, "confusions": facts, "reliability": []}
    owners = {j: run for j, run, _ in producers}
    return {
        "kappa": kappa_table(table),
        "confusions": confusion_tables(table) + facts,
        "reliability": reliability_tables(table, owners, bins=ece_bins(runs, [])),
    }
