"""LLM verifiers: internal knowledge, provided context, retrieved corpus, NLI prompt.

One class, four kinds: what differs is which passages reach the prompt and which
parser reads the answer. All share the model client's cache, retries and accounting.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from assay.core.answers import Passage
from assay.core.outcomes import Status
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel
from assay.models import ChatRequest, Decoding, ModelClient
from assay.models._prompted import PromptedModel
from assay.parsing._verification import (
    LEGACY_PARSER_VERSIONS,
    VERIFY_PARSER_VERSION,
    LegacyRule,
    ParsedVerification,
    ParserMode,
    parse_nli,
    parse_true_false,
    parse_true_false_legacy,
)
from assay.prompts import Prompt

VerifierKind = Literal["internal", "context", "retrieval", "nli"]


class Hit(Protocol):
    @property
    def passage(self) -> Passage: ...

    @property
    def score(self) -> float: ...


class Retriever(Protocol):
    """What the retrieved-corpus verifier needs from a retriever."""

    def search(self, query: str, k: int = 10) -> list[Any]: ...

    def describe(self) -> dict[str, Any]: ...


def prompt_tasks(kind: VerifierKind) -> tuple[str, ...]:
    """The prompt task a kind reads: NLI labels for `nli`, True/False for the others."""
    return ("nli",) if kind == "nli" else ("verify",)


class LLMVerifier(PromptedModel):
    """Labels a claim with a model: `kind` decides the evidence, `parser` the reading."""

    role = "verifier"

    def __init__(
        self,
        client: ModelClient,
        prompt: Prompt,
        *,
        kind: VerifierKind,
        decoding: Decoding | None = None,
        parser: ParserMode = "strict",
        threshold: float = 0.8,
        retriever: Retriever | None = None,
        top_k: int = 10,
        name: str | None = None,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        if kind == "retrieval" and retriever is None:
            raise ValueError("a retrieval verifier needs a retriever")
        if kind == "nli" and parser != "strict":
            raise ValueError("the legacy parser reads True/False answers, not NLI labels")
        suffix = "" if parser == "strict" else f"+{parser}"
        super().__init__(
            client,
            prompt,
            tasks=prompt_tasks(kind),
            decoding=decoding,
            name=name,
            default_id=f"{kind}:{client.config.model}::{prompt.ref}{suffix}",
            use_cache=use_cache,
            refresh_cache=refresh_cache,
        )
        self.kind = kind
        self.parser = parser
        self.threshold = threshold
        self.retriever = retriever
        self.top_k = top_k
        self.legacy_rule: LegacyRule | None = (
            None
            if parser == "strict"
            else ("medscore" if parser == "legacy-medscore" else "factscore")
        )

    @property
    def parser_version(self) -> str:
        if self.legacy_rule is None:
            return VERIFY_PARSER_VERSION
        return LEGACY_PARSER_VERSIONS[self.legacy_rule]

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            **self.base_description(f"llm-{self.kind}"),
            "parser": self.parser,
            "parser_version": self.parser_version,
        }
        if self.kind == "nli":
            info["threshold"] = self.threshold
        if self.retriever is not None:
            info["retriever"] = self.retriever.describe()
            info["top_k"] = self.top_k
        return info

    def passages_for(self, item: ClaimToVerify) -> tuple[list[Passage], list[EvidenceUse]]:
        if self.kind == "internal":
            return [], []
        if self.kind == "retrieval" and self.retriever is not None:
            hits = self.retriever.search(item.claim, k=self.top_k)
            passages = [h.passage for h in hits]
            return passages, [EvidenceUse(passage_id=h.passage.id, score=h.score) for h in hits]
        return list(item.evidence), [EvidenceUse(passage_id=p.id) for p in item.evidence]

    def request_for(self, item: ClaimToVerify) -> tuple[ChatRequest | None, list[EvidenceUse]]:
        """The request for a claim and the evidence it rests on; no request when a kind
        that reads passages has none. Also what `assay run --dry-run` counts."""
        passages, used = self.passages_for(item)
        if self.kind != "internal" and not passages:
            return None, used
        variables: dict[str, Any] = {"claim": item.claim, "question": item.question}
        if self.kind != "internal":
            variables["passages"] = [p.model_dump() for p in passages]
        return self.build_request(variables, where=f"claim {item.claim_id}"), used

    async def verify(self, item: ClaimToVerify) -> Verdict:
        request, used = self.request_for(item)
        if request is None:
            # Nothing to check against: the honest answer to "do the passages support
            # it?" is no. Recorded with a note, and no model call is made.
            return Verdict(
                status=Status.OK,
                label=VerdictLabel.UNSUPPORTED,
                score=0.0,
                error="no evidence passages",
            )
        result, base = await self.call(request)
        base["evidence"] = used
        raw = result.response
        if raw is None:
            return Verdict(status=Status.API_ERROR, error=result.error, **base)
        parsed = self.read(raw.content, finish_reason=raw.finish_reason, refusal=raw.refusal)
        return Verdict(
            **parsed.model_dump(),  # status, label, score, parsed, error
            raw_output=raw.content if raw.content is not None else raw.refusal,
            usage=raw.usage,
            **base,
        )

    def read(
        self, content: str | None, *, finish_reason: str | None, refusal: str | None
    ) -> ParsedVerification:
        """Parse a raw answer with this verifier's parser (also used to re-parse runs)."""
        if self.kind == "nli":
            return parse_nli(
                content, finish_reason=finish_reason, refusal=refusal, threshold=self.threshold
            )
        if self.legacy_rule is not None:
            return parse_true_false_legacy(
                content, finish_reason=finish_reason, refusal=refusal, rule=self.legacy_rule
            )
        return parse_true_false(content, finish_reason=finish_reason, refusal=refusal)
