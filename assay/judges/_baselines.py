"""Deterministic, model-free baseline judges: the public names and the registry.

Five reference points for LLM judges on ForceBench-style items. They use only regular
expressions and word lists read from versioned data files (``assay/judges/lexicons/``,
compiled once, at import), never a model or the network, and always return `Status.OK`:

- ``baseline:citation-presence`` -- "a citation exists, so it is supported".
- ``baseline:token-overlap``     -- share of the claim's content words found in the evidence.
- ``baseline:entity-overlap``    -- share of the claim's names and numbers found in the evidence.
- ``baseline:forcecheck-rule``   -- token overlap minus penalties for force-raising cues in
  the claim alone (causal verbs, certainty words, universals, recency, exact numbers).
- ``baseline:forcecheck-axis``   -- token overlap minus penalties for each ForceBench axis
  on which the evidence carries a limiter (association, hedge, subgroup/place/quantifier,
  date/duration, range/bound) that the claim drops or overrides.

Every judgment's ``parsed`` holds the feature values that produced its score, so a
score can always be traced back to the words that caused it; ``describe()`` records the
SHA-256 of every lexicon file a judge read. See ``docs/reference/baselines.md``.
"""

from __future__ import annotations

from typing import Any

from assay.core.building import check_keywords
from assay.core.judging import Judge
from assay.core.registry import JUDGES, UnknownName
from assay.judges._baseline_axis import ForceCheckAxisJudge
from assay.judges._baseline_base import (
    BaselineJudge,
    CitationPresenceJudge,
    EntityOverlapJudge,
    TokenOverlapJudge,
)
from assay.judges._baseline_cues import QUANTIFIER_RANK
from assay.judges._baseline_names import PREFIX, baseline_key, unknown_baseline
from assay.judges._baseline_rule import ForceCheckRuleJudge
from assay.judges._baseline_text import STOPWORDS, content_tokens

__all__ = [
    "BASELINES",
    "BaselineJudge",
    "CitationPresenceJudge",
    "EntityOverlapJudge",
    "ForceCheckAxisJudge",
    "ForceCheckRuleJudge",
    "QUANTIFIER_RANK",
    "STOPWORDS",
    "TokenOverlapJudge",
    "baseline",
    "baseline_key",
    "content_tokens",
    "unknown_baseline",
]

BASELINES: dict[str, type[BaselineJudge]] = {
    cls.name: cls
    for cls in (
        CitationPresenceJudge,
        TokenOverlapJudge,
        EntityOverlapJudge,
        ForceCheckRuleJudge,
        ForceCheckAxisJudge,
    )
}
"""The built-in baselines in reading order; each is in JUDGES as 'baseline:NAME'
(registered by name in `_baseline_names`, without importing this module)."""


def baseline(name: str, **params: Any) -> Judge:
    """Build a baseline judge by short name ("token-overlap") or id ("baseline:..."),
    looked up in the JUDGES registry (so a plugin's baseline resolves too)."""
    try:
        factory = JUDGES.get(baseline_key(name))
    except UnknownName:
        raise unknown_baseline(name) from None
    what = f"baseline {name.removeprefix(PREFIX)!r}"
    judge: Judge = factory(**check_keywords(factory, params, what=what))
    return judge
