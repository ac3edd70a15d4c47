"""WiCE (oracle chunks): Wikipedia claims, each with evidence chunks and a gold label.

rows.jsonl holds one row per (claim, chunk); an answer item is one claim with its chunks
as passages. claims.jsonl (optional, one row per claim) is cross-checked when present.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.registry import IMPORTERS
from assay.datasets._answers import AnswersDataset, SourceProbe, answers_dataset, detects
from assay.datasets._jsonl import JsonlFile, file_in, read_jsonl
from assay.datasets._rows import RowId, SourceRow, check_unique
from assay.errors import DatasetError

WICE_ROWS = "rows.jsonl"
WICE_CLAIMS = "claims.jsonl"
WiceLabel = Literal["supported", "partially_supported", "not_supported"]


class WiceRow(SourceRow):
    """rows.jsonl: one evidence chunk of one claim, with the reference judges' verdicts."""

    id: RowId | None = None
    claim_id: RowId
    claim: str
    evidence: str
    label: WiceLabel
    claim_title: str | None = None
    reference_judges: dict[str, Any] = Field(default_factory=dict)


class WiceClaimRow(SourceRow):
    """claims.jsonl: one claim, its chunk count and the judges' claim-level verdicts."""

    claim_id: RowId
    claim: str
    label: WiceLabel
    n_chunks: int | None = None
    reference_judges_max: dict[str, Any] = Field(default_factory=dict)


@dataclass
class WiceClaimRows:
    """One claim's rows in rows.jsonl (its evidence chunks), in file order."""

    first: WiceRow
    line: int
    chunks: list[tuple[int, WiceRow]]

    def passage_ids(self) -> list[str]:
        return [passage_id(c, k) for k, (_, c) in enumerate(self.chunks)]


def passage_id(row: WiceRow, k: int) -> str:
    return row.id if row.id is not None else f"{row.claim_id}-chunk{k}"


def _is_wice(probe: SourceProbe) -> bool:
    keys = probe.keys
    if "reference_judges_max" in keys or {"n_chunks", "claim_id"} <= keys:
        probe.refuse(
            "this is WiCE's claims.jsonl, which has no evidence; pass rows.jsonl or its folder"
        )
    rows_row = {"claim_id", "claim", "evidence", "label"} <= keys or "reference_judges" in keys
    return probe.holds(WICE_ROWS) or rows_row


@IMPORTERS.register("wice")
@detects(_is_wice)
def read_wice(path: Path, /, *, name: str) -> AnswersDataset:
    """WiCE oracle rows.jsonl or its folder: one item per claim, its chunks as passages.

    A folder's claims.jsonl, when present, must agree with rows.jsonl.
    """
    src = read_jsonl(wice_rows_file(path))
    claims = wice_claims(src)
    if path.is_dir() and (path / WICE_CLAIMS).is_file():
        _cross_check(claims, read_jsonl(path / WICE_CLAIMS))
    return answers_dataset(src, name, "wice", [_item(c) for c in claims])


def wice_rows_file(given: Path) -> Path:
    return file_in(given, WICE_ROWS, "WiCE rows")


def wice_claims(src: JsonlFile) -> list[WiceClaimRows]:
    """Rows grouped by claim in order of first appearance; chunks must agree on claim."""
    claims: dict[str, WiceClaimRows] = {}
    seen: dict[str, int] = {}
    for line, _, r in src.validated(WiceRow):
        claim = claims.get(r.claim_id)
        if claim is None:
            claim = claims[r.claim_id] = WiceClaimRows(first=r, line=line, chunks=[])
        for fld in ("claim", "label"):
            if getattr(r, fld) != getattr(claim.first, fld):
                raise DatasetError(
                    f"differs from the same claim's row on line {claim.line}",
                    file=src.path,
                    line=line,
                    field=fld,
                )
        claim.chunks.append((line, r))
        check_unique(passage_id(r, len(claim.chunks) - 1), seen, src.path, line, "id")
    return list(claims.values())


def _item(claim: WiceClaimRows) -> AnswerItem:
    r = claim.first
    passages = [
        Passage(id=pid, text=c.evidence)
        for pid, (_, c) in zip(claim.passage_ids(), claim.chunks, strict=True)
    ]
    return AnswerItem(
        id=r.claim_id,
        answer=r.claim,
        evidence=passages,
        gold_claims=[GoldClaim(id=r.claim_id, text=r.claim, label=r.label, evidence=passages)],
        source=r.claim_title,
    )


def wice_claim_rows(src: JsonlFile) -> dict[str, tuple[int, WiceClaimRow]]:
    """claims.jsonl by claim id, with each row's line."""
    out: dict[str, tuple[int, WiceClaimRow]] = {}
    seen: dict[str, int] = {}
    for line, _, c in src.validated(WiceClaimRow):
        check_unique(c.claim_id, seen, src.path, line, "claim_id")
        out[c.claim_id] = (line, c)
    return out


def _cross_check(claims: list[WiceClaimRows], claims_src: JsonlFile) -> None:
    """claims.jsonl's label and chunk count must be rows.jsonl's."""
    recorded = wice_claim_rows(claims_src)
    for claim in claims:
        if claim.first.claim_id not in recorded:
            continue
        line, c = recorded[claim.first.claim_id]
        if c.label != claim.first.label:
            raise DatasetError(
                f"label {c.label!r} differs from rows.jsonl ({claim.first.label!r})",
                file=claims_src.path,
                line=line,
                field="label",
            )
        if c.n_chunks is not None and c.n_chunks != len(claim.chunks):
            raise DatasetError(
                f"n_chunks is {c.n_chunks} but rows.jsonl has {len(claim.chunks)} chunks",
                file=claims_src.path,
                line=line,
                field="n_chunks",
            )
