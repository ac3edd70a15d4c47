"""An LLM decomposer: a model client + a decompose prompt + the claim-list parser."""

from __future__ import annotations

from typing import Any

from assay.decomposers._parse import DECOMPOSE_PARSER_VERSION, parse_claims
from assay.decomposers._types import Claim, Decomposition, Sentence
from assay.models import ChatRequest, Decoding, ModelClient
from assay.outcomes import Status, Usage
from assay.prompts import Prompt


def claim_id(answer_id: str, sentence_id: int, k: int) -> str:
    """The stable id of the k-th claim of a sentence: '<answer_id>:s<sentence>:c<k>'."""
    return f"{answer_id}:s{sentence_id}:c{k}"


class LLMDecomposer:
    """Splits a sentence into claims by asking a model with a versioned prompt."""

    def __init__(
        self,
        client: ModelClient,
        prompt: Prompt,
        *,
        decoding: Decoding | None = None,
        name: str | None = None,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        if prompt.meta.task != "decompose":
            raise ValueError(
                f"prompt {prompt.ref} is a {prompt.meta.task!r} prompt, not a decompose prompt"
            )
        self.client = client
        self.prompt = prompt
        self.decoding = decoding or Decoding()
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache
        self._id = name or f"{client.config.model}::{prompt.ref}"

    @property
    def id(self) -> str:
        return self._id

    @property
    def model(self) -> str:
        return self.client.config.model

    def warnings(self) -> list[str]:
        if self.decoding.temperature > 0 and self.decoding.seed is None:
            return [
                f"decomposer {self.id} samples at temperature {self.decoding.temperature} "
                "without a seed: its claims are not reproducible"
            ]
        return []

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "llm-decomposer",
            "id": self.id,
            "client": self.client.describe(),
            "prompt": self.prompt.identity(),
            "decoding": self.decoding.model_dump(),
            "output_cap_tokens": self.decoding.max_tokens,
            "parser_version": DECOMPOSE_PARSER_VERSION,
        }

    def request_for(
        self,
        sentence: Sentence,
        *,
        answer: str,
        question: str | None = None,
        where: str | None = None,
    ) -> ChatRequest:
        variables: dict[str, Any] = {
            "sentence": sentence.text,
            "answer": answer,
            "question": question,
        }
        # model_construct, as LLMJudge does: the parts are already validated
        return ChatRequest.model_construct(
            messages=self.prompt.render(variables, where=where),
            decoding=self.decoding,
            response_schema=None,  # the output is line-based; JSON is accepted but not asked
            schema_name=self.prompt.meta.output_schema,
            sample_index=0,
        )

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition:
        request = self.request_for(
            sentence, answer=answer, question=question, where=f"{answer_id}:s{sentence.id}"
        )
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
            return Decomposition(status=Status.API_ERROR, error=result.error, **base)
        return self.decomposition_from_raw(
            sentence,
            answer_id=answer_id,
            content=raw.content,
            finish_reason=raw.finish_reason,
            refusal=raw.refusal,
            usage=raw.usage,
            **base,
        )

    def decomposition_from_raw(
        self,
        sentence: Sentence,
        *,
        answer_id: str,
        content: str | None,
        finish_reason: str | None,
        refusal: str | None,
        usage: Usage | None = None,
        **base: Any,
    ) -> Decomposition:
        """Parse a raw response into a Decomposition; usable to re-parse without a call."""
        parsed = parse_claims(content, finish_reason=finish_reason, refusal=refusal)
        claims = [
            Claim(
                id=claim_id(answer_id, sentence.id, k),
                text=text,
                sentence_id=sentence.id,
                span=sentence.span,
            )
            for k, text in enumerate(parsed.claims)
        ]
        return Decomposition(
            status=parsed.status,
            claims=claims,
            raw_output=content,
            error=parsed.error,
            usage=usage or Usage(),
            **base,
        )
