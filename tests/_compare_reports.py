"""ComparisonReport objects for the comparison page tests, built with the real statistics
(paired_compare, kappa_matrix, sklearn's confusion matrix) on seeded random outcomes."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import confusion_matrix

from assay.compare import (
    AblationCell,
    AblationRow,
    ComparedRun,
    ComparisonReport,
    ConfusionTable,
    ForcePoint,
    KappaMatrix,
)
from assay.metrics import PairedComparison, kappa_matrix, paired_compare

LABELS = ["supported", "unsupported", "contradicted"]


def _outcomes(judges: list[str], n: int, rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """Per-item outcomes per metric: accuracy 0/1 (McNemar) and a score (bootstrap)."""
    skill = np.linspace(0.55, 0.85, len(judges))
    correct = pd.DataFrame({j: rng.random(n) < s for j, s in zip(judges, skill, strict=True)})
    score = pd.DataFrame({j: rng.normal(s, 0.3, n) for j, s in zip(judges, skill, strict=True)})
    return {"accuracy": correct.astype(float), "mae": score.abs()}


def _ablation(
    judges: list[str], outcomes: dict[str, pd.DataFrame], rows: list[PairedComparison], ref: str
) -> list[AblationRow]:
    out = []
    for jid in judges:
        cells = {}
        for metric, frame in outcomes.items():
            delta = next((r for r in rows if r.metric == metric and r.judge_a == jid), None)
            value = float(frame[jid].mean())
            cells[metric] = AblationCell(
                value=value, ci_low=value - 0.05, ci_high=value + 0.05, n=len(frame),
                diff=None if delta is None else delta.diff,
                diff_ci_low=None if delta is None else delta.ci_low,
                diff_ci_high=None if delta is None else delta.ci_high,
                p_value=None if delta is None else delta.p_value,
                p_holm=None if delta is None else delta.p_holm,
            )  # fmt: skip
        model, _, prompt = jid.partition("::")
        out.append(
            AblationRow(
                judge=jid,
                run="run-a",
                model=model,
                prompt=prompt or None,
                prompt_version=1,
                reference=jid == ref,
                metrics=cells,
            )  # fmt: skip
        )
    return out


def _confusions(judges: list[str], rng: np.random.Generator) -> list[ConfusionTable]:
    gold = rng.choice(LABELS, 80)
    out = []
    for jid in judges:
        pred = np.where(rng.random(80) < 0.7, gold, rng.choice(LABELS, 80))
        counts = confusion_matrix(gold, pred, labels=LABELS).tolist()
        out.append(ConfusionTable(judge=jid, dataset="items-demo", labels=LABELS, counts=counts))
    return out


def _kappa(judges: list[str], raters: list[str], rng: np.random.Generator) -> KappaMatrix:
    base = rng.choice(LABELS, 60)
    ratings = {
        name: pd.Series(np.where(rng.random(60) < 0.75, base, rng.choice(LABELS, 60)))
        for name in [*judges, *raters]
    }
    ratings[raters[-1]].iloc[:20] = None  # a rater who labelled fewer items
    frame = kappa_matrix(pd.DataFrame(ratings))
    names = list(frame.columns)
    values = [[None if pd.isna(v) else float(v) for v in frame.loc[a]] for a in names]
    both = [[int((ratings[a].notna() & ratings[b].notna()).sum()) for b in names] for a in names]
    return KappaMatrix(raters=names, values=values, n=both)


def _force(judges: list[str], rng: np.random.Generator) -> list[ForcePoint]:
    points = []
    for jid in judges:
        mvr, fs = float(rng.uniform(0.1, 0.6)), float(rng.uniform(-0.1, 0.4))
        points.append(
            ForcePoint(
                judge=jid,
                mvr=mvr,
                mvr_lo=mvr - 0.08,
                mvr_hi=mvr + 0.07,
                fs=fs,
                fs_lo=fs - 0.06,
                fs_hi=fs + 0.05,
            )  # fmt: skip
        )
    return points


def full_report(
    judges: list[str] | None = None, *, raters: list[str] | None = None, seed: int = 3
) -> ComparisonReport:
    """Every part filled: 4 judges against the first one, κ with two human raters, ...."""
    judges = judges or ["gpt-4o::force-aware", "gpt-4o::plain", "llama3::force-aware", "rule"]
    rng = np.random.default_rng(seed)
    outcomes = _outcomes(judges, 150, rng)
    ref = judges[0]
    rows = paired_compare(outcomes, reference=ref, n_boot=200, seed=seed).rows
    return ComparisonReport(
        runs=[ComparedRun(run_dir="runs/run-a", name="run-a", judges=judges)],
        reference=ref,
        metrics=list(outcomes),
        comparisons=rows,
        ablation=_ablation(judges, outcomes, rows, ref),
        kappa=_kappa(judges, raters or ["rater-1", "rater-2"], rng),
        confusions=_confusions(judges, rng),
        force=_force(judges, rng),
        notes=["runs differ in items: compared on the 150 items all runs share"],
        n_boot=200,
        seed=seed,
    )
