"""The cue list behind the `dosage_label_rescue` prior: which passages state
a dosing instruction. Read where passage texts are read (building the policy's inputs),
never by the decision itself: the policy reads `PassageInfo.dosage_instruction`.

The phrases live in `lexicons/cs-priors@1.toml`, loaded and hashed by the judges' lexicon
loader, so a manifest can name the exact list that flagged the passages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from assay.judges._baseline_lexicons import Lexicon, lexicon
from assay.policies.claim_selective._config import PRIORS_LEXICON
from assay.policies.claim_selective._inputs import PassageInfo


def _load(key: str) -> Lexicon:
    return lexicon(key, package="assay.policies")


def priors_lexicon_digest(key: str = PRIORS_LEXICON) -> dict[str, str]:
    """`{key: sha256}` of the cue file, for the policy manifest."""
    return {key: _load(key).sha256}


@cache
def _pattern(key: str) -> re.Pattern[str]:
    phrases = _load(key).words("dosage_instruction")
    alternatives = "|".join(r"\s+".join(map(re.escape, p.split())) for p in phrases)
    # not inside a word, but a number may precede a unit ("5mg")
    return re.compile(rf"(?<![^\W\d])(?:{alternatives})(?!\w)", re.IGNORECASE)


def dosage_instruction(text: str, key: str = PRIORS_LEXICON) -> bool:
    """Whether `text` states a dosing instruction: a phrase of the list, not inside a word
    (a number may precede it: "5mg")."""
    return _pattern(key).search(text) is not None


def passage_info(
    texts: Mapping[str, str],
    evidence_levels: Mapping[str, str | None] | None = None,
    key: str = PRIORS_LEXICON,
) -> dict[str, PassageInfo]:
    """`ResponseInput.passages` from passage texts (and their `evidence_level`)."""
    levels = evidence_levels or {}
    return {
        pid: PassageInfo(
            evidence_level=levels.get(pid), dosage_instruction=dosage_instruction(text, key)
        )
        for pid, text in texts.items()
    }


__all__ = ["PRIORS_LEXICON", "dosage_instruction", "passage_info", "priors_lexicon_digest"]
