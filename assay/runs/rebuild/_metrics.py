"""Every metric of a run, rebuilt from its record files alone (no model calls).

Used at the end of a run, by `assay reparse` and by `assay recompute`, so the three can
never disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from assay.adjudication import GoldOverlay
from assay.core.outcomes import Status
from assay.core.records import (
    ClaimRecord,
    ItemJudgmentRecord,
    ItemRecord,
    SentenceRecord,
    VerificationRecord,
)
from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    DIGESTS_KEY,
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
    iter_records,
    iter_rows,
    latest,
    read_json,
    record_digests,
)


def read_answers(run_dir: Path) -> list[dict[str, Any]]:
    return list(iter_rows(run_dir / ANSWERS_FILE))


def compute_metrics(
    run_dir: Path,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    length_penalty: str | None = None,
) -> dict[str, Any]:
    """`{"forcebench": ..., "factuality": ..., "items": ...}`; a part is None (items:
    absent) when the run has none.

    `n_boot=0` computes no confidence intervals (their bounds are null). Rows carry a
    `dataset` field: "all" for pooled rows, plus one row per dataset when there are several.
    `records_sha256` names the record files the metrics summarise, so a report can tell
    whether they changed since (digests are taken before the files are read).
    """
    from assay.metrics import force_metrics

    digests = record_digests(run_dir)
    out: dict[str, Any] = {"forcebench": None, "factuality": None}
    records = iter_records(run_dir / JUDGMENTS_FILE)  # streamed: a line at a time
    first = next(records, None)
    if first is not None:
        report = force_metrics(chain([first], records), n_boot=n_boot, seed=seed)
        out["forcebench"] = report.model_dump(mode="json")
    if (run_dir / VERIFICATIONS_FILE).exists() or (run_dir / SENTENCES_FILE).exists():
        out["factuality"] = factuality_metrics(
            run_dir, n_boot=n_boot, seed=seed, length_penalty=length_penalty
        )
    if (run_dir / ITEMS_FILE).exists():
        out["items"] = items_metrics(run_dir, n_boot=n_boot, seed=seed)
    out[DIGESTS_KEY] = digests
    return out


def items_metrics(
    run_dir: Path, *, n_boot: int, seed: int, overlay: GoldOverlay | None = None
) -> dict[str, Any]:
    """Agreement of every items judge with gold, raters and itself (`items.jsonl`);
    with `overlay`, against the gold after adjudication (`assay report --gold`), in
    memory: metrics.json is only ever the dataset gold's."""
    from assay.metrics import item_metrics

    items = list(latest(run_dir / ITEMS_FILE, ItemRecord).values())
    if overlay is not None:
        items = [overlay.apply(it) for it in items]
    judgments = list(latest(run_dir / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord).values())
    orders, notes = run_label_orders(run_dir, judgments)
    options = calibration_options(run_dir)
    report = item_metrics(
        items, judgments, n_boot=n_boot, seed=seed, label_orders=orders, calibration=options
    )
    out = {"rows": report.rows_flat(), **report.model_dump(mode="json", exclude={"rows"})}
    used = {d: o for d, o in orders.items() if any(it.dataset == d for it in items)}
    out |= {"label_orders": used} if used else {}
    return {**out, "notes": notes} if notes else out


def calibration_options(run_dir: Path) -> Any:
    """The run's `[calibration]` table (bins, fit split), from its manifest's spec."""
    from assay.metrics._calibration import options_from_manifest

    path = run_dir / MANIFEST_FILE
    return options_from_manifest(read_json(path) if path.is_file() else {})


def run_label_orders(
    run_dir: Path, judgments: Sequence[ItemJudgmentRecord]
) -> tuple[dict[str, list[str]], list[str]]:
    """The declared label orders of the run's items datasets (its manifest's spec and
    judges' prompts; `assay.metrics._ordinal`), and notes on orders left out."""
    from assay.metrics._ordinal import label_orders_from_manifest

    path = run_dir / MANIFEST_FILE
    manifest = read_json(path) if path.is_file() else {}
    judged: dict[str, set[str]] = {}
    for r in judgments:
        judged.setdefault(r.dataset, set()).add(r.judge_id)
    return label_orders_from_manifest(manifest, judged)


def factuality_metrics(
    run_dir: Path, *, n_boot: int, seed: int, length_penalty: str | None
) -> dict[str, Any]:
    from assay.metrics import factuality_correlation, factuality_scores, gold_metrics

    sentences = [
        _legacy_given(r)
        for r in {r.key: r for r in iter_jsonl(run_dir / SENTENCES_FILE, SentenceRecord)}.values()
    ]
    claims = list(iter_jsonl(run_dir / CLAIMS_FILE, ClaimRecord))
    verifications = list(
        {r.key: r for r in iter_jsonl(run_dir / VERIFICATIONS_FILE, VerificationRecord)}.values()
    )
    answers = read_answers(run_dir)
    responses = [(a["dataset"], a["answer_id"]) for a in answers] or None
    scores = factuality_scores(
        verifications,
        sentences,
        claims,
        responses=responses,
        n_boot=n_boot,
        seed=seed,
        length_penalty=length_penalty,  # type: ignore[arg-type]
    )
    result: dict[str, Any] = {"scores": scores.model_dump(mode="json")}
    if not scores.rows:
        result["empty"] = why_no_scores(answers, sentences, claims)
    if any(c.gold_label for c in claims) or any(v.gold_label for v in verifications):
        result["gold"] = gold_metrics(verifications, claims=claims).model_dump(mode="json")
    gold_f = {
        (a["dataset"], a["answer_id"]): a["gold_factuality"]
        for a in answers
        if a.get("gold_factuality") is not None
    }
    if gold_f:
        corr = factuality_correlation(
            verifications,
            gold_f,
            sentences=sentences,
            claims=claims,
            n_boot=n_boot,
            seed=seed,
        )
        result["correlation"] = corr.model_dump(mode="json")
    return result


def why_no_scores(
    answers: Sequence[Any], sentences: Sequence[SentenceRecord], claims: Sequence[ClaimRecord]
) -> str:
    """Why the factuality table has no row, in one line every report format shows."""
    if not sentences:
        if not answers:
            return "no response to score: the answer datasets are empty"
        return "no sentence decomposed yet: the run stopped before decomposing (see its status)"
    if claims:
        return (
            f"no claim verified yet: {len(claims)} claims, no verification recorded "
            "(the run stopped before verifying: see its status)"
        )
    failed = Counter(r.status.value for r in sentences if r.status is not Status.OK)
    if not failed:
        return f"no claim to verify: the decomposer found none in the {len(sentences)} sentences"
    shown = ", ".join(f"{status} {n}" for status, n in sorted(failed.items()))
    rest = "; the others had no claim" if sum(failed.values()) < len(sentences) else ""
    return (
        f"no claim to verify: {sum(failed.values())} of {len(sentences)} sentences failed to "
        f"decompose ({shown}: each error is in {SENTENCES_FILE}){rest}"
    )


def _legacy_given(record: SentenceRecord) -> SentenceRecord:
    """Runs before given claims were mapped to sentences recorded the whole answer as
    sentence 0 with a span; read such a record as unmapped (no span), so claims per
    sentence is n/a instead of a number computed from one fake sentence."""
    from assay.decomposers import split_sentences

    if record.decomposer_id != "given" or record.span is None or record.sentence_id != 0:
        return record
    if len(split_sentences(record.sentence)) <= 1:
        return record
    return record.model_copy(update={"span": None})


__all__ = [
    "compute_metrics",
    "factuality_metrics",
    "items_metrics",
    "read_answers",
    "why_no_scores",
]
