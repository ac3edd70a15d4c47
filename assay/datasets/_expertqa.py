"""ExpertQA: long-form answers split into claims, with web evidence and expert labels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field

from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.records import ClaimRecord
from assay.core.registry import IMPORTERS
from assay.datasets._answers import (
    AnswersDataset,
    SourceProbe,
    answer_item,
    answers_dataset,
    detects,
)
from assay.datasets._answers_jsonl import ANSWER_KEYS
from assay.datasets._jsonl import JsonlFile, default_name, file_in, read_jsonl
from assay.datasets._rows import RowId, SourceRow, check_unique

EXPERTQA_SUPPORTED = "Complete"  # the ExpertQA authors' rule for "attributable"
EXPERTQA_ANSWERS = "answers.jsonl"
GOLD_DECOMPOSER = "gold:expertqa"

_REF = re.compile(r"^\s*\[(\d+)\]\s*(.*)$", re.DOTALL)


class ExpertQAEvidenceRow(SourceRow):
    """One piece of a claim's evidence: `[n] url` and the passage the expert read."""

    ref: str
    passage: str


class ExpertQAClaimRow(SourceRow):
    """A claim of an answer with its evidence and the expert's support label."""

    claim_id: RowId
    claim: str
    claim_clean: str | None = None
    evidence: list[ExpertQAEvidenceRow]
    support: str

    @property
    def text(self) -> str:
        """The claim without citation markers (`claim_clean`) when there is one."""
        return self.claim_clean if self.claim_clean is not None else self.claim

    @property
    def label(self) -> str:
        return "supported" if self.support == EXPERTQA_SUPPORTED else "unsupported"


class ExpertQAAnswerRow(SourceRow):
    """answers.jsonl: one system's answer to one question, with its claims."""

    answer_id: RowId
    question: str | None = None
    system: str | None = None
    answer: str
    claims: list[ExpertQAClaimRow]
    gold_factuality: float | None = Field(default=None, ge=0.0, le=1.0)


class ExpertQAClaimFileRow(ExpertQAClaimRow):
    """claims.jsonl: one claim per row, naming its answer."""

    answer_id: RowId


def _is_expertqa(probe: SourceProbe) -> bool:
    keys, row = probe.keys, probe.first_row or {}
    if {"claim_id", "support"} <= keys and not keys & set(ANSWER_KEYS):
        probe.refuse(
            "this is ExpertQA's claims.jsonl, which has no answer text; pass answers.jsonl "
            "(or use load_expertqa_claims for the claims alone)"
        )
    answers_row = {"answer_id", "answer"} <= keys and isinstance(row.get("claims"), list)
    return probe.holds(EXPERTQA_ANSWERS) or answers_row


@IMPORTERS.register("expertqa")
@detects(_is_expertqa)
def read_expertqa(path: Path, /, *, name: str) -> AnswersDataset:
    """ExpertQA answers.jsonl or its folder: claims (expert labels) as gold claims, web evidence."""
    src = read_jsonl(file_in(path, EXPERTQA_ANSWERS, "ExpertQA answers"))
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, _, answer in src.validated(ExpertQAAnswerRow):
        check_unique(answer.answer_id, seen, src.path, line, "answer_id")
        items.append(answer_item(_answer_fields(answer), {"id": "answer_id"}, src.path, line))
    return answers_dataset(src, name, "expertqa", items)


def _answer_fields(answer: ExpertQAAnswerRow) -> dict[str, Any]:
    passages = _passages(answer)
    gold = [
        GoldClaim(
            id=c.claim_id,
            text=c.text,
            label=c.label,
            evidence=[passages[(e.ref, e.passage)] for e in c.evidence],
        )
        for c in answer.claims
    ]
    return {
        "id": answer.answer_id,
        "question": answer.question,
        "answer": answer.answer,
        "evidence": list(passages.values()),
        "gold_claims": gold,
        "gold_factuality": answer.gold_factuality,
        "source": f"expertqa:{answer.system}" if answer.system else "expertqa",
    }


def _passages(answer: ExpertQAAnswerRow) -> dict[tuple[str, str], Passage]:
    """One passage per distinct (ref, passage), id `<answer_id>:ref<n>` from `[n] url`."""
    out: dict[tuple[str, str], Passage] = {}
    used: set[str] = set()
    for claim in answer.claims:
        for ev in claim.evidence:
            key = (ev.ref, ev.passage)
            if key in out:
                continue
            match = _REF.match(ev.ref)
            pid = f"{answer.answer_id}:ref{match.group(1)}" if match else ""
            if not match or pid in used:
                pid = f"{answer.answer_id}:e{len(out)}"
            used.add(pid)
            source = (match.group(2).strip() if match else ev.ref.strip()) or None
            out[key] = Passage(id=pid, text=ev.passage, source=source)
    return out


def load_expertqa_claims(path: str | Path, *, dataset: str | None = None) -> list[ClaimRecord]:
    """ExpertQA's given claims as claim records with `gold_label`, for verify-only runs.

    `path` is the folder, `answers.jsonl` or `claims.jsonl`. `claim` is `claim_clean`
    (citation markers removed); `sentence_id` is the claim's position in its answer
    (ExpertQA claims are sentence-level); `span` is set when the answer text is known.
    Evidence for each claim: `load_answers(path).items[i].gold_claims`.
    """
    given = Path(path).expanduser()
    src = read_jsonl(file_in(given, EXPERTQA_ANSWERS, "ExpertQA answers"))
    name = dataset or default_name(given)
    seen: dict[str, int] = {}
    if "claims" not in src.rows[0][1]:  # claims.jsonl: one claim per row, in file order
        return _claims_from_claim_rows(name, src, seen)
    answers: dict[str, int] = {}
    records: list[ClaimRecord] = []
    for line, _, answer in src.validated(ExpertQAAnswerRow):
        check_unique(answer.answer_id, answers, src.path, line, "answer_id")
        for k, c in enumerate(answer.claims):
            check_unique(c.claim_id, seen, src.path, line, f"claims.{k}.claim_id")
        records += _claims_of_answer(name, answer)
    return records


def _claims_of_answer(dataset: str, answer: ExpertQAAnswerRow) -> list[ClaimRecord]:
    """The answer's claims in order, each with its span in the answer when found there."""
    records: list[ClaimRecord] = []
    cursor = 0
    for k, c in enumerate(answer.claims):
        start = answer.answer.find(c.claim, cursor)
        span = (start, start + len(c.claim)) if start >= 0 else None
        cursor = start + len(c.claim) if start >= 0 else cursor
        records.append(_claim_record(dataset, answer.answer_id, k, c, span))
    return records


def _claims_from_claim_rows(
    dataset: str, src: JsonlFile, seen: dict[str, int]
) -> list[ClaimRecord]:
    records: list[ClaimRecord] = []
    position: dict[str, int] = {}
    for line, _, c in src.validated(ExpertQAClaimFileRow):
        check_unique(c.claim_id, seen, src.path, line, "claim_id")
        k = position.get(c.answer_id, 0)
        position[c.answer_id] = k + 1
        records.append(_claim_record(dataset, c.answer_id, k, c, None))
    return records


def _claim_record(
    dataset: str, answer_id: str, k: int, c: ExpertQAClaimRow, span: tuple[int, int] | None
) -> ClaimRecord:
    return ClaimRecord(
        dataset=dataset,
        answer_id=answer_id,
        sentence_id=k,
        claim_id=c.claim_id,
        claim=c.text,
        span=span,
        decomposer_id=GOLD_DECOMPOSER,
        gold_label=c.label,
    )
