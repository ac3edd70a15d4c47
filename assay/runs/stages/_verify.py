"""The verify stage: claims in, one `verifications.jsonl` record per (claim, verifier).

Verifiers that judge many claims per call (local NLI models: batching is where their
speed is) get chunks of claims; every other verifier gets one claim per call. Both run
through the stage's executor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from assay.core.answers import Passage
from assay.core.records import ClaimRecord, VerificationRecord
from assay.core.verification import ClaimToVerify, Verdict, Verifier
from assay.runs.execute._executor import StageContext
from assay.runs.plan._plan import ClaimWork, pending
from assay.runs.stages._decompose import Answers
from assay.runs.store._manifest import identity_fields
from assay.runs.store._store import RecordLog

CHUNK = 256


def claim_inputs(answers: Answers) -> Callable[[ClaimRecord], ClaimToVerify]:
    """What a verifier sees for a claim: its answer's question and text, and the claim's
    own gold evidence or else the answer's (shared with the dry run)."""
    items = {(ds, a.id): a for ds, a in answers}
    gold_evidence = {(ds, a.id, c.id): c.evidence for ds, a in answers for c in a.gold_claims or []}

    def to_verify(c: ClaimRecord) -> ClaimToVerify:
        answer = items[(c.dataset, c.answer_id)]
        evidence: list[Passage] = list(
            gold_evidence.get((c.dataset, c.answer_id, c.claim_id)) or answer.evidence
        )
        return ClaimToVerify(
            claim_id=c.claim_id,
            claim=c.claim,
            question=answer.question,
            answer=answer.answer,
            evidence=evidence,
        )

    return to_verify


class VerifyStage:
    """Resolves claim work items to claims and verifiers, and records each verdict."""

    def __init__(self, answers: Answers, verifiers: Sequence[Verifier]) -> None:
        self.verifiers = list(verifiers)
        self.by_id = {v.id: v for v in self.verifiers}
        self.to_verify = claim_inputs(answers)
        self._fields = {v.id: identity_fields(v.describe()) for v in self.verifiers}
        self._claims: dict[tuple[str, str, str], ClaimRecord] = {}

    def plan(self, claims: Sequence[ClaimRecord]) -> list[ClaimWork]:
        """Every (verifier, claim), verifier by verifier."""
        self._claims = {c.key: c for c in claims}
        return [
            ClaimWork(
                dataset=c.dataset, answer_id=c.answer_id, claim_id=c.claim_id, verifier_id=v.id
            )
            for v in self.verifiers
            for c in claims
        ]

    def _record(self, work: ClaimWork, verdict: Verdict) -> VerificationRecord:
        claim = self._claims[work.claim_key]
        values = {**verdict.model_dump(), **self._fields[work.verifier_id]}
        values.update(
            dataset=claim.dataset,
            answer_id=claim.answer_id,
            claim_id=claim.claim_id,
            sentence_id=claim.sentence_id,
            claim=claim.claim,
            verifier_id=work.verifier_id,
            label=verdict.label.value if verdict.label is not None else None,
            gold_label=claim.gold_label,
            latency_s=round(verdict.latency_s, 6),
            recorded_at=datetime.now(UTC),
        )
        return VerificationRecord.model_validate(values)

    async def verify(self, work: ClaimWork) -> VerificationRecord:
        verifier = self.by_id[work.verifier_id]
        verdict = await verifier.verify(self.to_verify(self._claims[work.claim_key]))
        return self._record(work, verdict)

    async def verify_chunk(self, chunk: Sequence[ClaimWork]) -> list[VerificationRecord]:
        """One call for many claims of one verifier (`verify_many`)."""
        verifier: Any = self.by_id[chunk[0].verifier_id]
        verdicts = await verifier.verify_many(
            [self.to_verify(self._claims[w.claim_key]) for w in chunk]
        )
        return [self._record(w, v) for w, v in zip(chunk, verdicts, strict=True)]

    def chunks(self, todo: Sequence[ClaimWork]) -> list[list[ClaimWork]]:
        """The batched verifiers' items, `CHUNK` claims of one verifier at a time."""
        out: list[list[ClaimWork]] = []
        for verifier in self.verifiers:
            if hasattr(verifier, "verify_many"):
                mine = [w for w in todo if w.verifier_id == verifier.id]
                out += [mine[i : i + CHUNK] for i in range(0, len(mine), CHUNK)]
        return out

    async def run(
        self, claims: Sequence[ClaimRecord], log: RecordLog[VerificationRecord], ctx: StageContext
    ) -> None:
        """Verify every claim not yet verified (or verified with a status to redo)."""
        for key in [k for k, r in log.records.items() if r.status in ctx.redo]:
            del log.records[key]
        todo = pending(self.plan(claims), log.records, ctx.redo)
        done = len(log.records)
        ctx.progress.start("verifying", total=len(todo) + done, done=done)

        def keep(record: VerificationRecord) -> None:
            log.append(record)
            ctx.progress.advance(record.status, cache_hit=record.cache_hit)
            ctx.count(record.status)

        async def batch(chunk: list[ClaimWork]) -> None:
            for record in await self.verify_chunk(chunk):
                keep(record)

        async def single(work: ClaimWork) -> None:
            keep(await self.verify(work))

        batched = {v.id for v in self.verifiers if hasattr(v, "verify_many")}
        await ctx.executor.run(self.chunks(todo), batch, workers=1, abort=ctx.abort)
        await ctx.run([w for w in todo if w.verifier_id not in batched], single)
