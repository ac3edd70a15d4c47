"""The decompose stage: answers' sentences in, `sentences.jsonl` records (each holding
its claims) out; `claims.jsonl` is derived from them once the stage is done."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from assay.core.answer_fields import claim_fields_of
from assay.core.answers import AnswerItem
from assay.core.decomposition import Decomposer, Sentence
from assay.core.records import ClaimRecord, SentenceRecord
from assay.runs.assemble._given import given_records
from assay.runs.execute._executor import StageContext
from assay.runs.plan._plan import SentenceWork, pending
from assay.runs.store._manifest import identity_fields
from assay.runs.store._store import RecordLog

Answers = Sequence[tuple[str, AnswerItem]]


class DecomposeStage:
    """Resolves sentence work items to answers, and records each decomposition."""

    def __init__(self, answers: Answers, decomposer: Decomposer) -> None:
        from assay.decomposers import split_sentences

        self.answers = list(answers)
        self.decomposer = decomposer
        self._sentences = {
            (ds, item.id, s.id): (item, s)
            for ds, item in self.answers
            for s in split_sentences(item.answer)
        }
        self._fields = identity_fields(decomposer.describe())

    def plan(self) -> list[SentenceWork]:
        """Every sentence of every answer, in answer order."""
        return [
            SentenceWork(dataset=k[0], answer_id=k[1], sentence_id=k[2]) for k in self._sentences
        ]

    def sentence_work(self, done: Mapping[Any, Any]) -> list[tuple[str, AnswerItem, Sentence]]:
        """(dataset, answer, sentence) not in `done`, resolved: what `--dry-run` prices."""
        return [(w.dataset, *self._sentences[w.key]) for w in self.plan() if w.key not in done]

    async def decompose(self, work: SentenceWork) -> SentenceRecord:
        item, sentence = self._sentences[work.key]
        result = await self.decomposer.decompose(
            sentence, answer=item.answer, answer_id=item.id, question=item.question
        )
        values = {**result.model_dump(), **self._fields}
        values.update(
            dataset=work.dataset,
            answer_id=item.id,
            sentence_id=sentence.id,
            sentence=sentence.text,
            span=sentence.span,
            decomposer_id=self.decomposer.id,
            n_claims=len(result.claims),
            latency_s=round(result.latency_s, 6),
            recorded_at=datetime.now(UTC),
        )
        return SentenceRecord.model_validate(values)

    def record_given(self, log: RecordLog[SentenceRecord]) -> None:
        """The data's own claims, for every answer no earlier session started."""
        started = {key[:2] for key in log.records}
        for ds_name, item in self.answers:
            if (ds_name, item.id) not in started:  # resumed: keep what was recorded
                for record in given_records(ds_name, item):
                    log.append(record)

    async def run(self, log: RecordLog[SentenceRecord], ctx: StageContext) -> None:
        """Decompose what `log` does not hold yet (or holds with a status to redo)."""
        for key in [k for k, r in log.records.items() if r.status in ctx.redo]:
            del log.records[key]
        todo: list[SentenceWork] = []
        if getattr(self.decomposer, "claims_from_data", False):  # e.g. ExpertQA's claims
            self.record_given(log)
        else:
            todo = pending(self.plan(), log.records, ctx.redo)
        done = len(log.records)
        ctx.progress.start("decomposing", total=len(todo) + done, done=done)

        async def handle(work: SentenceWork) -> None:
            record = await self.decompose(work)
            log.append(record)
            ctx.progress.advance(record.status, cache_hit=record.cache_hit)
            ctx.count(record.status)

        await ctx.run(todo, handle)


def claim_records(answers: Answers, sentences: Mapping[Any, SentenceRecord]) -> list[ClaimRecord]:
    """One record per claim, sentences in order, with the data's gold label and claim
    fields if any."""
    gold = {(ds, item.id, c.id): c for ds, item in answers for c in item.gold_claims or []}
    out: list[ClaimRecord] = []
    for rec in sorted(sentences.values(), key=lambda r: (r.dataset, r.answer_id, r.sentence_id)):
        for claim in rec.claims:
            given = gold.get((rec.dataset, rec.answer_id, claim.id))
            out.append(
                ClaimRecord(
                    dataset=rec.dataset,
                    answer_id=rec.answer_id,
                    sentence_id=rec.sentence_id,
                    claim_id=claim.id,
                    claim=claim.text,
                    span=claim.span,
                    decomposer_id=rec.decomposer_id,
                    model=rec.model,
                    prompt_id=rec.prompt_id,
                    prompt_version=rec.prompt_version,
                    prompt_sha256=rec.prompt_sha256,
                    gold_label=given.label if given else None,
                    **(claim_fields_of(given) if given else {}),
                )
            )
    return out
