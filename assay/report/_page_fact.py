"""The factuality part of the HTML report as typed data: verifiers, outcomes, gold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay._values import as_float, as_int, count, dict_of, label, list_of, prompt_ref
from assay.report._charts import (
    UNSCORED_ORDER,
    VERDICT_ORDER,
    DotChart,
    OutcomeBars,
    dot_chart,
    estimate,
    outcome_bars,
)


@dataclass(frozen=True)
class VerifierRow:
    """A verifier as the manifest describes it, with its pooled scores row (if any)."""

    id: str
    kind: str | None
    model: str | None
    prompt: str | None
    prompt_sha: str | None
    row: dict[str, Any]

    def get(self, name: str) -> object:
        return self.row.get(name)

    def count(self, status: str) -> int:
        return as_int(self.row.get(f"n_{status}")) or 0

    @property
    def responses_tip(self) -> str:
        return (
            f"with a score {count(self.get('n_responses_scored'))} · zero-claim "
            f"{count(self.get('n_zero_claim'))} · claims but none scored "
            f"{count(self.get('n_responses_unscored'))} · undecomposed "
            f"{count(self.get('n_responses_undecomposed'))}"
        )

    @property
    def zero_tip(self) -> str:
        return f"{count(self.get('n_zero_claim'))} of {count(self.get('n_responses'))} responses"

    @property
    def verdicts_tip(self) -> str:
        return " · ".join(f"{label(s)} {self.count(s):,}" for s in VERDICT_ORDER)

    @property
    def unscored_parts(self) -> list[tuple[str, int]]:
        return [(label(s), self.count(s)) for s in UNSCORED_ORDER if self.count(s)]


def model_of(info: Mapping[str, Any]) -> str | None:
    model = dict_of(info.get("client")).get("model") or info.get("model")
    return str(model) if model else None


def verifier_rows(fact_manifest: Mapping[str, Any], scores: Mapping[str, Any]) -> list[VerifierRow]:
    """Verifiers in the spec's order, then any that only the metrics know."""
    infos = {str(dict_of(v).get("id")): dict_of(v) for v in list_of(fact_manifest.get("verifiers"))}
    rows = {str(dict_of(r).get("verifier_id")): dict_of(r) for r in list_of(scores.get("rows"))}
    out: list[VerifierRow] = []
    for vid in [*infos, *(r for r in rows if r not in infos)]:
        info, row = infos.get(vid, {}), rows.get(vid, {})
        prompt_info = dict_of(info.get("prompt"))
        model = row.get("model") or model_of(info)
        prompt = prompt_ref(row.get("prompt_id"), row.get("prompt_version")) or prompt_ref(
            prompt_info.get("id"), prompt_info.get("version")
        )
        sha = prompt_info.get("sha256")
        kind = str(info["kind"]) if info.get("kind") else None
        out.append(
            VerifierRow(
                vid, kind, str(model) if model else None, prompt, str(sha) if sha else None, row
            )
        )
    return out


def fact_chart(verifiers: Sequence[VerifierRow]) -> DotChart:
    """Macro (dot) and micro (diamond) per verifier on a 0–1 axis."""
    rows = []
    for v in verifiers:
        marks = []
        for metric, dy, shape in (("macro", -7.0, "dot"), ("micro", 7.0, "diamond")):
            est = estimate(metric, v.id, v.row, metric)
            marks.append(
                type(est)(est.value, est.lo, est.hi, est.tip, f"{metric} {est.text}", dy, shape)
            )
        rows.append((v.id, marks))
    return dot_chart(
        rows,
        domain=(0.0, 1.0),
        axis_title="factuality F = supported / scored claims",
        aria="Macro and micro factuality per verifier with 95% confidence intervals",
        legend=True,
    )


def fact_outcomes(verifiers: Sequence[VerifierRow]) -> OutcomeBars:
    return outcome_bars(
        [
            (
                v.id,
                {s: v.count(s) for s in (*VERDICT_ORDER, *UNSCORED_ORDER)},
                as_int(v.get("n_claims")),
            )
            for v in verifiers
        ]
    )


@dataclass(frozen=True)
class Overview:
    """One line: what was decomposed into how many claims, checked by how many verifiers."""

    decomposer: str | None = None
    sentences: int | None = None
    claims: int | None = None
    has_stats: bool = False
    failed_sentences: int = 0
    n_verifiers: int | None = None
    recorded: int | None = None
    planned: int | None = None
    show_counts: bool = False
    length_penalty: str | None = None
    gamma: object = None


def overview(fact_manifest: Mapping[str, Any], scores: Mapping[str, Any]) -> Overview:
    dec = dict_of(fact_manifest.get("decomposer"))
    stats = dict_of(dec.get("stats"))
    by_status = dict_of(stats.get("by_status"))
    n_verifiers = len(list_of(fact_manifest.get("verifiers")))
    planned = fact_manifest.get("planned_verifications")
    recorded = fact_manifest.get("recorded_verifications")
    pen = scores.get("length_penalty") or fact_manifest.get("length_penalty")
    return Overview(
        decomposer=str(dec.get("id") or dec.get("kind")) if dec else None,
        sentences=as_int(stats.get("recorded")),
        claims=as_int(stats.get("claims")),
        has_stats=bool(stats),
        failed_sentences=sum(as_int(n) or 0 for s, n in by_status.items() if s != "ok"),
        n_verifiers=n_verifiers if n_verifiers or recorded is not None else None,
        recorded=as_int(recorded),
        planned=as_int(planned),
        show_counts=recorded is not None or planned is not None,
        length_penalty=str(pen) if pen else None,
        gamma=scores.get("gamma"),
    )


@dataclass(frozen=True)
class Confusion:
    """A verifier's 2×2 (gold × predicted) table, and the raw label table when it says more."""

    verifier: str
    gold: tuple[str, ...]
    predicted: tuple[str, ...]
    cells: tuple[tuple[tuple[int, str], ...], ...]  # (count, background) per gold row
    raw_columns: tuple[str, ...] = ()
    raw_rows: tuple[tuple[str, tuple[int, ...]], ...] = field(default=())


def _cell_background(n: int, peak: int, diagonal: bool) -> str:
    if not n:
        return ""
    hue = "22,163,74" if diagonal else "220,38,38"
    return f"rgba({hue},{0.08 + 0.5 * n / peak:.2f})"


def confusion(vid: str, row: Mapping[str, Any]) -> Confusion:
    table = dict_of(row.get("confusion"))
    gold = ["supported", "not_supported"] + [
        g for g in table if g not in ("supported", "not_supported")
    ]
    pred = ["supported", "not_supported"]
    for counts in table.values():
        pred += [p for p in dict_of(counts) if p not in pred]
    n = {(g, p): as_int(dict_of(table.get(g)).get(p)) or 0 for g in gold for p in pred}
    peak = max(n.values(), default=0) or 1
    cells = tuple(
        tuple((n[(g, p)], _cell_background(n[(g, p)], peak, g == p)) for p in pred) for g in gold
    )
    raw = dict_of(row.get("label_confusion"))
    cols: list[str] = []
    for counts in raw.values():
        cols += [c for c in dict_of(counts) if c not in cols]
    plain = {"supported", "unsupported", "not_supported"}
    if not raw or (set(raw) <= plain and set(cols) <= plain):
        return Confusion(vid, tuple(gold), tuple(pred), cells)
    raw_rows = tuple(
        (g, tuple(as_int(dict_of(counts).get(c)) or 0 for c in cols)) for g, counts in raw.items()
    )
    return Confusion(vid, tuple(gold), tuple(pred), cells, tuple(cols), raw_rows)


def confidence_level(part: Mapping[str, Any]) -> str:
    """`95%`: the CI level a metrics part was computed at (95% when it does not say)."""
    conf = as_float(part.get("confidence"))
    return "95%" if conf is None else f"{conf:.0%}"


@dataclass(frozen=True)
class VerifierMetrics:
    """Rows of one metrics part (gold or correlation) in the verifiers' order."""

    rows: tuple[tuple[str, dict[str, Any]], ...]
    part: dict[str, Any]

    @property
    def level(self) -> str:
        return confidence_level(self.part)


def by_verifier(part: Mapping[str, Any], order: Sequence[str]) -> VerifierMetrics | None:
    rows = {str(dict_of(r).get("verifier_id")): dict_of(r) for r in list_of(part.get("rows"))}
    ids = [i for i in order if i in rows] + [i for i in rows if i not in order]
    return VerifierMetrics(tuple((i, rows[i]) for i in ids), dict(part)) if ids else None


@dataclass(frozen=True)
class FactualitySection:
    overview: Overview
    scores: dict[str, Any]
    verifiers: tuple[VerifierRow, ...]
    chart: DotChart | None
    outcomes: OutcomeBars | None
    gold: VerifierMetrics | None
    confusions: tuple[Confusion, ...]
    correlation: VerifierMetrics | None
    empty: str = "the run recorded no verifications"  # why there is no score, if none

    @property
    def level(self) -> str:
        return confidence_level(self.scores)

    @property
    def penalized(self) -> bool:
        return any(as_float(v.get("macro_length_penalized")) is not None for v in self.verifiers)


def factuality_section(
    fact_manifest: Mapping[str, Any], fact_metrics: Mapping[str, Any]
) -> FactualitySection:
    scores = dict_of(fact_metrics.get("scores"))
    every = verifier_rows(fact_manifest, scores)
    scored = tuple(v for v in every if v.row)
    order = [v.id for v in every]
    gold = by_verifier(dict_of(fact_metrics.get("gold")), order)
    return FactualitySection(
        overview=overview(fact_manifest, scores),
        scores=scores,
        verifiers=scored,
        chart=fact_chart(scored) if scored else None,
        outcomes=fact_outcomes(scored) if scored else None,
        gold=gold,
        confusions=tuple(confusion(vid, r) for vid, r in gold.rows) if gold else (),
        correlation=by_verifier(dict_of(fact_metrics.get("correlation")), order),
        empty=str(fact_metrics.get("empty") or FactualitySection.empty),
    )
