"""The no-model baseline: every sentence is one claim."""

from __future__ import annotations

import re
from typing import Any

from assay.core.decomposition import Claim, Decomposition, Sentence
from assay.core.outcomes import Status
from assay.decomposers._llm import claim_id
from assay.decomposers._sentences import SPLITTER_VERSION

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
