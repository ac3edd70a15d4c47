"""A verifier that needs no model: lexical support of the claim by a passage.

It exists so the factuality pipeline runs end to end with no key and no download, and as a floor any
model verifier should beat. Its verdict cannot detect contradiction; its scored pairs carry the
lexical relation triple the claim-level policies pool, with conflict and limitation cues from the
`relation-cues@1` lexicon, and a label with its confidence (`label_confidence`,
docs/reference/policies/fail-closed.md#inputs-and-scores) so a fail-closed policy can verify on
them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.core.building import BuildContext
from assay.core.outcomes import Status
from assay.core.registry import VERIFIERS
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel, Verifier
from assay.verifiers._pairs import LEXICAL_LABELS, lexical_pair
from assay.verifiers._relations import claim_tokens, describe_relations


class OverlapVerifier:
    """Supported when enough of the claim's content tokens occur in one passage."""

    #: "2": pairs carry label_confidence probabilities; a run made by "1" resumes
    #: under "1" only (`runs._resume.check_same_versions`)
    version = "2"

    def __init__(self, *, threshold: float = 0.7, name: str | None = None) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("threshold must be in [0, 1]")
        self.threshold = threshold
        self._id = name or "baseline:overlap"

    @property
    def id(self) -> str:
        return self._id

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "baseline-overlap",
            "id": self.id,
            "version": self.version,
            "threshold": self.threshold,
            "parser_version": None,
            "pairs": {
                "relation_source": "lexical",
                "score_source": "label_confidence",
                "labels": LEXICAL_LABELS,
                **describe_relations(),
            },
        }

    async def verify(self, item: ClaimToVerify) -> Verdict:
        tokens = claim_tokens(item.claim)
        pairs = [lexical_pair(tokens, passage, self.threshold) for passage in item.evidence]
        if not tokens or not item.evidence:
            return Verdict(
                status=Status.OK,
                label=VerdictLabel.UNSUPPORTED,
                score=0.0,
                pairs=pairs,
                error="no content tokens" if not tokens else "no evidence passages",
            )
        best_id, best = item.evidence[0].id, -1.0
        for passage, pair in zip(item.evidence, pairs, strict=True):
            share = pair.s_support or 0.0
            if share > best:
                best_id, best = passage.id, share
        label = VerdictLabel.SUPPORTED if best >= self.threshold else VerdictLabel.UNSUPPORTED
        return Verdict(
            status=Status.OK,
            label=label,
            score=round(best, 6),
            evidence=[EvidenceUse(passage_id=best_id, score=round(best, 6))],
            pairs=pairs,
            parsed={"overlap": round(best, 6), "claim_tokens": len(tokens)},
        )


class OverlapParams(BaseModel):
    """The overlap verifier's block keys."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Overlap share from which a claim is supported."
    )
    name: str | None = Field(
        default=None, description="The id its records carry instead of the default one."
    )


@VERIFIERS.register("overlap", description="token overlap with the evidence (baseline, no model)")
def overlap(params: OverlapParams, ctx: BuildContext) -> Verifier:
    return OverlapVerifier(threshold=params.threshold, name=params.name)
