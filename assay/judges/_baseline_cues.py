"""Compiled cue patterns of the ForceCheck judges (``forcecheck-rule@1``, ``forcecheck-axis@1``).

All patterns are matched against prepped (lowercased) text, except ``PLACE_RE``.
"""

from __future__ import annotations

import re

from assay.judges._baseline_lexicons import lexicon

RULE = lexicon("forcecheck-rule@1")
AXIS = lexicon("forcecheck-axis@1")

# forcecheck-rule@1: the rule judge's cue classes (causal, recency and durability are
# also used by the axis judge).
CAUSAL_RE = RULE.regex("causal")
CAUSAL_PAST_RE = RULE.regex("causal_past")
NOT_VERB_BEFORE: frozenset[str] = frozenset(RULE.words("not_verb_before"))
CERTAINTY_RE = RULE.regex("certainty")
UNIVERSAL_RE = RULE.regex("universal")
RECENCY_RE = RULE.regex("recency")
DURABILITY_RE = RULE.regex("durability")

# forcecheck-axis@1: evidence limiters and the claim cues that override them.
CONTINUITY_RE = AXIS.regex("continuity")
HEDGE_RE = AXIS.regex("hedge")
STRONG_CERTAINTY_RE = AXIS.regex("strong_certainty")
BOOSTER_RE = AXIS.regex("booster")
MONTHS_SET: frozenset[str] = frozenset(AXIS.words("months"))
DATE_RE = AXIS.regex("date")
ATTRIBUTIVE_YEAR_RE = AXIS.regex("attributive_year")
BARE_YEAR_RE = AXIS.regex("bare_year")
DURATION_RE = AXIS.regex("duration")
PAST_RE = AXIS.regex("past")
ED_RE = AXIS.regex("ed")
PRESENT_AUX_RE = AXIS.regex("present_aux")
ASSOC_RE = AXIS.regex("association")
POPULATION_RE = AXIS.regex("population")
POP_ANY_RE = AXIS.regex("population_any")
AGE_RE = AXIS.regex("age")
WITH_RE = AXIS.regex("with")
PLACE_RE = AXIS.regex("place")
#: Limiting quantifiers and their strength; universals (all, every...) rank 4.
QUANTIFIER_RANK: dict[str, int] = AXIS.ranks("quantifier")
UNIVERSAL_RANK = AXIS.param("universal_rank")
QUANT_WINDOW = AXIS.param("quantifier_window_chars")
QUANT_BIND = AXIS.param("quantifier_bind_tokens")
QUANT_LIMITER_RE = AXIS.regex("quantifier")
GENERALISER_RE = AXIS.regex("generaliser")

_WS_RE = re.compile(r"\s+")


def found(regex: re.Pattern[str], text: str) -> list[str]:
    """Sorted unique matches (whitespace collapsed) of `regex` in prepped `text`."""
    return sorted({_WS_RE.sub(" ", m.group(0)).strip() for m in regex.finditer(text)})


def causal(text: str) -> list[str]:
    """Causal cues in prepped `text`: the causal lexicon plus past-tense change verbs."""
    cues = set(found(CAUSAL_RE, text))
    for m in CAUSAL_PAST_RE.finditer(text):
        if m.group("prev") not in NOT_VERB_BEFORE:
            cues.add(m.group("verb"))
    return sorted(cues)
