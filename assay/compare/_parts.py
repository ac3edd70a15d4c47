"""The report's tables beside the comparisons: ablation rows, kappa matrix, confusion
matrices against gold, and the MVR-FS points."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from assay.compare._item_outcomes import LabelTable, label_order
from assay.compare._model import AblationCell, AblationRow, ConfusionTable, ForcePoint, KappaMatrix
from assay.metrics import PairedComparison
from assay.metrics._agreement_stats import confusion_stack
from assay.metrics._claim_records import NOT_SUPPORTED, OK, SUPPORTED
from assay.metrics._claim_universe import ClaimUniverse
from assay.metrics._majority import sample_base
from assay.metrics._paired_metrics import JudgeEstimate
from assay.metrics._rater_agreement import kappa_matrix
from assay.metrics._record_fields import ProducerMeta


def _cell(estimate: JudgeEstimate, versus: PairedComparison | None) -> AblationCell:
    fields = {}
    if versus is not None:
        fields = {
            "diff": versus.diff,
            "diff_ci_low": versus.ci_low,
            "diff_ci_high": versus.ci_high,
            "p_value": versus.p_value,
            "p_holm": versus.p_holm,
        }
    return AblationCell(
        value=estimate.value,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        n=estimate.n,
        **fields,
    )


def ablation_rows(
    producers: Sequence[tuple[str, str, ProducerMeta]],
    estimates: Sequence[JudgeEstimate],
    comparisons: Sequence[PairedComparison],
    reference: str | None,
) -> list[AblationRow]:
    """One row per (judge, run, provenance); cells per metric, Δ against `reference`."""
    against = {(c.metric, c.judge_a): c for c in comparisons if c.judge_b == reference}
    cells: dict[str, dict[str, AblationCell]] = {}
    for e in estimates:
        versus = against.get((e.metric, e.judge)) if reference is not None else None
        cells.setdefault(e.judge, {})[e.metric] = _cell(e, versus)
    return [
        AblationRow(
            judge=judge,
            run=run,
            model=meta.model,
            prompt=meta.prompt_id,
            prompt_version=meta.prompt_version,
            reference=judge == reference,
            metrics=cells.get(judge, {}),
        )
        for judge, run, meta in producers
    ]


def force_points(estimates: Sequence[JudgeEstimate]) -> list[ForcePoint]:
    """MVR and FS of every judge that has both."""
    by = {(e.metric, e.judge): e for e in estimates}
    judges = [e.judge for e in estimates if e.metric == "mvr" and ("fs", e.judge) in by]
    return [
        ForcePoint(
            judge=j,
            mvr=by[("mvr", j)].value,
            mvr_lo=by[("mvr", j)].ci_low,
            mvr_hi=by[("mvr", j)].ci_high,
            fs=by[("fs", j)].value,
            fs_lo=by[("fs", j)].ci_low,
            fs_hi=by[("fs", j)].ci_high,
        )
        for j in judges
    ]


def kappa_table(table: LabelTable) -> KappaMatrix | None:
    """Cohen's kappa between every two of the judges and human raters, over the items
    both labelled. Samples `#k` of a judge with a majority vote are left out (the vote
    stands for them), as in the run's items metrics."""
    voted = {j.removesuffix("#majority") for j in table.judges if j.endswith("#majority")}
    columns = {j: v for j, v in table.judges.items() if sample_base(j) not in voted}
    for name, labels in table.raters().items():
        columns[name if name not in columns else f"rater:{name}"] = labels
    if len(columns) < 2:
        return None
    frame = pd.DataFrame(columns, dtype=object)
    order, _ = label_order((v for v in frame.stack().tolist() if v is not None), table.declared)
    matrix = kappa_matrix(frame, order=order)
    present = frame.notna().to_numpy().astype(np.int64)
    return KappaMatrix(
        raters=list(columns),
        values=[[None if pd.isna(v) else float(v) for v in row] for row in matrix.to_numpy()],
        n=(present.T @ present).tolist(),
    )


def confusion_tables(table: LabelTable) -> list[ConfusionTable]:
    """Each judge's labels against gold labels, per dataset, over the items it labelled."""
    out: list[ConfusionTable] = []
    datasets = sorted({d for d, _ in table.keys})
    for judge, predicted in table.judges.items():
        for dataset in datasets:
            rows = [
                (g.label, p)
                for (d, _), g, p in zip(table.keys, table.gold, predicted, strict=True)
                if d == dataset and g.label is not None and p is not None
            ]
            if rows:
                out.append(_confusion(judge, dataset, rows, table.orders.get(dataset)))
    return out


def _confusion(
    judge: str, dataset: str, rows: Sequence[tuple[str, str]], declared: list[str] | None
) -> ConfusionTable:
    labels, _ = label_order((x for row in rows for x in row), declared)
    index = {label: i for i, label in enumerate(labels)}
    gold = np.array([index[g] for g, _ in rows], dtype=np.int64)
    pred = np.array([index[p] for _, p in rows], dtype=np.int64)
    counts = confusion_stack(pred, gold, len(labels))[0].astype(np.int64)
    return ConfusionTable(judge=judge, dataset=dataset, labels=labels, counts=counts.tolist())


def claim_confusions(facts: ClaimUniverse, shown: Callable[[str], str]) -> list[ConfusionTable]:
    """Each verifier against gold claim labels, per dataset, over the claims it scored:
    binary as the run's gold metrics (gold `supported` or not x verdict `supported` or
    not); `shown` names a verifier as the report does."""
    labels = [SUPPORTED, NOT_SUPPORTED]
    out: list[ConfusionTable] = []
    for dataset in facts.datasets():
        gold = {ck: g for ck, g in facts.gold.items() if ck[0] == dataset}
        for vid in sorted(facts.verdicts):
            verdicts = facts.verdicts[vid]
            counts = [[0, 0], [0, 0]]
            for ck, label in gold.items():
                v = verdicts.get(ck)
                if v is not None and v.status == OK:
                    counts[label != SUPPORTED][v.label != SUPPORTED] += 1
            if any(map(any, counts)):
                out.append(
                    ConfusionTable(judge=shown(vid), dataset=dataset, labels=labels, counts=counts)
                )
    return out
