"""`assay run SPEC --dry-run`: what a run would send, and roughly what it would cost.

The plan is the runner's own (same judges, rendered prompts, resume rule and cache keys);
nothing is sent, no run directory is created and no key is needed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.core.decomposition import Sentence
from assay.core.outcomes import Status
from assay.core.pairs import ForcePair
from assay.core.records import ClaimRecord, SentenceRecord
from assay.core.rundir import JUDGMENTS_FILE, latest_records
from assay.core.verification import ClaimToVerify
from assay.errors import AssayError
from assay.models import ChatRequest
from assay.models._batch import BatchPricing
from assay.models._budget import Budget
from assay.runs.assemble._given import given_records
from assay.runs.plan._plan import ItemWork, JudgeWork, redo_statuses
from assay.runs.preview._budget_fit import BudgetFit, budget_fit, worst_case
from assay.runs.preview._estimate import OUTPUT_HOW, TOKENS_HOW, Estimator
from assay.runs.runner._runner import Runner, RunOptions
from assay.runs.spec._spec import LoadedSpec
from assay.runs.stages._batch import is_batch_judge
from assay.runs.stages._factuality import FactualityStage
from assay.runs.stages._judge import item_of

AFTER = "after decomposition"


class PlanRow(BaseModel):
    """One judge, decomposer or verifier of the plan. None = not known before the run."""

    stage: Literal["judge", "decomposer", "verifier", "gate"]
    id: str
    model: str | None = Field(description="None for components that call no model.")
    items: int | None = Field(description="Pair members, sentences, answers or claims.")
    requests: int | None = Field(description="Model requests planned in all (0: no model).")
    recorded: int | None = Field(description="Already in the run directory (resume).")
    cached: int | None = Field(description="Of the rest, served by the response cache.")
    to_send: int | None
    input_tokens: int | None = Field(description="Prompt tokens of the requests to send.")
    output_tokens_max: int | None = Field(description="max_tokens x requests to send.")
    cost_usd_min: float | None = Field(description="Input tokens only; None: no price.")
    cost_usd_max: float | None = Field(description="Input + output at the cap; None: no price.")
    worst_case_usd: float | None = Field(
        default=None, description="As spending caps count it (estimated tokens); None: no price."
    )
    max_cost_usd: float | None = Field(default=None, description="Its own spending cap.")
    note: str | None = None


class DryRunPlan(BaseModel):
    spec: str
    run_dir: str
    run_dir_exists: bool
    cache_dir: str | None = Field(description="None: the cache is not read (--no-cache).")
    rows: list[PlanRow]
    assumptions: list[str]
    notes: list[str]
    budget: BudgetFit | None = Field(
        default=None, description="The plan against the spending caps; None: no cap set."
    )


class _Ctx:
    """What every row builder needs: the estimator, the cache rule and the notes list."""

    def __init__(self, runner: Runner, budget: Budget) -> None:
        self.budget = budget
        self.estimator = Estimator()
        self.reads_cache = runner.options.use_cache and not runner.options.refresh_cache
        self.notes: list[str] = list(runner.warnings)
        self.redo = {Status.API_ERROR} if runner.options.retry_errors else set()


def plan_run(loaded: LoadedSpec, options: RunOptions | None = None) -> DryRunPlan:
    """The dry-run plan of a spec: per component, what is recorded, cached and to send."""
    runner = Runner(loaded, options)
    existing = runner._existing()  # checked: the real run would stop on another spec too
    ctx = _Ctx(runner, runner.new_budget(existing))
    try:
        runner.attach_budget(ctx.budget)
    except AssayError as exc:
        ctx.notes.append(f"the real run will stop: {exc.render()}")
    rows = _judge_rows(runner, ctx)
    if runner.factuality is not None:
        rows += _factuality_rows(runner, runner.factuality, ctx)
    if runner.gate is not None:
        rows.append(_gate_row(runner, ctx))
    approx = ctx.estimator.approximated
    assumptions = [TOKENS_HOW, OUTPUT_HOW]
    if approx:
        assumptions.append(f"tokens counted as characters / 4 for: {', '.join(approx)}")
    return DryRunPlan(
        spec=loaded.path,
        run_dir=str(runner.run_dir),
        run_dir_exists=runner.run_dir.exists(),
        cache_dir=(
            str(runner.cache.directory) if runner.cache is not None and ctx.reads_cache else None
        ),
        rows=rows,
        assumptions=assumptions,
        notes=ctx.notes,
        budget=budget_fit(ctx.budget, rows),
    )


def _calls_a_model(component: Any) -> bool:
    """A component the plan can price: it renders its requests and names its client
    (the built-in LLM kinds, and any plugin kind that does the same)."""
    return hasattr(component, "request_for") and hasattr(component, "client")


def _judge_rows(runner: Runner, ctx: _Ctx) -> list[PlanRow]:
    """One row per judge: ForceBench pairs and items datasets together."""
    stage = runner.judge_stage
    records = latest_records(runner.run_dir / JUDGMENTS_FILE)
    redo = redo_statuses(runner.options.retry_errors)
    pending: defaultdict[str, list[tuple[JudgeWork, ForcePair]]] = defaultdict(list)
    for work, pair in stage.works_with_pairs(
        lambda key: key not in records or records[key].status in redo
    ):
        pending[work.judge_id].append((work, pair))
    total = stage.planned_by_judge()
    items = runner.items
    item_pending: defaultdict[str, list[ItemWork]] = defaultdict(list)
    if items is not None:
        items.load(runner.run_dir, ctx.redo)
        total.update(w.judge_id for w in items.plan())
        for item_work in items.pending():
            item_pending[item_work.judge_id].append(item_work)
    rows = []
    for judge in runner.judges:
        works, n = pending[judge.id], total[judge.id]
        todo = len(works) + len(item_pending[judge.id])
        if _calls_a_model(judge):
            requests = [
                judge.request_for(item_of(pair, w), where=stage.where(w))  # type: ignore[attr-defined]
                for w, pair in works
            ]
            if items is not None:
                requests += [
                    judge.request_for_variables(items.variables(w), where=items.where(w))  # type: ignore[attr-defined]
                    for w in item_pending[judge.id]
                ]
            rows.append(_model_row("judge", judge, n, n - todo, requests, ctx))
        else:
            rows.append(_local_row("judge", judge.id, n, n - todo, "no model"))
    return rows


def _factuality_rows(runner: Runner, stage: FactualityStage, ctx: _Ctx) -> list[PlanRow]:
    row, claims = _decomposer_row(runner, stage, ctx)
    done = set(stage.recorded_verifications(runner.run_dir, ctx.redo))
    to_verify = stage.claim_inputs()
    return [row] + [_verifier_row(v, claims, done, to_verify, ctx) for v in stage.verifiers]


def _decomposer_row(
    runner: Runner, stage: FactualityStage, ctx: _Ctx
) -> tuple[PlanRow, list[ClaimRecord] | None]:
    """The decomposer's row, and the claims where they are known before the run: by
    what the decomposer can do (render requests, split by rule, read the data's claims),
    not by its kind, so a plugin decomposer is planned like a built-in one."""
    sentences = stage.sentence_work({})
    recorded = stage.recorded_sentences(runner.run_dir, ctx.redo)
    pending = stage.sentence_work(recorded)
    done = len(sentences) - len(pending)
    dec: Any = stage.decomposer
    if getattr(dec, "claims_from_data", False):
        given = [r for ds, item in stage.answers() for r in given_records(ds, item)]
        claims = stage.claim_records({r.key: r for r in given})
        done = sum(1 for r in given if r.key in recorded)
        note = "claims given by the data"
        return _local_row("decomposer", dec.id, len(given), done, note), claims
    if _calls_a_model(dec):
        requests = [
            dec.request_for(
                s, answer=item.answer, question=item.question, where=f"{item.id}:s{s.id}"
            )
            for _, item, s in pending
        ]
        on_disk: list[ClaimRecord] | None = None
        if not pending:  # resuming after decomposition: the claims are on disk
            keys = {(ds, item.id, s.id) for ds, item, s in sentences}
            on_disk = stage.claim_records({k: r for k, r in recorded.items() if k in keys})
        return _model_row("decomposer", dec, len(sentences), done, requests, ctx), on_disk
    if hasattr(dec, "claims_for"):  # deterministic: its claims are known now
        records = [_sentence_record(dec, ds, item.id, s) for ds, item, s in sentences]
        claims = stage.claim_records({r.key: r for r in records})
        note = "rule-based: no model"
        return _local_row("decomposer", dec.id, len(sentences), done, note), claims
    note = "no model request planned"
    return _local_row("decomposer", dec.id, len(sentences), done, note), None


def _sentence_record(dec: Any, dataset: str, answer_id: str, sentence: Sentence) -> SentenceRecord:
    """What the rule-based decomposer will record for a sentence (it is deterministic)."""
    claims = dec.claims_for(sentence, answer_id=answer_id)
    return SentenceRecord(
        dataset=dataset,
        answer_id=answer_id,
        sentence_id=sentence.id,
        sentence=sentence.text,
        span=sentence.span,
        decomposer_id=dec.id,
        status=Status.OK,
        n_claims=len(claims),
        claims=claims,
    )


def _verifier_row(
    verifier: Any,
    claims: list[ClaimRecord] | None,
    done: set[tuple[str, str, str, str]],
    to_verify: Callable[[ClaimRecord], ClaimToVerify],
    ctx: _Ctx,
) -> PlanRow:
    client = getattr(verifier, "client", None)
    local = "local model: no API requests" if hasattr(verifier, "verify_many") else "no model"
    if claims is None:
        model = None if client is None else str(client.config.model)
        note = local if client is None else "one request per claim"
        return _unknown_row(verifier.id, model, f"{note}; claims known {AFTER}")
    pending = [(c.dataset, c.answer_id, c.claim_id, verifier.id) not in done for c in claims]
    recorded = len(claims) - sum(pending)
    if client is None:
        return _local_row("verifier", verifier.id, len(claims), recorded, local)
    requests = [verifier.request_for(to_verify(c))[0] for c in claims]
    to_run = [r for r, todo in zip(requests, pending, strict=True) if todo and r is not None]
    n_requests = sum(r is not None for r in requests)
    row = _model_row("verifier", verifier, len(claims), recorded, to_run, ctx, n_requests)
    if n_requests < len(claims):
        row.note = f"{len(claims) - n_requests} claims have no evidence passages: no request"
    return row


_NOT_KNOWN = dict.fromkeys(
    ("items", "requests", "recorded", "cached", "to_send", "input_tokens")
    + ("output_tokens_max", "cost_usd_min", "cost_usd_max")
)
_NOTHING_SENT: dict[str, float] = {"requests": 0, "cached": 0, "to_send": 0, "input_tokens": 0}
_NOTHING_SENT |= {"output_tokens_max": 0, "cost_usd_min": 0.0, "cost_usd_max": 0.0}


def _unknown_row(component_id: str, model: str | None, note: str) -> PlanRow:
    """A verifier whose claims are known only after decomposition."""
    return PlanRow(stage="verifier", id=component_id, model=model, note=note, **_NOT_KNOWN)


def _gate_row(runner: Runner, ctx: _Ctx) -> PlanRow:
    """The gate's questions: scored by a local reranker, so nothing is sent or paid."""
    gate = runner.gate
    assert gate is not None
    gate.load(runner.run_dir, ctx.redo)
    spec = gate.scorer.spec
    note = f"local reranker: no API requests; up to {spec.k1_expanded} pairs per question"
    return _local_row("gate", gate.scorer.gate_id, gate.planned(), gate.recorded(), note)


def _local_row(
    stage: Literal["judge", "decomposer", "verifier", "gate"],
    component_id: str,
    items: int,
    recorded: int,
    note: str,
) -> PlanRow:
    """A component that calls no model: nothing to send, nothing to pay."""
    return PlanRow(
        stage=stage,
        id=component_id,
        model=None,
        items=items,
        recorded=recorded,
        note=note,
        **_NOTHING_SENT,
    )


def _model_row(
    stage: Literal["judge", "decomposer", "verifier"],
    component: Any,
    items: int,
    recorded: int,
    pending: Sequence[ChatRequest],
    ctx: _Ctx,
    requests: int | None = None,
) -> PlanRow:
    """Look each pending request up in the cache (by the client's own key); count and
    price the rest."""
    client = component.client
    model = str(client.config.model)
    to_send = [r for r in pending if not _cached(client, r, ctx)]
    tokens = sum(ctx.estimator.count(model, [m.model_dump() for m in r.messages]) for r in to_send)
    cap = component.decoding.max_tokens * len(to_send)
    low, high, note = _prices(component, model, tokens, cap, ctx) if to_send else (0.0, 0.0, None)
    if to_send:
        _preflight(client, ctx)
    return PlanRow(
        stage=stage,
        id=component.id,
        model=model,
        items=items,
        requests=items if requests is None else requests,
        recorded=recorded,
        cached=len(pending) - len(to_send),
        to_send=len(to_send),
        input_tokens=tokens,
        output_tokens_max=cap,
        cost_usd_min=low,
        cost_usd_max=high,
        worst_case_usd=worst_case(ctx.budget, client, to_send, batch=is_batch_judge(component)),
        max_cost_usd=client.config.max_cost_usd,
        note=note or _price_note(client, model, low),
    )


def _prices(
    component: Any, model: str, tokens: int, cap: int, ctx: _Ctx
) -> tuple[float | None, float | None, str | None]:
    """(lowest, highest) USD of the requests to send, and a note: a `mode = "batch"`
    judge at the provider's batch prices (the run records those), else the online ones;
    prices the spec gives (`input/output_cost_per_token`) come first."""
    config = component.client.config
    if config.input_cost_per_token is not None and config.output_cost_per_token is not None:
        low = tokens * config.input_cost_per_token
        return low, low + cap * config.output_cost_per_token, "prices given in the spec"
    if is_batch_judge(component):
        rates = BatchPricing(model).rates()
        if rates is not None:
            low = tokens * rates[0]
            return low, low + cap * rates[1], 'batch prices (mode = "batch")'
        online = ctx.estimator.price(model, tokens, 0), ctx.estimator.price(model, tokens, cap)
        return (*online, f"{model} has no batch price in litellm's cost map: online prices")
    return ctx.estimator.price(model, tokens, 0), ctx.estimator.price(model, tokens, cap), None


def _price_note(client: Any, model: str, cost: float | None) -> str | None:
    from assay.models import is_local

    if is_local(client.config.model):
        return "local model: no API cost (tokens counted with tiktoken, an approximation)"
    return None if cost is not None else f"{model} has no price in litellm's cost map"


def _cached(client: Any, request: ChatRequest, ctx: _Ctx) -> bool:
    cache = getattr(client, "cache", None)
    if cache is None or not ctx.reads_cache:
        return False
    try:
        return cache.get(client.cache_key(request)) is not None
    except AssayError as exc:  # e.g. a local model directory that does not exist
        ctx.notes.append(f"{client.config.model}: cache not checked ({exc.render()})")
        return False


def _preflight(client: Any, ctx: _Ctx) -> None:
    """A missing key is a note here: the dry run needs none, the real run will."""
    from assay.models import is_local

    if is_local(client.config.model):
        return  # preflight would load the model
    try:
        client.preflight()
    except AssayError as exc:
        note = f"the real run will stop: {exc.render()}"
        if note not in ctx.notes:
            ctx.notes.append(note)
