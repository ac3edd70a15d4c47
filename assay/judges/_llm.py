"""An LLM judge: a model client + a prompt + the verdict parser."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Unpack

from pydantic import BaseModel, Field, model_validator

from assay.core.building import BuildContext
from assay.core.judging import Judge, JudgeItem, Judgment, Status, Usage
from assay.core.outcomes import TokenLogprob
from assay.core.registry import JUDGES
from assay.core.settings import EndpointOverrides
from assay.errors import ModelConfigError
from assay.models import CallResult, ChatRequest, ModelClient, RawResponse
from assay.models._model import Lookup
from assay.models._prompted import (
    PreparedCall,
    PromptedModel,
    PromptedOptions,
    accounting_fields,
)
from assay.parsing import PARSER_VERSION, ParsedVerdict, parse_verdict
from assay.parsing._confidence import confidence_range, label_probability
from assay.prompts import Prompt

JudgeMode = Literal["online", "batch"]
ParserInputs = tuple[type[BaseModel], list[str], dict[str, float]]


class LLMJudge(PromptedModel):
    """Scores an item by asking a model with a versioned prompt and parsing its verdict."""

    role = "judge"

    def __init__(
        self,
        client: ModelClient,
        prompt: Prompt,
        *,
        sample_index: int = 0,
        mode: JudgeMode = "online",
        batch_poll_s: float = 30.0,
        confidence_field: str | None = None,
        **options: Unpack[PromptedOptions],
    ) -> None:
        super().__init__(client, prompt, tasks=("judge", "pairwise"), **options)
        self.sample_index = sample_index
        self.confidence_field = confidence_field
        self._confidence_scale = self._confidence_range(prompt, confidence_field)
        self.mode = mode  # "batch": the judge stage sends cache misses as provider batches
        self.batch_poll_s = batch_poll_s
        self.batch_jobs: list[dict[str, Any]] = []  # set by the batch stage, for the manifest
        self._schema = prompt.output_model.model_json_schema()
        self._parser_memo: tuple[Prompt, ParserInputs] | None = None

    @staticmethod
    def _confidence_range(prompt: Prompt, field: str | None) -> tuple[float, float] | None:
        """The declared range of the confidence field; a field that is not a number of
        the prompt's answer is a configuration error naming the prompt."""
        if field is None:
            return None
        try:
            return confidence_range(prompt.output_model, field)
        except ValueError as exc:
            raise ModelConfigError(f"prompt {prompt.ref}: {exc}") from None

    @property
    def task(self) -> str:
        """ "judge" or "pairwise": which datasets of a run this judge judges."""
        return self.prompt.meta.task

    def describe(self) -> dict[str, Any]:
        info = {
            **self.base_description("llm"),
            "parser_version": PARSER_VERSION,
            "sample_index": self.sample_index,
        }
        if self.mode == "batch":  # online manifests stay as they were
            info.update(mode="batch", batch_poll_s=self.batch_poll_s, batches=self.batch_jobs)
        if self.confidence_field is not None:  # as are those of judges without one
            info["confidence_field"] = self.confidence_field
        return info

    def request_for(self, item: JudgeItem, *, where: str | None = None) -> ChatRequest:
        variables: dict[str, Any] = dict(item.extra)
        variables.update(claim=item.claim, evidence=item.evidence, question=item.question)
        return self.request_for_variables(variables, where=where)

    def request_for_variables(
        self, variables: dict[str, Any], *, where: str | None = None
    ) -> ChatRequest:
        """The request for exactly these template variables (an items dataset's row):
        a variable the prompt needs and the row lacks is an error naming the row."""
        return self.build_request(
            variables,
            where=where,
            response_schema=self._schema,
            sample_index=self.sample_index,
        )

    async def __call__(self, item: JudgeItem, *, where: str | None = None) -> Judgment:
        return await self.judge_request(self.request_for(item, where=where))

    def prepare(self, items: Sequence[tuple[JudgeItem, str | None]]) -> list[PreparedCall]:
        """Each (item, where)'s request, rendered and looked up in the response cache
        (see `judgment_of_hit` and `judge_prepared`)."""
        requests = [self.request_for(item, where=where) for item, where in items]
        return self.prepare_calls(requests)

    def prepare_variables(
        self, rows: Sequence[tuple[dict[str, Any], str | None]]
    ) -> list[PreparedCall]:
        """`prepare` for items given as template variables (an items dataset's rows)."""
        requests = [self.request_for_variables(values, where=where) for values, where in rows]
        return self.prepare_calls(requests)

    def judgment_of_hit(self, hit: CallResult) -> Judgment:
        """A prepared request's cached result as its judgment: no request, no await."""
        return self.judgment_of(hit, accounting_fields(hit))

    async def judge_prepared(self, prepared: PreparedCall) -> Judgment:
        """Judge a prepared request (its cache lookup is not made again)."""
        return await self.judge_request(prepared.request, prepared.lookup)

    async def judge_variables(
        self, variables: dict[str, Any], *, where: str | None = None
    ) -> Judgment:
        """Judge an item given as template variables (see `request_for_variables`)."""
        return await self.judge_request(self.request_for_variables(variables, where=where))

    async def judge_request(
        self, request: ChatRequest, lookup: Lookup[RawResponse] | None = None
    ) -> Judgment:
        """Send one rendered request (`lookup`: its cache lookup, already made) and
        parse the answer into a judgment."""
        result, base = await self.call(request, lookup)
        return self.judgment_of(result, base)

    def judgment_of(self, result: CallResult, base: dict[str, Any]) -> Judgment:
        """A call's result as a judgment (`base`: its accounting fields)."""
        raw = result.response
        if raw is None:
            return Judgment(status=Status.API_ERROR, error=result.error, **base)
        return self.judgment_from_raw(
            **raw.parse_inputs(), model_returned=raw.model_returned, logprobs=raw.logprobs, **base
        )

    def _parser_inputs(self) -> ParserInputs:
        """The prompt's output model, labels and scores, read once per prompt object
        (each read goes through pydantic attribute lookups: ~5 us a judgment)."""
        prompt = self.prompt
        memo = self._parser_memo
        if memo is None or memo[0] is not prompt:
            memo = (prompt, (prompt.output_model, prompt.meta.labels, prompt.meta.scores))
            self._parser_memo = memo
        return memo[1]

    def judgment_from_raw(
        self,
        *,
        content: str | None,
        finish_reason: str | None,
        refusal: str | None,
        usage: Usage | None = None,
        model_returned: str | None = None,
        logprobs: list[TokenLogprob] | None = None,
        **base: Any,
    ) -> Judgment:
        """Parse a raw response; also used by `assay reparse` with no model call (which
        passes the record's `logprobs`, so the label's probability is found again)."""
        output_model, labels, scores = self._parser_inputs()
        verdict = parse_verdict(
            content,
            finish_reason=finish_reason,
            refusal=refusal,
            output_model=output_model,
            labels=labels,
            scores=scores,
        )
        return Judgment(
            **verdict.model_dump(),  # status, label, score, parsed, error
            raw_output=content,
            refusal=refusal,
            usage=usage or Usage(),
            model_returned=model_returned,
            finish_reason=finish_reason,
            label_probability=self._label_probability(verdict, content, logprobs),
            logprobs=logprobs,
            **base,
        )

    def _label_probability(
        self, verdict: ParsedVerdict, content: str | None, logprobs: list[TokenLogprob] | None
    ) -> float | None:
        """The probability of the label given: the declared confidence field when the
        judge names one, else the label's tokens' (`assay.parsing._confidence`)."""
        return label_probability(
            verdict,
            content,
            logprobs,
            self.prompt.output_model,
            confidence_field=self.confidence_field,
            confidence_scale=self._confidence_scale,
        )


class LLMJudgeParams(EndpointOverrides):
    """A `[[judges]]` block of the default kind: every model crossed with every prompt."""

    models: list[str] = Field(min_length=1, description="Model ids, each a judge per prompt.")
    prompts: list[str] = Field(
        min_length=1, description="Prompts (id@version, or id: the latest), one judge each."
    )
    name: str | None = Field(default=None, description="Label used instead of the model id.")
    samples: int = Field(default=1, ge=1, le=100, description="Repeated samples per item.")
    mode: JudgeMode = Field(
        default="online",
        description='"batch": cache misses go to the provider\'s batch API (openai/<model>).',
    )
    batch_poll_s: float = Field(default=30.0, gt=0.0, le=3600.0, description="Batch poll interval.")
    confidence_field: str | None = Field(
        default=None,
        description="A number field of the prompt's answer (e.g. 'confidence') read as the "
        "probability of the label given: mapped to [0, 1] by its declared minimum/maximum, "
        "else kept when in [0, 1]. Unset: with logprobs = true, the label's token "
        "probability. Feeds the calibration metrics (Brier, ECE).",
    )

    @model_validator(mode="after")
    def _names_need_one_model(self) -> LLMJudgeParams:
        if self.name and len(self.models) > 1:
            raise ValueError("`name` can only be set when `models` has one entry")
        return self


@JUDGES.register("llm", description="a model with a versioned prompt: models x prompts x samples")
def llm_judges(params: LLMJudgeParams, ctx: BuildContext) -> list[Judge]:
    """One judge per model, prompt and sample, ids '<name or model>::<prompt>[#sample]'."""
    prompts = [
        ctx.prompt(ref, tasks=("judge", "pairwise"), role="judge", field=f"prompts[{k}]")
        for k, ref in enumerate(params.prompts)
    ]
    decoding = ctx.decoding(params)
    judges: list[Judge] = []
    for model in params.models:
        client = ctx.client(params, model)
        if params.mode == "batch":
            _check_batchable(client.config, model)
        label = params.name or model
        for prompt in prompts:
            for sample in range(params.samples):
                suffix = f"#{sample}" if params.samples > 1 else ""
                judges.append(
                    LLMJudge(
                        client,
                        prompt,
                        decoding=decoding,
                        name=f"{label}::{prompt.ref}{suffix}",
                        sample_index=sample,
                        mode=params.mode,
                        batch_poll_s=params.batch_poll_s,
                        confidence_field=params.confidence_field,
                        use_cache=ctx.use_cache,
                        refresh_cache=ctx.refresh_cache,
                    )
                )
    return judges


def _check_batchable(config: Any, model: str) -> None:
    """Batch files hold the plain chat body: OpenAI-style batch APIs, no instructor re-asks."""
    if config.provider != "openai":
        raise ModelConfigError(
            f'mode = "batch" needs an openai/<model> id (an OpenAI-style batch API); '
            f"{model!r} is not one: remove `mode` or use an openai/ model"
        )
    if config.structured_output == "instructor":
        raise ModelConfigError(
            'mode = "batch" cannot re-ask through instructor: use structured_output = '
            '"json_schema" (or "auto") for a batch judge'
        )
