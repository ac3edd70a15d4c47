"""LLM verifiers: internal knowledge, provided context, retrieved corpus, NLI prompt.

One class, four kinds: what differs is which passages reach the prompt and which
parser reads the answer. All share the model client's cache, retries and accounting.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from assay.core.answers import Passage
from assay.core.outcomes import Status
from assay.core.verification import (
    ClaimToVerify,
    ContextPassage,
    EvidenceUse,
    ScoredPair,
    Verdict,
    VerdictLabel,
)
from assay.models import ChatRequest, Decoding, ModelClient
from assay.models._prompted import PromptedModel
from assay.parsing import extract_json_object
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
from assay.verifiers._pairs import llm_pair
from assay.verifiers._relations import claim_tokens, describe_relations, llm_formulas

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
        if self.kind != "internal":
            source = "nli" if self.kind == "nli" else "llm"
            formulas = llm_formulas(self.kind == "nli")
            info["pairs"] = {"relation_source": source, **describe_relations(formulas=formulas)}
        return info

    def shown(self, item: ClaimToVerify) -> tuple[list[Passage], list[ContextPassage]]:
        """The passages a kind puts in the prompt, with their retrieval rank and scores
        (raw, and on [0, 1] by the retriever's `score_normalization`) when retrieved."""
        if self.kind == "internal":
            return [], []
        if self.kind == "retrieval" and self.retriever is not None:
            from assay.retrieval._normalise import normalised_hits

            hits = self.retriever.search(item.claim, k=self.top_k)
            method = getattr(self.retriever, "score_normalization", None)
            scores = normalised_hits(hits, method)
            context = [
                _context(
                    h.passage,
                    retrieval_rank=getattr(h, "rank", i),
                    retrieval_score_raw=h.score,
                    retrieval_score=norm,
                )
                for i, (h, norm) in enumerate(zip(hits, scores, strict=True), start=1)
            ]
            return [h.passage for h in hits], context
        return list(item.evidence), [_context(p) for p in item.evidence]

    def passages_for(self, item: ClaimToVerify) -> tuple[list[Passage], list[EvidenceUse]]:
        passages, context = self.shown(item)
        return passages, [_use(c) for c in context]

    def request_for(self, item: ClaimToVerify) -> tuple[ChatRequest | None, list[EvidenceUse]]:
        """The request for a claim and the evidence it rests on; no request when a kind
        that reads passages has none. Also what `assay run --dry-run` counts."""
        passages, context = self.shown(item)
        return self._request(item, passages), [_use(c) for c in context]

    def _request(self, item: ClaimToVerify, passages: list[Passage]) -> ChatRequest | None:
        if self.kind != "internal" and not passages:
            return None
        variables: dict[str, Any] = {"claim": item.claim, "question": item.question}
        if self.kind != "internal":
            variables["passages"] = [p.model_dump() for p in passages]
        return self.build_request(variables, where=f"claim {item.claim_id}")

    async def verify(self, item: ClaimToVerify) -> Verdict:
        passages, context = self.shown(item)
        request, used = self._request(item, passages), [_use(c) for c in context]
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
        pairs = []
        if parsed.status is Status.OK and context:
            pairs = [self.pair(item, parsed, raw.content, passages, context)]
        return Verdict(
            **parsed.model_dump(),  # status, label, score, parsed, error
            raw_output=raw.content if raw.content is not None else raw.refusal,
            usage=raw.usage,
            pairs=pairs,
            **base,
        )

    def pair(
        self,
        item: ClaimToVerify,
        parsed: ParsedVerification,
        content: str | None,
        passages: list[Passage],
        context: list[ContextPassage],
    ) -> ScoredPair:
        """The one pair an LLM verifier scores: the claim against everything it was
        shown (see `llm_pair` for which answer fields become scores)."""
        return llm_pair(
            nli=self.kind == "nli",
            label=parsed.label,
            entail_probability=parsed.score,
            answer=extract_json_object(content or ""),
            context=context,
            premise="\n".join(p.text for p in passages),
            tokens=claim_tokens(item.claim),
            retrieval_normalization=getattr(self.retriever, "score_normalization", None),
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


def _context(passage: Passage, **retrieval: Any) -> ContextPassage:
    """A shown passage's identity, with its retrieval numbers when it was retrieved."""
    return ContextPassage(
        passage_id=passage.id, doc_id=passage.doc_id, page=passage.page, **retrieval
    )


def _use(context: ContextPassage) -> EvidenceUse:
    """The verdict's evidence entry for a shown passage (raw retrieval score, as ever)."""
    return EvidenceUse(passage_id=context.passage_id, score=context.retrieval_score_raw)
