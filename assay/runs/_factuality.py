"""The decompose-then-verify stage of a run: answers -> claims -> verdicts -> scores.

Files in the run directory (all append-only, last line per key wins):
- `sentences.jsonl`: one line per decomposed sentence, holding its claims. It is the
  source of truth for claims because a sentence and its claims land in one write.
- `claims.jsonl`: one line per claim, derived from sentences.jsonl after the stage.
- `verifications.jsonl`: one line per (claim, verifier).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.core.answers import AnswerItem, Passage
from assay.core.decomposition import Decomposer, Decomposition, Sentence
from assay.core.outcomes import Status
from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord
from assay.core.verification import ClaimToVerify, Verdict, Verifier
from assay.errors import SpecError
from assay.prompts import PromptRegistry
from assay.runs._build import ClientPool, at_spec_field, decoding_for, model_config_for
from assay.runs._given import given_records
from assay.runs._manifest import identity_fields
from assay.runs._metrics import ANSWERS_FILE, CLAIMS_FILE, SENTENCES_FILE, VERIFICATIONS_FILE
from assay.runs._pool import run_pool
from assay.runs._spec import FactualitySpec, LoadedSpec, VerifierSpec
from assay.runs._store import JudgmentWriter, iter_jsonl, write_jsonl_atomic

DEFAULT_PROMPTS = {
    "internal": "verify-internal@1",
    "context": "verify-context@1",
    "retrieval": "verify-context@1",
    "nli": "nli-entailment@1",
}

Counter_ = Callable[[str, Status], None]


def _now() -> datetime:
    return datetime.now(UTC)


def _or_default(value: float | None, default: float) -> float:
    """An explicit 0 is a setting, not a missing value (`value or default` would drop it)."""
    return default if value is None else value


class _GivenDecomposer:
    """Uses the claims a dataset ships (e.g. ExpertQA): no decomposition is run."""

    @property
    def id(self) -> str:
        return "given"

    def describe(self) -> dict[str, Any]:
        return {"kind": "given", "id": self.id}

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition:
        raise AssertionError("given claims are read from the dataset, not decomposed")


class FactualityStage:
    """Plans, executes and summarises the factuality pipeline of one run."""

    def __init__(
        self,
        loaded: LoadedSpec,
        spec: FactualitySpec,
        *,
        pool: ClientPool,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        from assay.datasets import load_answers

        self.loaded = loaded
        self.spec = spec
        base = Path(loaded.base_dir)
        self.datasets = []
        for i, d in enumerate(spec.datasets):
            with at_spec_field(loaded.path, f"factuality.datasets[{i}]"):
                self.datasets.append(load_answers(d.path, format=d.format, name=d.name, base=base))
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise SpecError(
                "two answer datasets share a name; set `name`",
                file=loaded.path,
                field="factuality.datasets",
            )
        self.registry = PromptRegistry([base / d for d in loaded.spec.prompt_dirs])
        self.pool = pool
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache
        self.decomposer = self._build_decomposer()
        self.verifiers = [self._build_verifier(i, v) for i, v in enumerate(spec.verifiers)]
        ids = [v.id for v in self.verifiers]
        if len(set(ids)) != len(ids):
            raise SpecError(
                "two verifiers share an id; set `name`",
                file=loaded.path,
                field="factuality.verifiers",
            )

    # ---- building -------------------------------------------------------------------
    def _spec_error(self, exc: Exception, field: str) -> SpecError:
        msg = getattr(exc, "message", None) or str(exc)
        return SpecError(msg, file=self.loaded.path, field=field)

    def _build_decomposer(self) -> Decomposer:
        from assay.decomposers import LLMDecomposer, SentenceDecomposer

        d = self.spec.decomposer
        if d.kind == "given":
            missing = [a.id for ds in self.datasets for a in ds.items if a.gold_claims is None]
            if missing:
                raise SpecError(
                    f"decomposer kind 'given' needs claims in the data; answer {missing[0]!r} "
                    "has none",
                    file=self.loaded.path,
                    field="factuality.decomposer.kind",
                )
            return _GivenDecomposer()
        if d.kind == "sentence":
            return SentenceDecomposer()
        assert d.model is not None
        try:
            prompt = self.registry.get(d.prompt)
            prompt.check_task(("decompose",), "decomposer")
        except Exception as exc:
            raise self._spec_error(exc, "factuality.decomposer.prompt") from None
        try:
            client = self.pool.get(model_config_for(d, self.loaded.spec.defaults, d.model))
        except Exception as exc:
            raise self._spec_error(exc, "factuality.decomposer") from None
        return LLMDecomposer(
            client,
            prompt,
            decoding=decoding_for(d, self.loaded.spec.defaults),
            name=d.name,
            use_cache=self.use_cache,
            refresh_cache=self.refresh_cache,
        )

    def _build_verifier(self, index: int, v: VerifierSpec) -> Verifier:
        field = f"factuality.verifiers[{index}]"
        try:
            return self._make_verifier(v)
        except SpecError:
            raise
        except Exception as exc:
            raise self._spec_error(exc, field) from None

    def _make_verifier(self, v: VerifierSpec) -> Verifier:
        from assay.verifiers import LLMVerifier, OverlapVerifier

        if v.kind == "overlap":
            return OverlapVerifier(threshold=_or_default(v.threshold, 0.7), name=v.name)
        assert v.model is not None
        if v.kind == "nli-local":
            from assay.verifiers import LocalNLIVerifier

            local: Verifier = LocalNLIVerifier(
                v.model,
                threshold=_or_default(v.threshold, 0.8),
                batch_size=v.batch_size,
                label_map=v.label_map,
                name=v.name,
            )
            return local
        prompt = self.registry.get(v.prompt or DEFAULT_PROMPTS[v.kind])
        client = self.pool.get(model_config_for(v, self.loaded.spec.defaults, v.model))
        retriever = None
        if v.kind == "retrieval":
            retriever = self._retriever(v)
        return LLMVerifier(
            client,
            prompt,
            kind=v.kind,
            decoding=decoding_for(v, self.loaded.spec.defaults),
            parser=v.parser,
            threshold=_or_default(v.threshold, 0.8),
            retriever=retriever,
            top_k=v.top_k,
            name=v.name,
            use_cache=self.use_cache,
            refresh_cache=self.refresh_cache,
        )

    def _retriever(self, v: VerifierSpec) -> Any:
        from assay.retrieval import (
            BM25Retriever,
            DenseRetriever,
            HybridRetriever,
            TransformersEmbedder,
            load_corpus,
        )

        assert v.corpus is not None
        corpus_path = Path(v.corpus)
        if not corpus_path.is_absolute():
            corpus_path = Path(self.loaded.base_dir) / corpus_path
        corpus = load_corpus(corpus_path)
        bm25 = BM25Retriever(corpus)
        if not v.dense_model:
            return bm25
        dense = DenseRetriever(corpus, TransformersEmbedder(v.dense_model))
        return HybridRetriever(bm25, dense)

    # ---- planning and running -------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "datasets": [
                {
                    "name": d.name,
                    "path": d.path,
                    "sha256": d.sha256,
                    "format": d.format,
                    "rows": len(d.items),
                }
                for d in self.datasets
            ],
            "decomposer": self.decomposer.describe(),
            "verifiers": [v.describe() for v in self.verifiers],
            "length_penalty": self.spec.length_penalty,
        }

    def answers(self) -> list[tuple[str, AnswerItem]]:
        return [(ds.name, item) for ds in self.datasets for item in ds.items]

    def recorded_sentences(
        self, run_dir: Path, redo: set[Status] | None = None
    ) -> dict[tuple[str, str, int], SentenceRecord]:
        """Sentences an earlier session recorded, less those to redo (read-only)."""
        done = {r.key: r for r in iter_jsonl(run_dir / SENTENCES_FILE, SentenceRecord)}
        return {k: r for k, r in done.items() if r.status not in (redo or set())}

    def sentence_work(
        self, done: Mapping[tuple[str, str, int], Any]
    ) -> list[tuple[str, AnswerItem, Sentence]]:
        """(dataset, answer, sentence) still to decompose; also `assay run --dry-run`'s plan."""
        from assay.decomposers import split_sentences

        return [
            (ds_name, item, sentence)
            for ds_name, item in self.answers()
            for sentence in split_sentences(item.answer)
            if (ds_name, item.id, sentence.id) not in done
        ]

    async def decompose_all(
        self,
        run_dir: Path,
        *,
        workers: int,
        abort: asyncio.Event,
        on_record: Callable[[Status], None],
        progress: Any,
        redo: set[Status] | None = None,
    ) -> dict[tuple[str, str, int], SentenceRecord]:
        self.write_answers(run_dir)
        writer = JudgmentWriter(run_dir / SENTENCES_FILE)  # repairs a torn last line first
        done = self.recorded_sentences(run_dir, redo)
        work: list[tuple[str, AnswerItem, Sentence]] = []
        if isinstance(self.decomposer, _GivenDecomposer):
            started = {key[:2] for key in done}
            for ds_name, item in self.answers():
                if (ds_name, item.id) in started:  # resumed: keep what was recorded
                    continue
                for record in _given_records(ds_name, item):
                    writer.write(record)
                    done[record.key] = record
        else:
            work = self.sentence_work(done)
        fields = identity_fields(self.decomposer.describe())
        progress.start("decomposing", total=len(work) + len(done), done=len(done))

        async def handle(job: tuple[str, AnswerItem, Sentence]) -> None:
            ds_name, item, sentence = job
            result = await self.decomposer.decompose(
                sentence, answer=item.answer, answer_id=item.id, question=item.question
            )
            record = SentenceRecord(
                dataset=ds_name,
                answer_id=item.id,
                sentence_id=sentence.id,
                sentence=sentence.text,
                span=sentence.span,
                decomposer_id=self.decomposer.id,
                status=result.status,
                n_claims=len(result.claims),
                claims=result.claims,
                raw_output=result.raw_output,
                error=result.error,
                attempts=result.attempts,
                cache_hit=result.cache_hit,
                latency_s=round(result.latency_s, 6),
                usage=result.usage,
                recorded_at=_now(),
                **fields,
            )
            writer.write(record)
            done[record.key] = record
            progress.advance(record.status, cache_hit=record.cache_hit)
            on_record(record.status)

        try:
            await run_pool(work, handle, workers=workers, abort=abort)
        finally:
            writer.close()
        return done

    def claim_records(
        self, sentences: dict[tuple[str, str, int], SentenceRecord]
    ) -> list[ClaimRecord]:
        gold = {
            (ds, item.id, c.id): c.label
            for ds, item in self.answers()
            for c in item.gold_claims or []
        }
        out: list[ClaimRecord] = []
        for rec in sorted(
            sentences.values(), key=lambda r: (r.dataset, r.answer_id, r.sentence_id)
        ):
            for claim in rec.claims:
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
                        gold_label=gold.get((rec.dataset, rec.answer_id, claim.id)),
                    )
                )
        return out

    def recorded_verifications(
        self, run_dir: Path, redo: set[Status] | None = None
    ) -> dict[tuple[str, str, str, str], VerificationRecord]:
        """Verdicts an earlier session recorded, less those to redo (read-only)."""
        done = {r.key: r for r in iter_jsonl(run_dir / VERIFICATIONS_FILE, VerificationRecord)}
        return {k: r for k, r in done.items() if r.status not in (redo or set())}

    def claim_inputs(self) -> Callable[[ClaimRecord], ClaimToVerify]:
        """What a verifier sees for a claim: its answer's question and text, and the
        claim's own gold evidence or else the answer's (shared with the dry run)."""
        items = {(ds, a.id): a for ds, a in self.answers()}
        gold_evidence = {
            (ds, a.id, c.id): c.evidence for ds, a in self.answers() for c in a.gold_claims or []
        }

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

    async def verify_all(
        self,
        run_dir: Path,
        claims: list[ClaimRecord],
        *,
        workers: int,
        abort: asyncio.Event,
        on_record: Callable[[Status], None],
        progress: Any,
        redo: set[Status] | None = None,
    ) -> dict[tuple[str, str, str, str], VerificationRecord]:
        writer = JudgmentWriter(run_dir / VERIFICATIONS_FILE)  # repairs a torn last line first
        done = self.recorded_verifications(run_dir, redo)
        to_verify = self.claim_inputs()
        todo: list[tuple[Verifier, ClaimRecord]] = [
            (v, c)
            for v in self.verifiers
            for c in claims
            if (c.dataset, c.answer_id, c.claim_id, v.id) not in done
        ]
        progress.start("verifying", total=len(todo) + len(done), done=len(done))

        def record(v: Verifier, c: ClaimRecord, verdict: Verdict) -> None:
            info = fields[v.id]
            rec = VerificationRecord(
                dataset=c.dataset,
                answer_id=c.answer_id,
                claim_id=c.claim_id,
                sentence_id=c.sentence_id,
                claim=c.claim,
                verifier_id=v.id,
                status=verdict.status,
                label=verdict.label.value if verdict.label is not None else None,
                score=verdict.score,
                evidence=[e.model_dump() for e in verdict.evidence],
                gold_label=c.gold_label,
                attempts=verdict.attempts,
                latency_s=round(verdict.latency_s, 6),
                usage=verdict.usage,
                cache_hit=verdict.cache_hit,
                raw_output=verdict.raw_output,
                parsed=verdict.parsed,
                error=verdict.error,
                recorded_at=_now(),
                **info,
            )
            writer.write(rec)
            done[rec.key] = rec
            progress.advance(rec.status, cache_hit=rec.cache_hit)
            on_record(rec.status)

        fields = {v.id: identity_fields(v.describe()) for v in self.verifiers}
        batched = [(v, c) for v, c in todo if hasattr(v, "verify_many")]
        single = [(v, c) for v, c in todo if not hasattr(v, "verify_many")]

        async def handle(job: tuple[Verifier, ClaimRecord]) -> None:
            v, c = job
            record(v, c, await v.verify(to_verify(c)))

        try:
            await _run_batched(batched, to_verify, record, abort)
            await run_pool(single, handle, workers=workers, abort=abort)
        finally:
            writer.close()
        return done

    def write_answers(self, run_dir: Path) -> None:
        """The response universe (and gold factuality) so metrics rebuild from the run dir."""
        from pydantic import BaseModel

        class _Answer(BaseModel):
            dataset: str
            answer_id: str
            question: str | None
            answer_chars: int
            gold_factuality: float | None

        write_jsonl_atomic(
            run_dir / ANSWERS_FILE,
            [
                _Answer(
                    dataset=ds,
                    answer_id=a.id,
                    question=a.question,
                    answer_chars=len(a.answer),
                    gold_factuality=a.gold_factuality,
                )
                for ds, a in self.answers()
            ],
        )

    def write_claims(self, run_dir: Path, claims: list[ClaimRecord]) -> None:
        write_jsonl_atomic(run_dir / CLAIMS_FILE, claims)

    def planned_verifications(self, n_claims: int) -> int:
        return n_claims * len(self.verifiers)


async def _run_batched(
    jobs: list[tuple[Verifier, ClaimRecord]],
    to_verify: Callable[[ClaimRecord], ClaimToVerify],
    record: Callable[[Verifier, ClaimRecord, Verdict], None],
    abort: asyncio.Event,
    chunk: int = 256,
) -> None:
    """Local NLI verifiers take many claims per call: batching is where their speed is."""
    by_verifier: dict[int, list[tuple[Verifier, ClaimRecord]]] = {}
    for job in jobs:
        by_verifier.setdefault(id(job[0]), []).append(job)
    for group in by_verifier.values():
        verifier = group[0][0]
        many: Callable[[list[ClaimToVerify]], Awaitable[list[Verdict]]] = verifier.verify_many  # type: ignore[attr-defined]
        for start in range(0, len(group), chunk):
            if abort.is_set():
                return
            part = group[start : start + chunk]
            verdicts = await many([to_verify(c) for _, c in part])
            for (v, c), verdict in zip(part, verdicts, strict=True):
                record(v, c, verdict)


def _given_records(dataset: str, item: AnswerItem) -> list[SentenceRecord]:
    """The dataset's own claims, placed in the answer's sentences where they can be."""
    return given_records(dataset, item)


def stage_stats(records: list[Any]) -> dict[str, Any]:
    """Requests, cache hits, retries and statuses for a list of stage records."""
    by_status = Counter(r.status.value for r in records)
    sent = [r for r in records if not r.cache_hit]
    costs = [r.usage.cost_usd for r in sent if r.usage.cost_usd is not None]
    return {
        "recorded": len(records),
        "requests_sent": sum(r.attempts for r in sent),
        "cache_hits": sum(1 for r in records if r.cache_hit),
        "retries": sum(max(r.attempts - 1, 0) for r in sent),
        "by_status": {s.value: by_status.get(s.value, 0) for s in Status},
        "tokens": {
            "prompt": sum(r.usage.prompt_tokens for r in records),
            "completion": sum(r.usage.completion_tokens for r in records),
        },
        "cost_usd": round(sum(costs), 6) if costs else None,
    }
