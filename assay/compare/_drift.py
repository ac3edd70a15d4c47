"""How far a re-run drifted from the run it re-ran (`assay rerun`'s drift report): the
measure of how reproducible an API judge is.

Per judge (and verifier): the records both runs have (matched by record key), those
only one has, the share of them with the same verdict and Cohen's kappa between the two
runs' verdicts, and the share whose raw model text is byte for byte the same. Then, for
every metric `assay compare` computes on both, the paired difference with its bootstrap
CI (`compare_runs` under the hood). A verdict is the label of an `ok` record, else its
status: an answer that failed once and not the other time is drift too. Per decomposer
(`_drift_claims`): the share of answers split into byte-identical sentences and claims,
and the claims count of each run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay.compare._build import compare_runs
from assay.compare._drift_claims import DecomposerDrift, decomposer_drift
from assay.compare._model import ComparisonReport
from assay.core.records import ItemJudgmentRecord, JudgmentRecord, VerificationRecord
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    VERIFICATIONS_FILE,
    latest,
)
from assay.errors import AssayError

RECORD_FILES: tuple[tuple[str, type[Any], str], ...] = (
    (JUDGMENTS_FILE, JudgmentRecord, "judge_id"),
    (ITEM_JUDGMENTS_FILE, ItemJudgmentRecord, "judge_id"),
    (VERIFICATIONS_FILE, VerificationRecord, "verifier_id"),
)

# compare's note that shared ids are shown prefixed: a re-run shares every id by design
PREFIX_NOTE = "judge ids used by several runs are prefixed"


class JudgeDrift(BaseModel):
    """One judge's (or verifier's) records in the original run against the re-run."""

    judge: str = Field(description="The judge's or verifier's id.")
    records: str = Field(description="The record file compared.")
    compared: int = Field(description="Records both runs have (same key).")
    only_original: int = Field(description="Records only the original run has.")
    only_rerun: int = Field(description="Records only the re-run has.")
    agreement: float | None = Field(description="Share of compared records with one verdict.")
    kappa: float | None = Field(
        description="Cohen's kappa between the two runs' verdicts; None when undefined "
        "(one verdict throughout both runs: agreement says all)."
    )
    identical_raw: float | None = Field(
        description="Share of compared records whose raw model text is byte-identical "
        "(records without one, e.g. baselines, count when neither has one)."
    )
    changed: list[str] = Field(
        default_factory=list, description="Up to 5 keys whose verdict changed."
    )
    returned_original: list[str] = Field(
        default_factory=list, description="Model ids the provider answered as, originally."
    )
    returned_rerun: list[str] = Field(
        default_factory=list, description="Model ids the provider answered as in the re-run."
    )

    @property
    def drift_free(self) -> bool:
        return (
            not self.only_original
            and not self.only_rerun
            and self.agreement in (None, 1.0)
            and self.identical_raw in (None, 1.0)
        )


class MetricDrift(BaseModel):
    """One metric of one judge: the original value, the re-run's, the paired Δ and CI."""

    metric: str
    judge: str
    n: int
    original: float | None
    rerun: float | None
    diff: float | None = Field(description="rerun - original, on the n paired items.")
    ci_low: float | None
    ci_high: float | None


class DriftReport(BaseModel):
    """The drift of a re-run: per judge, then per metric; `drift_free` when nothing moved."""

    original: str
    rerun: str
    judges: list[JudgeDrift]
    metrics: list[MetricDrift]
    decomposers: list[DecomposerDrift] = Field(
        default_factory=list, description="Each decomposer's output, re-run vs original."
    )
    notes: list[str] = Field(default_factory=list)

    @property
    def drift_free(self) -> bool:
        """Nothing moved: every verdict, raw response and claim the same, every metric
        delta 0 (what `--fail-on-drift` tests)."""
        moved = any(m.diff not in (None, 0.0) for m in self.metrics)
        split = all(d.drift_free for d in self.decomposers)
        return all(j.drift_free for j in self.judges) and split and not moved


def _verdict(record: Any) -> str:
    return str(record.label) if record.status == "ok" else f"<{record.status}>"


def _kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa, None when it is undefined (a single verdict in both runs)."""
    if not a or len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(a, b))
    return None if math.isnan(value) else value


def _returned(records: dict[Any, Any]) -> list[str]:
    """The model ids a provider answered as (`model_returned`): an alias can move."""
    return sorted(
        {str(r.model_returned) for r in records.values() if getattr(r, "model_returned", None)}
    )


def _by_judge(path: Path, model: type[Any], field: str) -> dict[str, dict[Any, Any]]:
    out: dict[str, dict[Any, Any]] = {}
    if path.is_file():
        for key, record in latest(path, model).items():
            out.setdefault(str(getattr(record, field)), {})[key] = record
    return out


def judge_drift(original: Path, rerun: Path) -> list[JudgeDrift]:
    """Each judge's drift, record file by record file, judges in id order."""
    out: list[JudgeDrift] = []
    for name, model, field in RECORD_FILES:
        before, after = (
            _by_judge(original / name, model, field),
            _by_judge(rerun / name, model, field),
        )
        for judge in sorted(set(before) | set(after)):
            a, b = before.get(judge, {}), after.get(judge, {})
            keys = [k for k in a if k in b]
            va, vb = [_verdict(a[k]) for k in keys], [_verdict(b[k]) for k in keys]
            same = [x == y for x, y in zip(va, vb, strict=True)]
            raw = [a[k].raw_output == b[k].raw_output for k in keys]
            out.append(
                JudgeDrift(
                    returned_original=_returned(a),
                    returned_rerun=_returned(b),
                    judge=judge,
                    records=name,
                    compared=len(keys),
                    only_original=len(a) - len(keys),
                    only_rerun=len(b) - len(keys),
                    agreement=sum(same) / len(keys) if keys else None,
                    kappa=_kappa(va, vb),
                    identical_raw=sum(raw) / len(keys) if keys else None,
                    changed=[
                        "/".join(map(str, k)) for k, s in zip(keys, same, strict=True) if not s
                    ][:5],
                )
            )
    return out


def _bare_ids(report: ComparisonReport) -> list[dict[str, str]]:
    """For each run: judge id as shown -> its own id (compare prefixes shared ids)."""
    return [
        {shown: shown.removeprefix(f"{run.name}/") for shown in run.judges} for run in report.runs
    ]


def metric_drift(report: ComparisonReport) -> list[MetricDrift]:
    """The comparisons of each judge in the original with itself in the re-run."""
    first, second = _bare_ids(report)
    out = []
    for c in report.comparisons:
        a, b = c.judge_a, c.judge_b
        if a in second and b in first and a not in first:
            a, b = b, a  # the original's judge first
            flip = -1.0
        else:
            flip = 1.0
        if a not in first or b not in second or first[a] != second[b]:
            continue
        diff = None if c.diff is None else 0.0 - flip * c.diff  # compare's diff is a - b
        low, high = (
            (None, None)
            if c.ci_low is None or c.ci_high is None
            else sorted((0.0 - flip * c.ci_low, 0.0 - flip * c.ci_high))
        )
        original, rerun = (c.value_a, c.value_b) if flip > 0 else (c.value_b, c.value_a)
        out.append(
            MetricDrift(
                metric=c.metric,
                judge=first[a],
                n=c.n,
                original=original,
                rerun=rerun,
                diff=diff,
                ci_low=low,
                ci_high=high,
            )
        )
    return out


def drift_report(
    original: str | Path, rerun: str | Path, *, n_boot: int = 1000, seed: int = 0
) -> DriftReport:
    """The drift of `rerun` from `original` (two run directories of the same spec)."""
    notes: list[str] = []
    metrics: list[MetricDrift] = []
    try:
        report = compare_runs([original, rerun], n_boot=n_boot, seed=seed)
        metrics = metric_drift(report)
        notes += [n for n in report.notes if not n.startswith(PREFIX_NOTE)]
    except AssayError as exc:  # no shared items with gold: agreement is still measured
        notes.append(f"metric deltas not computed: {exc.message}")
    judges = judge_drift(Path(original), Path(rerun))
    notes += [
        f"{j.judge}: the provider answered as {', '.join(j.returned_original) or '-'} "
        f"originally and as {', '.join(j.returned_rerun) or '-'} in the re-run"
        for j in judges
        if j.returned_original != j.returned_rerun
    ]
    return DriftReport(
        original=str(original),
        rerun=str(rerun),
        judges=judges,
        metrics=metrics,
        decomposers=decomposer_drift(Path(original), Path(rerun)),
        notes=notes,
    )


__all__ = [
    "DecomposerDrift",
    "DriftReport",
    "JudgeDrift",
    "MetricDrift",
    "drift_report",
    "judge_drift",
]
