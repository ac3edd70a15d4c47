"""The built-in baselines by name, in the JUDGES registry without being imported: their
word lists are read and compiled (~25 ms) when a baseline is first built, not by every
command that looks a judge up. Names and descriptions are checked against the classes
(tests/test_baselines.py)."""

from __future__ import annotations

from assay.core.registry import JUDGES
from assay.errors import SpecError

PREFIX = "baseline:"

BUILTIN_BASELINES: dict[str, tuple[str, str]] = {
    "citation-presence": (
        "_baseline_base:CitationPresenceJudge",
        "1.0 whenever any evidence is cited (non-blank), else 0.0. Ignores the claim.",
    ),
    "token-overlap": (
        "_baseline_base:TokenOverlapJudge",
        "Fraction of the claim's unique content tokens that also occur in the evidence.",
    ),
    "entity-overlap": (
        "_baseline_base:EntityOverlapJudge",
        "Fraction of the claim's entities (names, acronyms, numbers, years) in the evidence.",
    ),
    "forcecheck-rule": (
        "_baseline_rule:ForceCheckRuleJudge",
        "Token overlap minus a penalty for each class of force-raising cue in the claim.",
    ),
    "forcecheck-axis": (
        "_baseline_axis:ForceCheckAxisJudge",
        "Token overlap minus a penalty for each axis where the claim drops a limiter.",
    ),
}
"""Short name -> (class in `assay.judges`, its docstring's first line), in reading order."""

for _name, (_target, _description) in BUILTIN_BASELINES.items():
    JUDGES.add_lazy(f"{PREFIX}{_name}", f"assay.judges.{_target}", description=_description)


def baseline_key(name: str) -> str:
    """The JUDGES name of a baseline given by short name or id: 'baseline:NAME'."""
    return PREFIX + name.removeprefix(PREFIX)


def unknown_baseline(name: str) -> SpecError:
    """The error for a baseline no registry entry has, listing those that exist."""
    known = [n.removeprefix(PREFIX) for n in JUDGES if n.startswith(PREFIX)]
    return SpecError(f"unknown baseline {name!r}; known: {', '.join(known)}")


__all__ = ["BUILTIN_BASELINES", "PREFIX", "baseline_key", "unknown_baseline"]
