"""Decomposers that call no model: every sentence is one claim, or the data's own claims."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.core.building import BuildContext
from assay.core.decomposition import Claim, Decomposer, Decomposition, Sentence
from assay.core.outcomes import Status
from assay.core.registry import DECOMPOSERS
from assay.decomposers._llm import claim_id
from assay.decomposers._sentences import SPLITTER_VERSION
from assay.errors import SpecError

_LETTER = re.compile(r"[^\W\d_]")


class SentenceDecomposer:
    """Returns the sentence itself as its only claim; sentences without letters
    ("1.", "---", "42%") have no claim. Always `ok`, no model, no cache."""

    VERSION = "1"

    def __init__(self, *, name: str | None = None) -> None:
        self._id = name or "sentence"

    @property
    def id(self) -> str:
        return self._id

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "sentence",
            "id": self.id,
            "version": self.VERSION,
            "splitter_version": SPLITTER_VERSION,
        }

    def claims_for(self, sentence: Sentence, *, answer_id: str) -> list[Claim]:
        if not _LETTER.search(sentence.text):
            return []
        return [
            Claim(
                id=claim_id(answer_id, sentence.id, 0),
                text=sentence.text,
                sentence_id=sentence.id,
                span=sentence.span,
            )
        ]

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition:
        return Decomposition(
            status=Status.OK, claims=self.claims_for(sentence, answer_id=answer_id)
        )


class GivenDecomposer:
    """Uses the claims a dataset ships (e.g. ExpertQA): no decomposition is run.

    `claims_from_data` tells the factuality stage to read the claims from the answers
    instead of calling `decompose`.
    """

    claims_from_data = True

    @property
    def id(self) -> str:
        return "given"

    def describe(self) -> dict[str, Any]:
        return {"kind": "given", "id": self.id}

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition:
        raise AssertionError("given claims are read from the dataset, not decomposed")


class SentenceParams(BaseModel):
    """The sentence decomposer's block keys."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None, description="The id its records carry instead of the default one."
    )


class GivenParams(BaseModel):
    """The given decomposer takes no keys."""

    model_config = ConfigDict(extra="forbid")


@DECOMPOSERS.register("sentence", description="each sentence of an answer is one claim (no model)")
def sentence(params: SentenceParams, ctx: BuildContext) -> Decomposer:
    return SentenceDecomposer(name=params.name)


@DECOMPOSERS.register("given", description="the dataset's own claims (e.g. ExpertQA)")
def given(params: GivenParams, ctx: BuildContext) -> Decomposer:
    missing = [a.id for ds in ctx.answers() for a in ds.items if a.gold_claims is None]
    if missing:
        raise SpecError(
            f"decomposer kind 'given' needs claims in the data; answer {missing[0]!r} has none",
            field="kind",
        )
    return GivenDecomposer()
