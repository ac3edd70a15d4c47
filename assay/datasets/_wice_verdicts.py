"""The WiCE paper's recorded reference-judge verdicts as verification records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.outcomes import Status
from assay.core.records import VerificationRecord
from assay.datasets._jsonl import JsonlFile, default_name, read_jsonl
from assay.datasets._records import VerdictFields, verification_record
from assay.datasets._wice import (
    WICE_CLAIMS,
    WiceClaimRows,
    wice_claim_rows,
    wice_claims,
    wice_rows_file,
)
from assay.errors import DatasetError

WICE_LABELS = ("not_supported", "partially_supported", "supported")  # ascending strength

ChunkVerdicts = list[tuple[str | None, object]]  # (passage id or None, the judge's answer)


def load_wice_reference_verdicts(
    path: str | Path, *, dataset: str | None = None
) -> list[VerificationRecord]:
    """The WiCE paper's recorded judge verdicts, one record per claim and judge.

    `verifier_id` (and `model`) is the judge's name (`gpt-4-0613`, ...). The claim-level
    verdict is the strongest over the claim's chunks (supported > partially_supported >
    not_supported, as the WiCE authors recommend); `label` is `supported` only for
    `supported`, else `unsupported`; the 3-way answer and per-chunk answers are kept in
    `parsed`. A verdict missing or outside the three labels is `parse_error` (unless
    another chunk already says `supported`). `path`: the folder, rows.jsonl, or
    claims.jsonl (claim-level verdicts only). With the folder, the claim-level verdicts
    recorded in claims.jsonl must equal the ones computed from rows.jsonl.
    """
    given = Path(path).expanduser()
    name = dataset or default_name(given)
    if given.is_dir():
        records = _verdicts_from_rows(name, wice_claims(read_jsonl(wice_rows_file(given))))
        if (given / WICE_CLAIMS).is_file():
            _check_recorded_max(records, read_jsonl(given / WICE_CLAIMS))
        return records
    src = read_jsonl(given)
    if "reference_judges_max" in src.rows[0][1]:
        return _verdicts_from_claims(name, src)
    return _verdicts_from_rows(name, wice_claims(src))


def _judged(dataset: str, claim_id: str, claim: str, gold: str, judge: str) -> VerdictFields:
    """One judge on one claim; the claim is its own answer, the judge its own model."""
    return VerdictFields(dataset, claim_id, claim_id, claim, judge, judge, gold_label=gold)


def _rank(value: object) -> int | None:
    return WICE_LABELS.index(value) if isinstance(value, str) and value in WICE_LABELS else None


def _verdict(judged: VerdictFields, chunks: ChunkVerdicts) -> VerificationRecord:
    """Max over chunks; a chunk without a usable verdict makes it unknowable unless supported."""
    ranks = [_rank(v) for _, v in chunks]
    known = [r for r in ranks if r is not None]
    best = max(known) if known else None
    bad = [v for (_, v), r in zip(chunks, ranks, strict=True) if r is None]
    per_chunk = {pid: v for pid, v in chunks if pid is not None}
    parsed: dict[str, Any] = {"answer": None, "chunks": per_chunk, "aggregation": "max"}
    outcome: dict[str, Any]
    if best is None or (bad and best != len(WICE_LABELS) - 1):
        error = f"no usable verdict for {len(bad)} of {len(chunks)} chunk(s): {bad[0]!r}"
        outcome = {"status": Status.PARSE_ERROR, "error": error}
    else:
        parsed["answer"] = WICE_LABELS[best]
        supported = parsed["answer"] == "supported"
        outcome = {
            "status": Status.OK,
            "label": "supported" if supported else "unsupported",
            "score": 1.0 if supported else 0.0,
        }
    evidence = [{"passage_id": pid, "label": v} for pid, v in chunks if pid is not None]
    return verification_record(judged, evidence=evidence, parsed=parsed, **outcome)


def _verdicts_from_rows(dataset: str, claims: list[WiceClaimRows]) -> list[VerificationRecord]:
    records: list[VerificationRecord] = []
    for claim in claims:
        judges: list[str] = []
        for _, c in claim.chunks:
            judges.extend(j for j in c.reference_judges if j not in judges)
        pids = claim.passage_ids()
        first = claim.first
        for judge in judges:
            chunks: ChunkVerdicts = [
                (pid, c.reference_judges.get(judge))
                for pid, (_, c) in zip(pids, claim.chunks, strict=True)
            ]
            judged = _judged(dataset, first.claim_id, first.claim, first.label, judge)
            records.append(_verdict(judged, chunks))
    return records


def _verdicts_from_claims(dataset: str, src: JsonlFile) -> list[VerificationRecord]:
    records: list[VerificationRecord] = []
    for _, c in wice_claim_rows(src).values():
        for judge, value in c.reference_judges_max.items():
            judged = _judged(dataset, c.claim_id, c.claim, c.label, judge)
            records.append(_verdict(judged, [(None, value)]))
    return records


def _check_recorded_max(records: list[VerificationRecord], claims_src: JsonlFile) -> None:
    claims = wice_claim_rows(claims_src)
    for rec in records:
        if rec.claim_id not in claims:
            continue
        line, c = claims[rec.claim_id]
        recorded = c.reference_judges_max.get(rec.verifier_id)
        computed = rec.parsed.get("answer") if rec.parsed else None
        if recorded is not None and computed is not None and recorded != computed:
            raise DatasetError(
                f"{recorded!r} differs from the maximum over rows.jsonl's chunks ({computed!r})",
                file=claims_src.path,
                line=line,
                field=f"reference_judges_max.{rec.verifier_id}",
            )
