"""``baseline:forcecheck-axis``: penalties per ForceBench axis where the claim drops a limiter.

Each axis check reads the evidence's limiters on that axis and the claim's cues; the
word lists come from ``forcecheck-axis@1`` (plus ``forcecheck-rule@1`` and ``numbers@1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.core.judging import JudgeItem
from assay.judges import _baseline_cues as c
from assay.judges._baseline_base import BaselineJudge
from assay.judges._baseline_base import penalties as resolve_penalties
from assay.judges._baseline_text import (
    APOSTROPHES,
    NUMERIC_LIMITER_RE,
    STOPWORDS,
    YEAR_ONLY_RE,
    all_tokens,
    content_tokens,
    norm_token,
    numbers,
    overlap,
    prep,
    seq,
)

Check = tuple[list[str], list[str]]  # (the evidence's limiters, the reasons the axis fires)


def relation(ev: str, cl: str, _ev_raw: str) -> Check:
    """Association (or no causal claim) in the evidence, causal language in the claim."""
    ev_causal = set(c.causal(ev))
    added = [x for x in c.causal(cl) if x not in ev_causal]
    assoc = c.found(c.ASSOC_RE, ev)
    limiters = assoc if assoc else ([] if ev_causal else ["no causal claim"])
    if not limiters or not added:
        return limiters, []
    return limiters, [f"claim uses causal language ({', '.join(added)})"]


def modality(ev: str, cl: str, _ev_raw: str) -> Check:
    """A hedge in the evidence that the claim drops or overrides with strong certainty."""
    hedges = c.found(c.HEDGE_RE, ev)
    if not hedges:
        return [], []
    reasons: list[str] = []
    ev_strong = set(c.found(c.STRONG_CERTAINTY_RE, ev))
    strong = [w for w in c.found(c.STRONG_CERTAINTY_RE, cl) if w not in ev_strong]
    if not c.HEDGE_RE.search(cl):
        why = "claim drops the hedge"
        boosters = c.found(c.BOOSTER_RE, cl)
        if boosters:
            why += f" and asserts ({', '.join(boosters)})"
        reasons.append(why)
    elif strong:
        reasons.append(f"claim adds strong certainty ({', '.join(strong)})")
    return hedges, reasons


def _populations(ev: str) -> set[str]:
    pops = {
        " ".join(all_tokens(m.group("p1") or m.group("p2"))) for m in c.POPULATION_RE.finditer(ev)
    }
    # Keep only the most specific keys: "older adult" subsumes "adult".
    return {p for p in pops if not any(p != q and f" {p} " in f" {q} " for q in pops)}


def _qualifiers(ev: str) -> set[str]:
    quals: set[str] = set()
    for m in c.AGE_RE.finditer(ev):
        quals.update(g for g in m.groups() if g)
    for m in c.WITH_RE.finditer(ev):
        word = norm_token(m.group(1))
        if word not in STOPWORDS:
            quals.add(word)
    return quals


def _places(ev_raw: str) -> dict[str, set[str]]:
    """Place key -> the forms that keep it (the key, and a multi-word place's initials)."""
    places: dict[str, set[str]] = {}
    for m in c.PLACE_RE.finditer(ev_raw.translate(APOSTROPHES)):
        words = m.group("place").split()
        if words[0].lower() in c.MONTHS_SET:
            continue
        key = " ".join(all_tokens(m.group("place")))
        initials = "".join(w[0] for w in words).lower() if len(words) > 1 else ""
        places[key] = {key} | ({initials} if initials else set())
    return places


def _quantifiers(ev: str, cl_content: set[str]) -> dict[str, int]:
    """Limiting quantifiers bound to something the claim talks about, with their rank."""
    quants: dict[str, int] = {}
    for m in c.QUANT_LIMITER_RE.finditer(ev):
        following = content_tokens(ev[m.end() : m.end() + c.QUANT_WINDOW])[: c.QUANT_BIND]
        if set(following) & cl_content:
            quants[m.group(0)] = c.QUANTIFIER_RANK[m.group(0)]
    return quants


def _quantifier_reason(quants: dict[str, int], cl: str, general: list[str]) -> list[str]:
    if not quants:
        return []
    claim_q = [c.QUANTIFIER_RANK[q] for q in c.found(c.QUANT_LIMITER_RE, cl)]
    claim_rank = max([*claim_q, *([c.UNIVERSAL_RANK] if general else [])], default=0)
    if claim_rank == 0:
        return [f"claim drops the quantifier ({', '.join(sorted(quants))})"]
    if claim_rank > max(quants.values()):
        return [f"claim strengthens the quantifier ({', '.join(sorted(quants))})"]
    return []


def scope(ev: str, cl: str, ev_raw: str) -> Check:
    """A population, qualifier, place or quantifier the claim drops, widens or generalises."""
    cl_seq, ev_seq = seq(cl), seq(ev)
    pops, quals, places = _populations(ev), _qualifiers(ev), _places(ev_raw)
    quants = _quantifiers(ev, set(content_tokens(cl)))
    limiters = sorted(pops) + sorted(quals) + sorted(places) + sorted(quants)
    claim_pops = {all_tokens(m.group(0))[-1] for m in c.POP_ANY_RE.finditer(cl)}
    new_pops = sorted(p for p in claim_pops if f" {p} " not in ev_seq)
    ev_general = set(c.found(c.GENERALISER_RE, ev))
    general = [w for w in c.found(c.GENERALISER_RE, cl) if w not in ev_general]
    reasons: list[str] = []
    if pops and not any(f" {p} " in cl_seq for p in pops):
        reasons.append(f"claim drops the population ({', '.join(sorted(pops))})")
    if quals and not quals & set(all_tokens(cl)):
        reasons.append(f"claim drops the qualifier ({', '.join(sorted(quals))})")
    if places and not any(f" {k} " in cl_seq for ks in places.values() for k in ks):
        reasons.append(f"claim drops the place ({', '.join(sorted(places))})")
    reasons += _quantifier_reason(quants, cl, general)
    if new_pops:
        reasons.append(f"claim names a population the evidence does not ({', '.join(new_pops)})")
    if general:
        reasons.append(f"claim generalises ({', '.join(general)})")
    return limiters, reasons


def temporal(ev: str, cl: str, _ev_raw: str) -> Check:
    """Dated or time-limited evidence; a claim of recency, permanence, or no anchor."""
    dates = c.found(c.DATE_RE, ev)
    durations = c.found(c.DURATION_RE, ev)
    if not dates and not durations:
        return [], []
    attributive = {m.start(1) for m in c.ATTRIBUTIVE_YEAR_RE.finditer(ev)}
    bare_years = [m.start() for m in c.BARE_YEAR_RE.finditer(ev)]
    dates_finding = (
        bool(durations)
        or any(s not in attributive for s in bare_years)
        or any(not YEAR_ONLY_RE.fullmatch(d) for d in dates)
    )
    persistence = (c.RECENCY_RE, c.DURABILITY_RE, c.CONTINUITY_RE)
    ev_words = {w for regex in persistence for w in c.found(regex, ev)}
    persist = sorted({w for regex in persistence for w in c.found(regex, cl)} - ev_words)
    reasons: list[str] = []
    if persist:
        reasons.append(f"claim asserts recency or permanence ({', '.join(persist)})")
    past = bool(c.PAST_RE.search(cl)) or (
        bool(c.ED_RE.search(cl)) and not c.PRESENT_AUX_RE.search(cl)
    )
    anchored = bool(c.DATE_RE.search(cl) or c.DURATION_RE.search(cl)) or past
    if dates_finding and not anchored:
        reasons.append("claim has no date, duration or past-tense anchor")
    return dates + durations, reasons


def numeric(ev: str, cl: str, _ev_raw: str) -> Check:
    """A range, bound or estimate in the evidence that the claim sharpens or exceeds."""
    # A span of years ("2010 to 2015") is a temporal limiter, not a numeric one.
    limiters = [
        lim
        for lim in c.found(NUMERIC_LIMITER_RE, ev)
        if not (nums := numbers(lim)) or not all(n.year for n in nums)
    ]
    ev_nums = [n for n in numbers(ev) if not n.year]
    cl_nums = [n for n in numbers(cl) if not n.year]
    reasons: list[str] = []
    ev_exact = {(n.value, n.percent) for n in ev_nums if n.exact}
    points = sorted({n.text for n in cl_nums if n.exact and (n.value, n.percent) not in ev_exact})
    if limiters and points:
        reasons.append(f"claim states point value(s) {', '.join(points)}")
    insisted = sorted({n.text for n in cl_nums if n.insisted})
    if insisted and (limiters or any(not n.exact for n in ev_nums)):
        reasons.append(f"claim insists on exactness ({', '.join(insisted)})")
    for pct in (True, False):
        pool = [n.value for n in ev_nums if n.percent is pct]
        if not pool:
            continue
        top = max(pool)
        bigger = sorted({n.text for n in cl_nums if n.percent is pct and n.value > top})
        if bigger:
            reasons.append(
                f"claim figure(s) {', '.join(bigger)} exceed the evidence's largest "
                f"{top:g}{'%' if pct else ''}"
            )
    ceilings = {
        (n.value, n.percent) for n in ev_nums if n.bound in ("upper", "approx", "range_high")
    }
    floors = sorted(
        {n.text for n in cl_nums if n.bound == "lower" and (n.value, n.percent) in ceilings}
    )
    if floors:
        reasons.append(f"claim turns a ceiling or estimate into a floor ({', '.join(floors)})")
    return limiters, reasons


CHECKS = {
    "relation": relation,
    "modality": modality,
    "scope": scope,
    "temporal": temporal,
    "numeric": numeric,
}


class ForceCheckAxisJudge(BaselineJudge):
    """Token overlap minus a penalty for each axis where the claim drops a limiter.

    An axis fires only when the *evidence* carries a limiter on it that the claim does
    not keep (cue words the evidence itself uses never count against the claim):

    - relation: the evidence frames the finding as association (associated, correlated,
      cohort, survey, tended to, coincided, confounding...) or makes no causal claim at
      all, and the claim uses a causal verb (causes, leads to, reduced the...).
    - modality: the evidence hedges (may, might, could, suggests, likely...) and the
      claim has no hedge, or adds strong certainty (definitely, proves, always...).
    - scope: the evidence limits who or where (a population in a limiting construction
      such as "in older adults" or "480 patients", an age or "with <condition>"
      qualifier, a place after "in", or a quantifier such as "some" bound to a word the
      claim uses) and the claim drops it, strengthens the quantifier (some -> most),
      names a population the evidence never mentions, or generalises (all, everyone...).
    - temporal: the evidence is dated or time-limited and the claim asserts recency or
      permanence (currently, is the largest, permanently, since...), or, when the
      evidence dates the finding itself (not merely "a 2019 study") or limits its
      duration (temporarily, until...), the claim has no date, duration or past tense.
    - numeric: the evidence gives a range, bound or approximation and the claim states a
      point value the evidence never states exactly, or insists on exactness; or the
      claim's figure exceeds the evidence's largest of its kind; or it turns an upper
      bound / approximation into a floor ("nearly 40%" -> "over 40%").
    """

    name = "forcecheck-axis"
    AXES: ClassVar[tuple[str, ...]] = ("relation", "modality", "scope", "temporal", "numeric")
    lexicons = ("tokens@1", "numbers@1", "forcecheck-rule@1", "forcecheck-axis@1")

    def __init__(
        self,
        *,
        penalty: float = 0.3,
        penalties: Mapping[str, float] | None = None,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(threshold=threshold)
        self.penalties = resolve_penalties(penalty, penalties, self.AXES, "axis")

    def params(self) -> dict[str, Any]:
        return {"penalties": dict(self.penalties), "threshold": self.threshold}

    def axes(self, claim: str, evidence: str) -> dict[str, dict[str, list[str]]]:
        """Per axis: the evidence's limiters and the reasons (if any) it fires."""
        ev, cl = prep(evidence), prep(claim)
        out: dict[str, dict[str, list[str]]] = {}
        for axis in self.AXES:
            limiters, reasons = CHECKS[axis](ev, cl, evidence)
            out[axis] = {"evidence_limiters": limiters, "reasons": reasons}
        return out

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        value, _, _ = overlap(item.claim, item.evidence)
        detail = self.axes(item.claim, item.evidence)
        fired = [axis for axis in self.AXES if detail[axis]["reasons"]]
        total = float(sum(self.penalties[a] for a in fired))
        return value - total, {
            "token_overlap": round(value, 6),
            "axes_fired": fired,
            "reasons": {a: detail[a]["reasons"] for a in fired},
            "evidence_limiters": {
                a: detail[a]["evidence_limiters"]
                for a in self.AXES
                if detail[a]["evidence_limiters"]
            },
            "penalty_total": round(total, 6),
        }
