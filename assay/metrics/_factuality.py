"""Claim-level factuality: per-response factuality, dataset scores, gold metrics, correlation.

For a verifier v and a response r (definitions in docs/factuality-metrics.md)::

    scored(r)    = claims of r whose verification by v has status ok
    unscored(r)  = every other claim of r (parse_error, refusal, truncated, api_error,
                   or no verification by v at all: "missing")
    supported(r) = scored claims labelled "supported" (unsupported/contradicted are not)
    F(r)         = supported(r) / scored(r), undefined (None / NaN) when scored(r) == 0

An unscored claim is never read as supported and never enters a denominator. The claims of
a response are every claim seen in `claims`, in any verifier's records or in its sentence
records' claim lists, plus claims that `sentences` declare (`n_claims`) but that have no
record; every verifier is scored on the same claims and responses, so a claim one verifier
never verified is "missing" for it. Last record per key (the records' `.key`) wins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import Status
from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord
from assay.metrics import _bootstrap
from assay.metrics._bootstrap import Seed, bootstrap_mean_cis
from assay.metrics._force import POOLED, _missing, _opt_int, _opt_str, _stream_seed

VerificationInput: TypeAlias = Iterable[VerificationRecord | Mapping[str, Any]] | pd.DataFrame
SentenceInput: TypeAlias = Iterable[SentenceRecord | Mapping[str, Any]] | pd.DataFrame
ClaimInput: TypeAlias = Iterable[ClaimRecord | Mapping[str, Any]] | pd.DataFrame
ResponseInput: TypeAlias = Iterable[tuple[str, str]] | pd.DataFrame
ResponseKey: TypeAlias = tuple[str, str]
"""(dataset, answer_id)"""
ClaimKey: TypeAlias = tuple[str, str, str]
"""(dataset, answer_id, claim_id)"""
LengthPenalty = Literal["factscore"]
UnscoredPolicy = Literal["exclude", "wrong"]
Category = Literal["scored", "unscored", "zero_claim", "undecomposed"]

SUPPORTED = "supported"
NOT_SUPPORTED = "not_supported"
VERDICT_LABELS = ("supported", "unsupported", "contradicted")
"""Labels a verification with status ok may carry; anything else is an error."""
GOLD_LABELS = ("supported", "not_supported", "unsupported", "contradicted", "partially_supported")
"""Gold labels the datasets use. Mapping to positive/negative is the `positive` parameter."""
MISSING = "missing"
"""Pseudo-status of a claim that a verifier has no record for."""
UNSCORED_STATUSES = ("parse_error", "refusal", "truncated", "api_error", MISSING)
FACTSCORE_GAMMA = 10

_OK = Status.OK.value
_STATUSES = frozenset(s.value for s in Status)
GIVEN_DECOMPOSER = "given"
"""`decomposer_id` of sentence records holding claims a dataset ships."""
_COUNT_FIELDS = (
    "n_supported",
    "n_unsupported",
    "n_contradicted",
    "n_parse_error",
    "n_refusal",
    "n_truncated",
    "n_api_error",
    "n_missing",
)
_SLOT = {k: i for i, k in enumerate((*VERDICT_LABELS, *UNSCORED_STATUSES))}

RESPONSE_COLUMNS = [
    "verifier_id",
    "dataset",
    "answer_id",
    "category",
    "zero_claim",
    "n_sentences",
    "n_sentences_failed",
    "n_claims",
    "n_scored",
    "n_unscored",
    *_COUNT_FIELDS,
    "factuality",
]
"""Columns of `response_table`; `factuality_length_penalized` follows when requested."""


# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class _V:
    dataset: str
    answer_id: str
    claim_id: str
    verifier_id: str
    status: str
    label: str | None
    gold_label: str | None
    model: str | None
    prompt_id: str | None
    prompt_version: int | None


@dataclass(frozen=True, slots=True)
class _S:
    dataset: str
    answer_id: str
    sentence_id: int
    status: str
    n_claims: int
    claim_ids: tuple[str, ...]
    unsplit: bool = False
    """The whole answer as a pseudo-sentence: given claims not mapped to sentences."""


@dataclass(frozen=True, slots=True)
class _C:
    dataset: str
    answer_id: str
    claim_id: str
    gold_label: str | None


def _str(v: object) -> str | None:
    return v if type(v) is str else _opt_str(v)  # fast path for the common case


def _req(row: Mapping[str, Any], name: str) -> str:
    v = _str(row.get(name))
    if v is None:
        raise ValueError(f"record is missing required field {name!r}: {dict(row)!r}")
    return v


def _status(v: object) -> str:
    if isinstance(v, Status):
        return v.value
    s = _str(v)
    if s not in _STATUSES:
        raise ValueError(f"unknown status {v!r}; expected one of {sorted(_STATUSES)}")
    return s


def _rows(
    records: Iterable[Any] | pd.DataFrame, required: Sequence[str], optional: Sequence[str]
) -> Iterator[Any]:
    """Record models as they are; DataFrame rows as dicts of the columns used."""
    if isinstance(records, pd.DataFrame):
        missing = [c for c in required if c not in records.columns]
        if missing:
            raise ValueError(f"records frame lacks required columns {missing}")
        cols = [c for c in (*required, *optional) if c in records.columns]
        yield from records[cols].to_dict("records")
        return
    yield from records


_V_REQ = ("dataset", "answer_id", "claim_id", "verifier_id", "status")
_V_OPT = ("label", "gold_label", "model", "prompt_id", "prompt_version")


def _to_v(r: VerificationRecord | Mapping[str, Any]) -> _V:
    row: Mapping[str, Any] = r.__dict__ if isinstance(r, VerificationRecord) else r
    v = _V(
        dataset=_req(row, "dataset"),
        answer_id=_req(row, "answer_id"),
        claim_id=_req(row, "claim_id"),
        verifier_id=_req(row, "verifier_id"),
        status=_status(row.get("status")),
        label=_str(row.get("label")),
        gold_label=_str(row.get("gold_label")),
        model=_str(row.get("model")),
        prompt_id=_str(row.get("prompt_id")),
        prompt_version=_opt_int(row.get("prompt_version")),
    )
    if v.status == _OK and v.label not in VERDICT_LABELS:
        raise ValueError(
            f"verification {(v.dataset, v.answer_id, v.claim_id, v.verifier_id)} has status ok "
            f"but label {v.label!r}; expected one of {list(VERDICT_LABELS)}"
        )
    return v


def _to_s(r: SentenceRecord | Mapping[str, Any]) -> _S:
    row: Mapping[str, Any] = r.__dict__ if isinstance(r, SentenceRecord) else r
    sid = _opt_int(row.get("sentence_id"))
    if sid is None:
        raise ValueError(f"record is missing required field 'sentence_id': {dict(row)!r}")
    return _S(
        dataset=_req(row, "dataset"),
        answer_id=_req(row, "answer_id"),
        sentence_id=sid,
        status=_status(row.get("status")),
        n_claims=_opt_int(row.get("n_claims")) or 0,
        claim_ids=_sentence_claim_ids(row.get("claims")),
        unsplit=_unsplit(row),
    )


def _unsplit(row: Mapping[str, Any]) -> bool:
    """Given claims that could not be mapped to sentences are written as one record for
    the whole answer, with no span (see assay.runs._factuality)."""
    return row.get("decomposer_id") == GIVEN_DECOMPOSER and _missing_span(row.get("span"))


def _missing_span(span: object) -> bool:
    return span is None or (isinstance(span, float) and math.isnan(span))


def _sentence_claim_ids(claims: object) -> tuple[str, ...]:
    """Ids of the claims a sentence record carries (`Claim` models or their dicts)."""
    if claims is None or isinstance(claims, str | float):  # absent, or NaN in a frame
        return ()
    ids: list[str] = []
    for c in claims if isinstance(claims, Iterable) else ():
        cid = c.get("id") if isinstance(c, Mapping) else getattr(c, "id", None)
        if cid is None:
            raise ValueError(f"sentence record claim without an id: {c!r}")
        ids.append(str(cid))
    return tuple(ids)


def _to_c(r: ClaimRecord | Mapping[str, Any]) -> _C:
    row: Mapping[str, Any] = r.__dict__ if isinstance(r, ClaimRecord) else r
    return _C(
        dataset=_req(row, "dataset"),
        answer_id=_req(row, "answer_id"),
        claim_id=_req(row, "claim_id"),
        gold_label=_str(row.get("gold_label")),
    )


@dataclass(slots=True)
class _Meta:
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None


def _latest_verifications(
    records: VerificationInput,
) -> tuple[dict[str, dict[ClaimKey, _V]], dict[str, _Meta]]:
    """Latest verification per (claim, verifier), grouped by verifier; metadata per verifier."""
    by_verifier: dict[str, dict[ClaimKey, _V]] = {}
    meta: dict[str, _Meta] = {}
    for r in _rows(records, _V_REQ, _V_OPT):
        v = _to_v(r)
        by_verifier.setdefault(v.verifier_id, {})[(v.dataset, v.answer_id, v.claim_id)] = v
        m = meta.setdefault(v.verifier_id, _Meta())
        # Last non-null value wins, like the records themselves.
        if v.model is not None:
            m.model = v.model
        if v.prompt_id is not None:
            m.prompt_id = v.prompt_id
        if v.prompt_version is not None:
            m.prompt_version = v.prompt_version
    return by_verifier, meta


@dataclass(slots=True)
class _Universe:
    """Everything the metrics need, after last-record-wins deduplication."""

    responses: list[ResponseKey]
    claims: dict[ResponseKey, list[ClaimKey]]
    n_unrecorded: dict[ResponseKey, int]
    has_sentences: bool
    n_sentences: dict[ResponseKey, int]
    n_sentences_failed: dict[ResponseKey, int]
    verdicts: dict[str, dict[ClaimKey, _V]]
    meta: dict[str, _Meta]
    gold: dict[ClaimKey, str]
    unsplit: set[ResponseKey] = field(default_factory=set)

    def datasets(self) -> list[str]:
        return sorted({rk[0] for rk in self.responses} | {ck[0] for ck in self.gold})

    def subset(self, dataset: str) -> _Universe:
        """The same universe restricted to one dataset (for per-dataset rows)."""

        def keep(key: tuple[str, ...]) -> bool:
            return key[0] == dataset

        return _Universe(
            responses=[rk for rk in self.responses if keep(rk)],
            claims={rk: v for rk, v in self.claims.items() if keep(rk)},
            n_unrecorded={rk: v for rk, v in self.n_unrecorded.items() if keep(rk)},
            has_sentences=self.has_sentences,
            n_sentences={rk: v for rk, v in self.n_sentences.items() if keep(rk)},
            n_sentences_failed={rk: v for rk, v in self.n_sentences_failed.items() if keep(rk)},
            verdicts={
                vid: {ck: v for ck, v in per.items() if keep(ck)}
                for vid, per in self.verdicts.items()
            },
            meta=self.meta,
            gold={ck: v for ck, v in self.gold.items() if keep(ck)},
            unsplit={rk for rk in self.unsplit if keep(rk)},
        )


def _set_gold(gold: dict[ClaimKey, str], key: ClaimKey, label: str | None) -> None:
    if label is None:
        return
    old = gold.setdefault(key, label)
    if old != label:
        raise ValueError(f"claim {key} has conflicting gold labels {old!r} and {label!r}")


def _universe(
    verifications: VerificationInput,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    responses: ResponseInput | None = None,
    *,
    with_gold: bool = False,
) -> _Universe:
    """With `with_gold`, collect gold claim labels (conflicting labels are an error)."""
    verdicts, meta = _latest_verifications(verifications)

    latest_claims: dict[ClaimKey, _C] = {}
    if claims is not None:
        for r in _rows(claims, ("dataset", "answer_id", "claim_id"), ("gold_label",)):
            c = _to_c(r)
            latest_claims[(c.dataset, c.answer_id, c.claim_id)] = c
    latest_sentences: dict[tuple[str, str, int], _S] = {}
    if sentences is not None:
        req = ("dataset", "answer_id", "sentence_id", "status")
        for r in _rows(sentences, req, ("n_claims", "claims", "decomposer_id", "span")):
            s = _to_s(r)
            latest_sentences[(s.dataset, s.answer_id, s.sentence_id)] = s

    gold: dict[ClaimKey, str] = {}
    claim_keys: set[ClaimKey] = set(latest_claims)
    for per_claim in verdicts.values():
        claim_keys.update(per_claim)
    if with_gold:
        for ck, c in latest_claims.items():
            _set_gold(gold, ck, c.gold_label)
        for per_claim in verdicts.values():
            for ck, v in per_claim.items():
                _set_gold(gold, ck, v.gold_label)

    n_sent: dict[ResponseKey, int] = {}
    n_failed: dict[ResponseKey, int] = {}
    declared: dict[ResponseKey, int] = {}
    unsplit: set[ResponseKey] = set()
    for s in latest_sentences.values():
        rk = (s.dataset, s.answer_id)
        claim_keys.update((s.dataset, s.answer_id, cid) for cid in s.claim_ids)
        n_sent[rk] = n_sent.get(rk, 0) + 1
        if s.unsplit:
            unsplit.add(rk)
        n_failed[rk] = n_failed.get(rk, 0) + int(s.status != _OK)
        declared[rk] = declared.get(rk, 0) + s.n_claims

    by_response: dict[ResponseKey, list[ClaimKey]] = {}
    for ck in sorted(claim_keys):
        by_response.setdefault((ck[0], ck[1]), []).append(ck)

    keys: set[ResponseKey] = set(by_response) | set(n_sent)
    if responses is not None:
        if isinstance(responses, pd.DataFrame):
            pairs = zip(responses["dataset"], responses["answer_id"], strict=True)
            keys.update((str(d), str(a)) for d, a in pairs)
        else:
            keys.update((str(d), str(a)) for d, a in responses)
    unrecorded = {
        rk: max(0, n - len(by_response.get(rk, ()))) for rk, n in declared.items() if n > 0
    }
    return _Universe(
        responses=sorted(keys),
        claims=by_response,
        n_unrecorded=unrecorded,
        has_sentences=sentences is not None,
        n_sentences=n_sent,
        n_sentences_failed=n_failed,
        verdicts=verdicts,
        meta=meta,
        gold=gold,
        unsplit=unsplit,
    )


# ----------------------------------------------------------------- per response


@dataclass(slots=True)
class _Table:
    """Per-response arrays for one verifier, responses in `_Universe.responses` order."""

    counts: NDArray[np.int64]  # (R, 8): columns as _COUNT_FIELDS
    n_claims: NDArray[np.int64]
    n_sentences: NDArray[np.int64]
    n_sentences_failed: NDArray[np.int64]

    @property
    def n_supported(self) -> NDArray[np.int64]:
        return self.counts[:, 0]

    @property
    def n_scored(self) -> NDArray[np.int64]:
        scored: NDArray[np.int64] = self.counts[:, :3].sum(axis=1)
        return scored

    def factuality(self) -> NDArray[np.float64]:
        """F(r) = supported / scored; NaN where scored == 0."""
        scored = self.n_scored.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            f: NDArray[np.float64] = np.where(scored > 0, self.n_supported / scored, np.nan)
        return f

    def categories(self) -> NDArray[np.object_]:
        cat = np.full(len(self.n_claims), "scored", dtype=object)
        no_claims = self.n_claims == 0
        cat[no_claims & (self.n_sentences_failed == 0)] = "zero_claim"
        cat[no_claims & (self.n_sentences_failed > 0)] = "undecomposed"
        cat[~no_claims & (self.n_scored == 0)] = "unscored"
        return cat


def _table(u: _Universe, verifier_id: str) -> _Table:
    per_claim = u.verdicts.get(verifier_id, {})
    counts = np.zeros((len(u.responses), len(_COUNT_FIELDS)), dtype=np.int64)
    missing = _SLOT[MISSING]
    for i, rk in enumerate(u.responses):
        row = counts[i]
        for ck in u.claims.get(rk, ()):
            v = per_claim.get(ck)
            if v is None:
                row[missing] += 1
            elif v.status == _OK and v.label is not None:
                row[_SLOT[v.label]] += 1
            else:
                row[_SLOT[v.status]] += 1
        row[missing] += u.n_unrecorded.get(rk, 0)
    n_claims = counts.sum(axis=1)
    n_sent = np.array([u.n_sentences.get(rk, 0) for rk in u.responses], dtype=np.int64)
    n_failed = np.array([u.n_sentences_failed.get(rk, 0) for rk in u.responses], dtype=np.int64)
    return _Table(counts=counts, n_claims=n_claims, n_sentences=n_sent, n_sentences_failed=n_failed)


def _check_length_penalty(length_penalty: str | None, gamma: float) -> None:
    if length_penalty not in (None, "factscore"):
        raise ValueError(f"length_penalty must be None or 'factscore', got {length_penalty!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, int | float) or not gamma > 0:
        raise ValueError(f"gamma must be a positive number, got {gamma!r}")


def length_penalized(
    factuality: ArrayLike, n_claims: ArrayLike, *, gamma: float = FACTSCORE_GAMMA
) -> NDArray[np.float64]:
    """FActScore's length penalty: F'(r) = F(r) * exp(1 - gamma / n_claims) if n_claims < gamma.

    `n_claims` is the response's decomposition count (scored or not). F'(r) is NaN where
    F(r) is NaN or `n_claims == 0`; equal to F(r) when `n_claims >= gamma`.
    """
    f = np.asarray(factuality, dtype=np.float64)
    n = np.asarray(n_claims, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(n < gamma, np.exp(1.0 - gamma / n), 1.0)
    out: NDArray[np.float64] = np.where(n > 0, f * factor, np.nan)
    return out


def response_table(
    verifications: VerificationInput,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    *,
    responses: ResponseInput | None = None,
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
) -> pd.DataFrame:
    """One row per verifier x response, sorted by (verifier_id, dataset, answer_id).

    Columns (`RESPONSE_COLUMNS`): verifier_id, dataset, answer_id; `category`: "scored"
    (F defined), "unscored" (claims, none scored), "zero_claim" (no claims and no failed
    sentence), "undecomposed" (no claims, a sentence failed); `zero_claim` (bool);
    n_sentences / n_sentences_failed (nullable Int64, NA without `sentences`); n_claims,
    n_scored, n_unscored and the counts by label and by unscored status; `factuality`
    (NaN where undefined). With `length_penalty="factscore"` a further column
    `factuality_length_penalized` holds F'(r).

    `responses` optionally lists (dataset, answer_id) pairs to include even with no
    records at all (an answer with no sentences is a 0-claim response).
    """
    _check_length_penalty(length_penalty, gamma)
    u = _universe(verifications, sentences, claims, responses)
    frames = [
        _response_frame(u, vid, _table(u, vid), length_penalty, gamma) for vid in sorted(u.verdicts)
    ]
    if not frames:
        return _response_frame(u, None, None, length_penalty, gamma)
    return pd.concat(frames, ignore_index=True)


def _response_frame(
    u: _Universe,
    verifier_id: str | None,
    t: _Table | None,
    length_penalty: str | None,
    gamma: float,
) -> pd.DataFrame:
    columns = list(RESPONSE_COLUMNS)
    if length_penalty is not None:
        columns.append("factuality_length_penalized")
    if t is None or verifier_id is None:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns}, columns=columns)
    n = len(u.responses)
    f = t.factuality()
    cat = t.categories()
    data: dict[str, Any] = {
        "verifier_id": pd.Series([verifier_id] * n, dtype=object),
        "dataset": pd.Series([rk[0] for rk in u.responses], dtype=object),
        "answer_id": pd.Series([rk[1] for rk in u.responses], dtype=object),
        "category": pd.Series(cat, dtype=object),
        "zero_claim": pd.Series(cat == "zero_claim", dtype=bool),
        "n_sentences": pd.Series(t.n_sentences, dtype="Int64"),
        "n_sentences_failed": pd.Series(t.n_sentences_failed, dtype="Int64"),
        "n_claims": pd.Series(t.n_claims, dtype="int64"),
        "n_scored": pd.Series(t.n_scored, dtype="int64"),
        "n_unscored": pd.Series(t.n_claims - t.n_scored, dtype="int64"),
    }
    if not u.has_sentences:
        data["n_sentences"] = pd.Series([pd.NA] * n, dtype="Int64")
        data["n_sentences_failed"] = pd.Series([pd.NA] * n, dtype="Int64")
    for j, name in enumerate(_COUNT_FIELDS):
        data[name] = pd.Series(t.counts[:, j], dtype="int64")
    data["factuality"] = pd.Series(f, dtype="float64")
    if length_penalty is not None:
        data["factuality_length_penalized"] = pd.Series(
            length_penalized(f, t.n_claims, gamma=gamma), dtype="float64"
        )
    return pd.DataFrame(data, columns=columns)


# ------------------------------------------------------------------- bootstrap


def _index_chunks(n: int, n_boot: int, seed: Seed) -> Iterator[tuple[int, NDArray[np.int64]]]:
    """The row draws of `bootstrap_mean_cis` (same generator, same chunking), for statistics
    that are not means: with the same seed they are the very same resamples."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _bootstrap._MAX_CELLS // n)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        yield start, rng.integers(0, n, size=(stop - start, n))


def _percentile(stats: NDArray[np.float64], confidence: float) -> tuple[float, float] | None:
    alpha = (1.0 - confidence) / 2.0
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return None
    lo, hi = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def ratio_ci(
    numerators: ArrayLike,
    denominators: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI for sum(numerators) / sum(denominators), resampling units.

    Units (rows) are drawn exactly as `bootstrap_mean_cis` draws them for the same seed.
    Every denominator must be positive. Collapses to the point when all unit ratios agree.
    """
    _bootstrap._check_settings(n_boot, confidence)
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 1 or num.shape != den.shape:
        raise ValueError(f"expected two 1-D samples of one length, got {num.shape}, {den.shape}")
    if num.size == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if not (np.isfinite(num).all() and np.isfinite(den).all()) or not (den > 0).all():
        raise ValueError("numerators must be finite and denominators finite and positive")
    point = float(num.sum() / den.sum())
    unit = num / den
    if (unit == unit[0]).all():
        return point, point
    stats = np.empty(n_boot, dtype=np.float64)
    for start, idx in _index_chunks(num.size, n_boot, seed):
        stats[start : start + len(idx)] = np.take(num, idx).sum(axis=1) / np.take(den, idx).sum(
            axis=1
        )
    ci = _percentile(stats, confidence)
    assert ci is not None  # every resample has a positive denominator
    return ci


# ------------------------------------------------------------------- spearman


def _average_ranks(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based ranks of each row of a 2-D array; tied values get the mean of their ranks."""
    m, n = a.shape
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, axis=1)
    pos = np.broadcast_to(np.arange(n), (m, n))
    start = np.ones((m, n), dtype=bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    end = np.ones((m, n), dtype=bool)
    end[:, :-1] = start[:, 1:]
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(end, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    avg = (first + last) / 2.0 + 1.0
    ranks = np.empty((m, n), dtype=np.float64)
    np.put_along_axis(ranks, order, avg, axis=1)
    return ranks


def _spearman_rows(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Spearman's rho of each row pair (Pearson on average ranks); NaN for a constant row."""
    rx = _average_ranks(x)
    ry = _average_ranks(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    num = (rx * ry).sum(axis=1)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho: NDArray[np.float64] = np.where(den > 0, num / den, np.nan)
    return np.clip(rho, -1.0, 1.0)


def average_ranks(values: ArrayLike) -> NDArray[np.float64]:
    """1-based ranks of a 1-D sample, ties sharing the mean of their ranks."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or not np.isfinite(x).all():
        raise ValueError("expected a finite 1-D sample")
    ranks: NDArray[np.float64] = _average_ranks(x[np.newaxis, :])[0]
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rank correlation with average ranks for ties (Pearson's r of the ranks).

    None when there are fewer than 2 pairs or either sample is constant.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"expected two 1-D samples of one length, got {a.shape}, {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("samples contain NaN or infinite values")
    if a.size < 2:
        return None
    rho = float(_spearman_rows(a[np.newaxis, :], b[np.newaxis, :])[0])
    return None if math.isnan(rho) else rho


def _spearman_ci(
    x: NDArray[np.float64], y: NDArray[np.float64], n_boot: int, seed: Seed, confidence: float
) -> tuple[tuple[float, float] | None, int]:
    """Percentile CI from resampled pairs, and how many resamples were degenerate (NaN)."""
    stats = np.empty(n_boot, dtype=np.float64)
    for start, idx in _index_chunks(x.size, n_boot, seed):
        stats[start : start + len(idx)] = _spearman_rows(np.take(x, idx), np.take(y, idx))
    return _percentile(stats, confidence), int(np.isnan(stats).sum())


# ----------------------------------------------------------------- reports


class FactualityRow(BaseModel):
    """Dataset-level factuality of one verifier. `macro` and `micro` are never merged."""

    model_config = ConfigDict(frozen=True)

    verifier_id: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    dataset: str = Field(default=POOLED, description="Dataset name, or 'all' for pooled.")
    n_responses: int = Field(description="Every response seen in any input.")
    n_responses_scored: int = Field(description="Responses with F defined (>= 1 scored claim).")
    n_zero_claim: int = Field(description="No claims, no failed sentence.")
    zero_claim_rate: float = Field(description="n_zero_claim / n_responses.")
    n_responses_unscored: int = Field(description="Has claims, none scored by this verifier.")
    n_responses_undecomposed: int = Field(description="No claims, >= 1 failed sentence.")
    n_responses_with_failed_sentences: int | None = None
    n_claims: int
    n_scored: int
    n_unscored: int
    n_supported: int
    n_unsupported: int
    n_contradicted: int
    n_parse_error: int
    n_refusal: int
    n_truncated: int
    n_api_error: int
    n_missing: int = Field(description="Claims this verifier has no record for.")
    claims_per_response: float | None = Field(description="n_claims / n_responses.")
    n_sentences: int | None = None
    n_sentences_ok: int | None = None
    n_sentences_failed: int | None = None
    claims_per_sentence: float | None = Field(
        default=None,
        description="n_claims / n_sentences_ok; None without sentences or when some "
        "response's claims could not be mapped to its sentences.",
    )
    macro: float | None = Field(description="Mean of F(r) over responses with F defined.")
    macro_lo: float | None
    macro_hi: float | None
    micro: float | None = Field(description="sum(supported) / sum(scored) over all responses.")
    micro_lo: float | None
    micro_hi: float | None
    macro_length_penalized: float | None = Field(
        default=None, description="Mean of F'(r) (FActScore penalty); None unless requested."
    )
    macro_length_penalized_lo: float | None = None
    macro_length_penalized_hi: float | None = None


class FactualityReport(BaseModel):
    """One `FactualityRow` per verifier (sorted), plus the settings used."""

    model_config = ConfigDict(frozen=True)

    rows: list[FactualityRow] = Field(default_factory=list)
    n_boot: int
    seed: int
    confidence: float
    length_penalty: LengthPenalty | None = None
    gamma: float = FACTSCORE_GAMMA

    def to_frame(self) -> pd.DataFrame:
        """One row per verifier, columns in `FactualityRow` field order."""
        return pd.DataFrame(
            [r.model_dump() for r in self.rows], columns=list(FactualityRow.model_fields)
        )


def _check_settings(n_boot: int, seed: int, confidence: float) -> None:
    """Like the bootstrap's own check, but `n_boot=0` is allowed: it means "no CI"."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    no_ci = n_boot == 0 and isinstance(n_boot, int) and not isinstance(n_boot, bool)
    _bootstrap._check_settings(1 if no_ci else n_boot, confidence)


def _parts(u: _Universe) -> list[tuple[str, _Universe]]:
    """Pooled first, then one part per dataset when there are several."""
    names = u.datasets()
    parts = [(POOLED, u)]
    if len(names) > 1:
        parts += [(name, u.subset(name)) for name in names]
    return parts


def _safe_div(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def factuality_scores(
    verifications: VerificationInput,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    *,
    responses: ResponseInput | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
) -> FactualityReport:
    """Macro and micro factuality per verifier, with seeded percentile bootstrap CIs.

    macro = mean F(r) over responses with F defined; micro = sum(supported) / sum(scored).
    Both CIs resample responses (those with >= 1 scored claim; the others add nothing to
    either sum) with the same draws; micro is recomputed as a ratio of sums per resample.
    Each verifier has its own random stream derived from `seed` and its id.

    `length_penalty="factscore"` adds `macro_length_penalized`: the mean of
    F'(r) = F(r) * exp(1 - gamma / n_claims(r)) for n_claims(r) < gamma (else F(r)), over
    the same responses. Pass `sentences` to count 0-claim responses and sentence failures,
    `claims` to count claims no verifier has a record for, `responses` for answers with no
    records at all.
    """
    _check_settings(n_boot, seed, confidence)
    _check_length_penalty(length_penalty, gamma)
    u = _universe(verifications, sentences, claims, responses)
    boot = _Boot(n_boot, seed, confidence)
    rows = [
        _factuality_row(part, vid, name, boot, length_penalty, gamma)
        for name, part in _parts(u)
        for vid in sorted(u.verdicts)
    ]
    return FactualityReport(
        rows=rows,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        length_penalty=length_penalty,
        gamma=gamma,
    )


@dataclass(frozen=True, slots=True)
class _Boot:
    n_boot: int
    seed: int
    confidence: float


def _factuality_row(
    u: _Universe,
    vid: str,
    dataset: str,
    boot: _Boot,
    length_penalty: str | None,
    gamma: float,
) -> FactualityRow:
    t = _table(u, vid)
    meta = u.meta[vid]
    f = t.factuality()
    defined = ~np.isnan(f)
    cat = t.categories()
    totals = {name: int(t.counts[:, j].sum()) for j, name in enumerate(_COUNT_FIELDS)}
    n_responses = len(u.responses)
    n_claims = int(t.n_claims.sum())
    n_scored = int(t.n_scored.sum())
    n_supported = totals["n_supported"]

    macro = micro = pen = None
    macro_ci: tuple[float | None, float | None] = (None, None)
    micro_ci: tuple[float | None, float | None] = (None, None)
    pen_ci: tuple[float | None, float | None] = (None, None)
    if defined.any():
        cols = [f[defined]]
        if length_penalty is not None:
            cols.append(length_penalized(f, t.n_claims, gamma=gamma)[defined])
        sample = np.column_stack(cols)
        means = sample.mean(axis=0)
        macro = float(means[0])
        if length_penalty is not None:
            pen = float(means[1])
        micro = n_supported / n_scored
    if defined.any() and boot.n_boot > 0:
        stream = _stream_seed(boot.seed, vid, "factuality", "responses", dataset)
        lo, hi = bootstrap_mean_cis(
            sample, n_boot=boot.n_boot, seed=stream, confidence=boot.confidence
        )
        macro_ci = (float(lo[0]), float(hi[0]))
        if length_penalty is not None:
            pen_ci = (float(lo[1]), float(hi[1]))
        micro_ci = ratio_ci(
            t.n_supported[defined],
            t.n_scored[defined],
            n_boot=boot.n_boot,
            seed=stream,
            confidence=boot.confidence,
        )

    n_sent = n_ok = n_failed = n_resp_failed = None
    per_sentence = None
    if u.has_sentences:
        n_sent = int(t.n_sentences.sum())
        n_failed = int(t.n_sentences_failed.sum())
        n_ok = n_sent - n_failed
        n_resp_failed = int((t.n_sentences_failed > 0).sum())
        mapped = not any(rk in u.unsplit for rk in u.responses)
        per_sentence = _safe_div(n_claims, n_ok) if mapped else None
    n_zero = int((cat == "zero_claim").sum())
    return FactualityRow(
        verifier_id=vid,
        model=meta.model,
        prompt_id=meta.prompt_id,
        prompt_version=meta.prompt_version,
        dataset=dataset,
        n_responses=n_responses,
        n_responses_scored=int(defined.sum()),
        n_zero_claim=n_zero,
        zero_claim_rate=n_zero / n_responses if n_responses else 0.0,
        n_responses_unscored=int((cat == "unscored").sum()),
        n_responses_undecomposed=int((cat == "undecomposed").sum()),
        n_responses_with_failed_sentences=n_resp_failed,
        n_claims=n_claims,
        n_scored=n_scored,
        n_unscored=n_claims - n_scored,
        **totals,
        claims_per_response=_safe_div(n_claims, n_responses),
        n_sentences=n_sent,
        n_sentences_ok=n_ok,
        n_sentences_failed=n_failed,
        claims_per_sentence=per_sentence,
        macro=macro,
        macro_lo=macro_ci[0],
        macro_hi=macro_ci[1],
        micro=micro,
        micro_lo=micro_ci[0],
        micro_hi=micro_ci[1],
        macro_length_penalized=pen,
        macro_length_penalized_lo=pen_ci[0],
        macro_length_penalized_hi=pen_ci[1],
    )


# ------------------------------------------------------------------ gold labels


def _positive_set(positive: str | Iterable[str]) -> frozenset[str]:
    labels = frozenset((positive,) if isinstance(positive, str) else positive)
    if not labels:
        raise ValueError("positive must name at least one gold label")
    return labels


ConfusionDict: TypeAlias = dict[str, dict[str, int]]


def _confusion_frame(confusion: ConfusionDict, index: str, columns: str) -> pd.DataFrame:
    rows = list(confusion)
    cols: list[str] = []
    for counts in confusion.values():
        cols += [c for c in counts if c not in cols]
    frame = pd.DataFrame(
        [[confusion[r].get(c, 0) for c in cols] for r in rows], index=rows, columns=cols
    ).astype("int64")
    frame.index.name = index
    frame.columns.name = columns
    return frame


class GoldRow(BaseModel):
    """One verifier against gold claim labels (binary: supported vs not supported)."""

    model_config = ConfigDict(frozen=True)

    verifier_id: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    dataset: str = Field(default=POOLED, description="Dataset name, or 'all' for pooled.")
    unscored: UnscoredPolicy
    n: int = Field(description="Claims in the confusion matrix.")
    n_gold: int = Field(description="Claims with a gold label (scored or not).")
    n_scored: int
    n_unscored: int = Field(description="Gold claims this verifier did not score.")
    n_excluded_unscored: int = Field(description="n_unscored if unscored='exclude', else 0.")
    n_no_gold: int = Field(description="Claims verified by this verifier with no gold label.")
    tp: int
    fp: int
    fn: int
    tn: int
    accuracy: float | None
    balanced_accuracy: float | None = Field(description="None unless both gold classes occur.")
    precision: float | None
    recall: float | None
    f1: float | None
    confusion: ConfusionDict = Field(
        description="gold ('supported' | 'not_supported') -> predicted -> count."
    )
    label_confusion: ConfusionDict = Field(
        description="Raw gold label -> verdict label, or status when unscored -> count; "
        "every gold claim, whatever `unscored` says."
    )

    def confusion_frame(self) -> pd.DataFrame:
        """The 2x2 matrix: index gold, columns predicted."""
        return _confusion_frame(self.confusion, "gold", "predicted")

    def label_confusion_frame(self) -> pd.DataFrame:
        return _confusion_frame(self.label_confusion, "gold", "verdict")


_MATRIX_FIELDS = ("confusion", "label_confusion")


class GoldReport(BaseModel):
    """One `GoldRow` per verifier (sorted)."""

    model_config = ConfigDict(frozen=True)

    rows: list[GoldRow] = Field(default_factory=list)
    positive: list[str]
    unscored: UnscoredPolicy

    def to_frame(self) -> pd.DataFrame:
        """One row per verifier; the nested confusion dicts are left out (see `row()`)."""
        cols = [c for c in GoldRow.model_fields if c not in _MATRIX_FIELDS]
        return pd.DataFrame(
            [r.model_dump(exclude=set(_MATRIX_FIELDS)) for r in self.rows], columns=cols
        )

    def row(self, verifier_id: str) -> GoldRow:
        for r in self.rows:
            if r.verifier_id == verifier_id:
                return r
        raise KeyError(verifier_id)

    def confusion_frame(self, verifier_id: str) -> pd.DataFrame:
        return self.row(verifier_id).confusion_frame()


def gold_metrics(
    verifications: VerificationInput,
    *,
    claims: ClaimInput | None = None,
    positive: str | Iterable[str] = (SUPPORTED,),
    unscored: UnscoredPolicy = "exclude",
) -> GoldReport:
    """Each verifier's verdicts against gold claim labels.

    Gold labels come from the verifications' `gold_label` (and from `claims`, if given);
    a gold label in `positive` is the positive class ("supported"), any other gold label
    negative; claims with no gold label are skipped. The prediction is positive iff the
    verdict is "supported" (unsupported and contradicted are negative).

    `unscored="exclude"` (default): metrics over gold claims whose verification is ok;
    the rest are counted in `n_excluded_unscored`. `unscored="wrong"`: every gold claim
    counts, an unscored one as an error (predicted the opposite of its gold class: a false
    negative if gold is positive, a false positive if not).
    """
    if unscored not in ("exclude", "wrong"):
        raise ValueError(f"unscored must be 'exclude' or 'wrong', got {unscored!r}")
    pos = _positive_set(positive)
    u = _universe(verifications, None, claims, None, with_gold=True)
    rows = [
        _gold_row(part, vid, name, pos, unscored)
        for name, part in _parts(u)
        for vid in sorted(u.verdicts)
    ]
    return GoldReport(rows=rows, positive=sorted(pos), unscored=unscored)


@dataclass(slots=True)
class _Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    n_unscored: int = 0


def _gold_counts(
    u: _Universe, per_claim: dict[ClaimKey, _V], pos: frozenset[str], unscored: str
) -> tuple[_Confusion, ConfusionDict]:
    c = _Confusion()
    raw: ConfusionDict = {}
    for ck in sorted(u.gold):
        g_label = u.gold[ck]
        g = g_label in pos
        v = per_claim.get(ck)
        scored = v is not None and v.status == _OK
        verdict = MISSING if v is None else str(v.label) if scored else v.status
        cell = raw.setdefault(g_label, {})
        cell[verdict] = cell.get(verdict, 0) + 1
        if scored:
            pred = verdict == SUPPORTED
        else:
            c.n_unscored += 1
            if unscored == "exclude":
                continue
            pred = not g  # counted as wrong
        if g and pred:
            c.tp += 1
        elif g:
            c.fn += 1
        elif pred:
            c.fp += 1
        else:
            c.tn += 1
    return c, raw


def _gold_row(
    u: _Universe, vid: str, dataset: str, pos: frozenset[str], unscored: UnscoredPolicy
) -> GoldRow:
    per_claim = u.verdicts[vid]
    meta = u.meta[vid]
    c, raw = _gold_counts(u, per_claim, pos, unscored)
    tp, fp, fn, tn = c.tp, c.fp, c.fn, c.tn
    n = tp + fp + fn + tn
    recall = _safe_div(tp, tp + fn)
    specificity = _safe_div(tn, tn + fp)
    balanced = None if recall is None or specificity is None else (recall + specificity) / 2
    return GoldRow(
        verifier_id=vid,
        model=meta.model,
        prompt_id=meta.prompt_id,
        prompt_version=meta.prompt_version,
        dataset=dataset,
        unscored=unscored,
        n=n,
        n_gold=len(u.gold),
        n_scored=len(u.gold) - c.n_unscored,
        n_unscored=c.n_unscored,
        n_excluded_unscored=c.n_unscored if unscored == "exclude" else 0,
        n_no_gold=sum(1 for ck in per_claim if ck not in u.gold),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        accuracy=_safe_div(tp + tn, n),
        balanced_accuracy=balanced,
        precision=_safe_div(tp, tp + fp),
        recall=recall,
        f1=_safe_div(2 * tp, 2 * tp + fp + fn),
        confusion={
            SUPPORTED: {SUPPORTED: tp, NOT_SUPPORTED: fn},
            NOT_SUPPORTED: {SUPPORTED: fp, NOT_SUPPORTED: tn},
        },
        label_confusion=_ordered_confusion(raw),
    )


def _label_order(labels: Iterable[str], known: Sequence[str]) -> list[str]:
    present = set(labels)
    return [k for k in known if k in present] + sorted(present - set(known))


def _ordered_confusion(raw: ConfusionDict) -> ConfusionDict:
    cols = _label_order(
        (c for counts in raw.values() for c in counts), (*VERDICT_LABELS, *UNSCORED_STATUSES)
    )
    return {g: {c: raw[g][c] for c in cols if c in raw[g]} for g in _label_order(raw, GOLD_LABELS)}


# ----------------------------------------------------------------- correlation


class CorrelationRow(BaseModel):
    """Spearman's rho between a verifier's F(r) and gold factuality, over responses."""

    model_config = ConfigDict(frozen=True)

    verifier_id: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    dataset: str = Field(default=POOLED, description="Dataset name, or 'all' for pooled.")
    n: int = Field(description="Responses with both predicted and gold factuality defined.")
    n_predicted: int = Field(description="Responses with predicted factuality defined.")
    n_gold: int = Field(description="Responses with gold factuality defined.")
    spearman: float | None = Field(description="None when n < 2 or a side is constant.")
    spearman_lo: float | None
    spearman_hi: float | None
    n_boot_degenerate: int = Field(
        description="Resamples with a constant side (no rho), left out of the CI."
    )


class CorrelationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: list[CorrelationRow] = Field(default_factory=list)
    gold_source: Literal["given", "claims"]
    predicted: Literal["factuality", "factuality_length_penalized"]
    n_boot: int
    seed: int
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [r.model_dump() for r in self.rows], columns=list(CorrelationRow.model_fields)
        )


GoldFactuality: TypeAlias = Mapping[str, float] | Mapping[tuple[str, str], float]


def _given_gold(u: _Universe, gold: GoldFactuality) -> NDArray[np.float64]:
    by_answer: dict[str, list[ResponseKey]] = {}
    for rk in u.responses:
        by_answer.setdefault(rk[1], []).append(rk)
    values = {rk: np.nan for rk in u.responses}
    for key, value in gold.items():
        if isinstance(key, tuple):
            targets = [key] if key in values else []
        else:
            targets = by_answer.get(str(key), [])
            if len(targets) > 1:
                raise ValueError(
                    f"answer_id {key!r} occurs in several datasets "
                    f"{sorted(d for d, _ in targets)}; key gold_factuality by (dataset, answer_id)"
                )
        for rk in targets:
            values[rk] = np.nan if _missing(value) else float(value)
    return np.array([values[rk] for rk in u.responses], dtype=np.float64)


def _claims_gold(u: _Universe, pos: frozenset[str]) -> NDArray[np.float64]:
    total: dict[ResponseKey, int] = {}
    good: dict[ResponseKey, int] = {}
    for ck, label in u.gold.items():
        rk = (ck[0], ck[1])
        total[rk] = total.get(rk, 0) + 1
        good[rk] = good.get(rk, 0) + int(label in pos)
    return np.array(
        [good[rk] / total[rk] if rk in total else np.nan for rk in u.responses], dtype=np.float64
    )


def factuality_correlation(
    verifications: VerificationInput,
    gold_factuality: GoldFactuality | None = None,
    *,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    positive: str | Iterable[str] = (SUPPORTED,),
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationReport:
    """Spearman's rho (average ranks for ties) between F(r) and gold factuality per verifier.

    Gold factuality is `gold_factuality[answer_id]` (or `[(dataset, answer_id)]`), or, when
    not given, the fraction of a response's gold-labelled claims whose label is in
    `positive`. Only responses where both are defined count. The CI is a percentile
    bootstrap over those responses (pairs resampled, ranks recomputed per resample).
    With `length_penalty="factscore"` the predicted value is F'(r) instead of F(r).
    """
    _check_settings(n_boot, seed, confidence)
    _check_length_penalty(length_penalty, gamma)
    pos = _positive_set(positive)
    u = _universe(verifications, sentences, claims, None, with_gold=gold_factuality is None)
    source: Literal["given", "claims"] = "claims" if gold_factuality is None else "given"
    boot = _Boot(n_boot, seed, confidence)
    rows: list[CorrelationRow] = []
    for name, part in _parts(u):
        if gold_factuality is None:
            gold = _claims_gold(part, pos)
        else:
            gold = _given_gold(part, gold_factuality)
        if not np.isfinite(gold[~np.isnan(gold)]).all():
            raise ValueError("gold factuality contains infinite values")
        for vid in sorted(u.verdicts):
            pred = _predicted(part, vid, length_penalty, gamma)
            rows.append(_correlation_row(part, vid, name, pred, gold, boot))
    return CorrelationReport(
        rows=rows,
        gold_source=source,
        predicted="factuality" if length_penalty is None else "factuality_length_penalized",
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
    )


def _predicted(
    u: _Universe, vid: str, length_penalty: str | None, gamma: float
) -> NDArray[np.float64]:
    t = _table(u, vid)
    pred = t.factuality()
    if length_penalty is not None:
        pred = length_penalized(pred, t.n_claims, gamma=gamma)
    return pred


def _correlation_row(
    u: _Universe,
    vid: str,
    dataset: str,
    pred: NDArray[np.float64],
    gold: NDArray[np.float64],
    boot: _Boot,
) -> CorrelationRow:
    both = ~np.isnan(pred) & ~np.isnan(gold)
    x, y = pred[both], gold[both]
    rho = spearman(x, y)
    ci: tuple[float, float] | None = None
    degenerate = 0
    if rho is not None and boot.n_boot > 0:
        stream = _stream_seed(boot.seed, vid, "factuality", "spearman", dataset)
        ci, degenerate = _spearman_ci(x, y, boot.n_boot, stream, boot.confidence)
    meta = u.meta[vid]
    return CorrelationRow(
        verifier_id=vid,
        model=meta.model,
        prompt_id=meta.prompt_id,
        prompt_version=meta.prompt_version,
        dataset=dataset,
        n=int(both.sum()),
        n_predicted=int((~np.isnan(pred)).sum()),
        n_gold=int((~np.isnan(gold)).sum()),
        spearman=rho,
        spearman_lo=None if ci is None else ci[0],
        spearman_hi=None if ci is None else ci[1],
        n_boot_degenerate=degenerate,
    )
