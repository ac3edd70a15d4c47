"""An LLM judge: a model client + a prompt + the verdict parser."""

from __future__ import annotations

from typing import Any

from assay.judges._types import JudgeItem, Judgment, Status, Usage
from assay.models import ChatRequest, Decoding, ModelClient
from assay.parsing import PARSER_VERSION, parse_verdict
from assay.prompts import Prompt


class LLMJudge:
    """Scores an item by asking a model with a versioned prompt and parsing its verdict."""

    def __init__(
        self,
        client: ModelClient,
        prompt: Prompt,
        *,
        decoding: Decoding | None = None,
        name: str | None = None,
        sample_index: int = 0,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        if prompt.meta.task != "judge":
            raise ValueError(f"prompt {prompt.ref} is a {prompt.meta.task!r} prompt, not a judge")
        self.client = client
        self.prompt = prompt
        self.decoding = decoding or Decoding()
        self.sample_index = sample_index
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache
        self._id = name or f"{client.config.model}::{prompt.ref}"
        self._schema = prompt.output_model.model_json_schema()

    @property
    def id(self) -> str:
        return self._id

    @property
    def model(self) -> str:
        return self.client.config.model

    def warnings(self) -> list[str]:
        if self.decoding.temperature > 0 and self.decoding.seed is None:
            return [
                f"judge {self.id} samples at temperature {self.decoding.temperature} without "
                "a seed: its judgments are not reproducible"
            ]
        return []

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "llm",
            "id": self.id,
            "client": self.client.describe(),
            "prompt": self.prompt.identity(),
            "decoding": self.decoding.model_dump(),
            "output_cap_tokens": self.decoding.max_tokens,
            "parser_version": PARSER_VERSION,
            "sample_index": self.sample_index,
        }

    def request_for(self, item: JudgeItem, *, where: str | None = None) -> ChatRequest:
        variables: dict[str, Any] = dict(item.extra)
        variables.update(claim=item.claim, evidence=item.evidence, question=item.question)
        # model_construct: the parts are already validated, and validating the JSON schema
        # dict on every call would copy it (and defeat the cache's schema-hash memo)
        return ChatRequest.model_construct(
            messages=self.prompt.render(variables, where=where),
            decoding=self.decoding,
            response_schema=self._schema,
            schema_name=self.prompt.meta.output_schema,
            sample_index=self.sample_index,
        )

    async def __call__(self, item: JudgeItem, *, where: str | None = None) -> Judgment:
        request = self.request_for(item, where=where)
        result = await self.client.complete(
            request, use_cache=self.use_cache, refresh_cache=self.refresh_cache
        )
        base: dict[str, Any] = {
            "attempts": result.attempts,
            "cache_hit": result.cache_hit,
            "latency_s": result.latency_s,
        }
        raw = result.response
        if raw is None:
            return Judgment(status=Status.API_ERROR, error=result.error, **base)
        return self.judgment_from_raw(
            content=raw.content,
            finish_reason=raw.finish_reason,
            refusal=raw.refusal,
            usage=raw.usage,
            model_returned=raw.model_returned,
            **base,
        )

    def judgment_from_raw(
        self,
        *,
        content: str | None,
        finish_reason: str | None,
        refusal: str | None,
        usage: Usage | None = None,
        model_returned: str | None = None,
        **base: Any,
    ) -> Judgment:
        """Parse a raw response; also used by `assay reparse` with no model call."""
        verdict = parse_verdict(
            content,
            finish_reason=finish_reason,
            refusal=refusal,
            output_model=self.prompt.output_model,
            labels=self.prompt.meta.labels,
            scores=self.prompt.meta.scores,
        )
        return Judgment(
            status=verdict.status,
            label=verdict.label,
            score=verdict.score,
            parsed=verdict.parsed,
            error=verdict.error,
            raw_output=content,
            refusal=refusal,
            usage=usage or Usage(),
            model_returned=model_returned,
            finish_reason=finish_reason,
            **base,
        )
