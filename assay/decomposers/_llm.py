"""An LLM decomposer: a model client + a decompose prompt + the claim-list parser."""

from __future__ import annotations

from typing import Any, Unpack

from pydantic import Field

from assay.core.building import BuildContext
from assay.core.decomposition import Claim, Decomposer, Decomposition, Sentence
from assay.core.outcomes import Status, Usage
from assay.core.registry import DECOMPOSERS
from assay.core.settings import EndpointOverrides
from assay.models import ChatRequest, ModelClient
from assay.models._prompted import PromptedModel, PromptedOptions
from assay.parsing._claims import DECOMPOSE_PARSER_VERSION, parse_claims
from assay.prompts import Prompt


def claim_id(answer_id: str, sentence_id: int, k: int) -> str:
    """The stable id of the k-th claim of a sentence: '<answer_id>:s<sentence>:c<k>'."""
    return f"{answer_id}:s{sentence_id}:c{k}"


class LLMDecomposer(PromptedModel):
    """Splits a sentence into claims by asking a model with a versioned prompt."""

    role = "decomposer"

    def __init__(
        self, client: ModelClient, prompt: Prompt, **options: Unpack[PromptedOptions]
    ) -> None:
        super().__init__(client, prompt, tasks=("decompose",), **options)

    def describe(self) -> dict[str, Any]:
        return {
            **self.base_description("llm-decomposer"),
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
        # no response schema: the output is line-based; JSON is accepted but not asked
        return self.build_request(variables, where=where)

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition:
        request = self.request_for(
            sentence, answer=answer, question=question, where=f"{answer_id}:s{sentence.id}"
        )
        result, base = await self.call(request)
        raw = result.response
        if raw is None:
            return Decomposition(status=Status.API_ERROR, error=result.error, **base)
        return self.decomposition_from_raw(
            sentence, answer_id=answer_id, **raw.parse_inputs(), **base
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


class LLMDecomposerParams(EndpointOverrides):
    """The llm decomposer's block keys: endpoint settings, model, prompt, name."""

    model: str = Field(description="The model id (litellm provider/model, or hf/<dir>).")
    prompt: str = Field(
        default="decompose-conditional@1",
        description="The prompt (id@version) that asks for the claims.",
    )
    name: str | None = Field(
        default=None, description="The id its records carry instead of the default one."
    )


@DECOMPOSERS.register("llm", description="an LLM splits each sentence into claims")
def llm(params: LLMDecomposerParams, ctx: BuildContext) -> Decomposer:
    prompt = ctx.prompt(params.prompt, tasks=("decompose",), role="decomposer")
    return LLMDecomposer(
        ctx.client(params, params.model),
        prompt,
        decoding=ctx.decoding(params),
        name=params.name,
        use_cache=ctx.use_cache,
        refresh_cache=ctx.refresh_cache,
    )
