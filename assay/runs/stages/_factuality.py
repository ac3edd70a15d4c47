"""The factuality pipeline of a run: answers -> claims -> verdicts -> scores.

Files in the run directory (all append-only, last line per key wins):
- `sentences.jsonl`: one line per decomposed sentence, holding its claims. It is the
  source of truth for claims because a sentence and its claims land in one write.
- `claims.jsonl`: one line per claim, derived from sentences.jsonl after the stage.
- `verifications.jsonl`: one line per (claim, verifier).

This module builds the pipeline's components and composes the decompose and verify
stages (`_stage_decompose`, `_stage_verify`); retrieval happens inside the verifiers
that use it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.core.answer_fields import response_fields_of
from assay.core.answers import AnswerItem
from assay.core.decomposition import Decomposer, Sentence
from assay.core.manifest import FactualitySection, Manifest
from assay.core.outcomes import Status
from assay.core.records import AnswerRecord, ClaimRecord, SentenceRecord, VerificationRecord
from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
)
from assay.core.verification import ClaimToVerify, Verifier
from assay.errors import SpecError
from assay.runs.assemble._build import factuality_clients_to_check
from assay.runs.assemble._components import (
    ClientPool,
    ComponentContext,
    at_spec_field,
    build_decomposer,
    build_verifiers,
)
from assay.runs.execute._executor import StageContext
from assay.runs.execute._failure_policy import NOT_OK, FailureBudget, StageTally, first_error, tally
from assay.runs.spec._spec import FactualitySpec, FailurePolicy, LoadedSpec
from assay.runs.stages._decompose import DecomposeStage, claim_records
from assay.runs.stages._protocol import Judged, StageRun, ToCheck
from assay.runs.stages._verify import VerifyStage, claim_inputs
from assay.runs.store._manifest import FACTUALITY_OUTPUTS, factuality_section
from assay.runs.store._resume import check_same_data, check_same_versions
from assay.runs.store._store import RecordLog, write_jsonl_atomic


class FactualityStage:
    """Builds, runs and summarises the factuality pipeline of one run.

    A `decomposer` passed in replaces the spec's; `verifiers` passed in follow the
    spec's. After `run`, `sentences`, `claims` and `verifications` hold the records."""

    name = "factuality"
    written = 0  # its records are not counted in a session's `written` (judgments are)

    def __init__(
        self,
        loaded: LoadedSpec,
        spec: FactualitySpec,
        *,
        pool: ClientPool,
        use_cache: bool = True,
        refresh_cache: bool = False,
        decomposer: Decomposer | None = None,
        verifiers: Sequence[Verifier] = (),
    ) -> None:
        from assay.datasets import load_answers

        self.loaded = loaded
        self.spec = spec
        self.pool = pool
        base = Path(loaded.base_dir)
        self.datasets = []
        for i, d in enumerate(spec.datasets):
            with at_spec_field(loaded.path, f"factuality.datasets[{i}]"):
                evidence = d.evidence_file
                answers = load_answers(
                    d.path, format=d.format, name=d.name, base=base, evidence_file=evidence
                )
                self.datasets.append(answers)
        self._refuse_repeats([d.name for d in self.datasets], "answer datasets share a name")
        ctx = ComponentContext(
            loaded, pool, use_cache=use_cache, refresh_cache=refresh_cache, answers=self.datasets
        )
        if decomposer is None:
            decomposer = build_decomposer(loaded, spec, ctx)
        self.decomposer = decomposer
        self.verifiers: list[Verifier] = [*build_verifiers(loaded, spec, ctx), *verifiers]
        self._refuse_repeats([v.id for v in self.verifiers], "verifiers share an id")
        self.decompose_stage = DecomposeStage(self.answers(), self.decomposer)
        self.verify_stage = VerifyStage(self.answers(), self.verifiers)
        self.sentences: dict[Any, SentenceRecord] = {}  # the stages' logs, live while they run
        self.claims: list[ClaimRecord] | None = None
        self.verifications: dict[Any, VerificationRecord] | None = None

    def _refuse_repeats(self, names: list[str], problem: str) -> None:
        if len(set(names)) != len(names):
            field = "factuality.verifiers" if "verifiers" in problem else "factuality.datasets"
            raise SpecError(f"two {problem}; set `name`", file=self.loaded.path, field=field)

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
            "decomposer": {**self.decomposer.describe(), "id": self.decomposer.id},
            "verifiers": [{**v.describe(), "id": v.id} for v in self.verifiers],
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

    def sentence_work(self, done: Mapping[Any, Any]) -> list[tuple[str, AnswerItem, Sentence]]:
        """(dataset, answer, sentence) still to decompose; also `assay run --dry-run`'s plan."""
        return self.decompose_stage.sentence_work(done)

    def claim_records(self, sentences: Mapping[Any, SentenceRecord]) -> list[ClaimRecord]:
        return claim_records(self.answers(), sentences)

    def recorded_verifications(
        self, run_dir: Path, redo: set[Status] | None = None
    ) -> dict[tuple[str, str, str, str], VerificationRecord]:
        """Verdicts an earlier session recorded, less those to redo (read-only)."""
        done = {r.key: r for r in iter_jsonl(run_dir / VERIFICATIONS_FILE, VerificationRecord)}
        return {k: r for k, r in done.items() if r.status not in (redo or set())}

    def claim_inputs(self) -> Callable[[ClaimRecord], ClaimToVerify]:
        return claim_inputs(self.answers())

    def planned_verifications(self, n_claims: int) -> int:
        return n_claims * len(self.verifiers)

    def planned(self) -> int:
        """Sentences plus verifications planned so far (claims known after decomposing)."""
        verifying = self.planned_verifications(len(self.claims)) if self.claims is not None else 0
        return len(self.sentences) + verifying

    def failed(self, failing: set[Status]) -> int:
        records: list[SentenceRecord | VerificationRecord] = [*self.sentences.values()]
        records += (self.verifications or {}).values()
        return sum(1 for r in records if r.status in failing)

    def planned_sentences(self) -> int:
        return max(len(self.decompose_stage.plan()), len(self.sentences))

    def tallies(self, failing: set[Status]) -> list[StageTally]:
        """The decompose stage (every status but ok fails: a sentence not decomposed
        has no claim) and the verify stage (the policy's statuses), each on its own."""
        decomposed = (r.status for r in self.sentences.values())
        out = [
            tally(
                "decompose",
                "sentences",
                self.planned_sentences(),
                decomposed,
                NOT_OK,
                SENTENCES_FILE,
                first_error(self.sentences.values(), NOT_OK),
            )
        ]
        if self.claims is not None:
            verified = (r.status for r in (self.verifications or {}).values())
            planned = self.planned_verifications(len(self.claims))
            example = first_error((self.verifications or {}).values(), failing)
            file = VERIFICATIONS_FILE
            out.append(tally("verify", "verifications", planned, verified, failing, file, example))
        return out

    def done(self) -> bool:
        """Every planned verification recorded (so every sentence decomposed)."""
        if self.claims is None or self.verifications is None:
            return False
        return len(self.verifications) >= self.planned_verifications(len(self.claims))

    def manifest_section(self) -> FactualitySection:
        """The manifest's `factuality`: components and counters as far as the run got."""
        n_claims = len(self.claims) if self.claims is not None else None
        return factuality_section(
            self.describe(),
            list(self.sentences.values()),
            list((self.verifications or {}).values()),
            self.planned_verifications(n_claims) if n_claims is not None else None,
            n_claims,
        )

    async def run(self, run_dir: Path, ctx: StageContext, policy: FailurePolicy) -> None:
        """Decompose, derive the claims, then verify; a set `abort` (or a stage over its
        failure budget) stops between stages. The record dicts are live while a stage
        runs, so an interrupted run's manifest counts what was saved."""
        write_jsonl_atomic(run_dir / ANSWERS_FILE, self._answer_rows())
        sentences = RecordLog(run_dir / SENTENCES_FILE, SentenceRecord)
        self.sentences = sentences.resume()
        kept = [r.status for r in self.sentences.values() if r.status not in ctx.redo]
        budget = FailureBudget(policy, self.planned_sentences(), kept, ctx.abort, NOT_OK)
        decompose_ctx = replace(ctx, on_record=budget.count)
        await _closing(sentences, self.decompose_stage.run(sentences, decompose_ctx))
        if ctx.abort.is_set() or budget.failed > budget.limit:
            return
        self.claims = self.claim_records(self.sentences)
        write_jsonl_atomic(run_dir / CLAIMS_FILE, self.claims)
        verifications = RecordLog(run_dir / VERIFICATIONS_FILE, VerificationRecord)
        self.verifications = verifications.resume()
        kept = [r.status for r in self.verifications.values() if r.status not in ctx.redo]
        planned = self.planned_verifications(len(self.claims))
        budget = FailureBudget(policy, planned, kept, ctx.abort)
        verify_ctx = replace(ctx, on_record=budget.count)
        await _closing(verifications, self.verify_stage.run(self.claims, verifications, verify_ctx))

    # ---- the stage protocol (`_protocol.Stage`) ---------------------------------------
    def manifest_datasets(self) -> list[Any]:
        return []  # its answers are listed in its own section

    def check_resumable(self, manifest: Manifest, where: Path) -> None:
        """Same answers, and no verifier whose code version changed."""
        check_same_data(manifest, self.datasets)
        check_same_versions(manifest, self.verifiers, where)

    def outputs(self) -> dict[str, str]:
        return dict(FACTUALITY_OUTPUTS)

    def load(self, run_dir: Path, redo: set[Status]) -> None:
        """Nothing before it runs: its sentences and verdicts are read by `run`."""

    def preflight(self, existing: Manifest | None) -> ToCheck:
        old = existing.dump() if existing is not None else None
        return ToCheck(clients=tuple(factuality_clients_to_check(self, old)))

    def todo(self) -> int:
        return 0  # its work is known once decomposed: a session's `todo` counts judgments

    async def execute(self, run: StageRun) -> None:
        await self.run(run.run_dir, replace(run.ctx, workers=stage_budget(self.pool)), run.policy)

    def close(self) -> None:
        """Nothing open: `run` closes each log however it ends."""

    def judged(self) -> Judged | None:
        return None

    def add_to_manifest(self, manifest: Manifest) -> None:
        manifest.factuality = self.manifest_section()

    def outcome(self) -> dict[str, Any]:
        """How many verdicts were planned and recorded (None before the claims are known)."""
        claims, verified = self.claims, self.verifications
        return {
            "verifications_planned": (
                self.planned_verifications(len(claims)) if claims is not None else None
            ),
            "verifications_recorded": len(verified) if verified is not None else None,
        }

    def metrics_options(self) -> dict[str, Any]:
        return {"length_penalty": self.spec.length_penalty}

    def _answer_rows(self) -> list[AnswerRecord]:
        """The response universe (and gold factuality) so metrics rebuild from the run dir."""
        return [
            AnswerRecord(
                dataset=ds,
                answer_id=a.id,
                question=a.question,
                answer_chars=len(a.answer),
                gold_factuality=a.gold_factuality,
                source=a.source,
                **response_fields_of(a),
            )
            for ds, a in self.answers()
        ]


async def _closing(log: RecordLog[Any], work: Awaitable[None]) -> None:
    """Run a stage over an open record log, and close the log however it ends."""
    try:
        await work
    finally:
        log.close()


def stage_budget(pool: ClientPool) -> int:
    """Workers for a factuality stage: enough for every client's concurrency slots."""
    return min(max(pool.total_concurrency(), 4), 1024)
