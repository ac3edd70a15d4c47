"""A retrieval verifier's search run again: the corpus the run read (by sha256), the
retriever rebuilt from the settings the manifest recorded, each claim searched as the
verifier searched it (`retriever.search(claim, k=top_k)`).

Both halves of a record are checked: the passages retrieved now must be the ones the
record names as its evidence (ids in rank order, raw scores to 1e-6), so an edited
evidence list or a changed corpus is named as such; and the request rendered with those
passages must give the record's key. BM25 is deterministic; the dense half of a hybrid
retriever needs its local model directory, checked by its recorded hash.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.answers import Passage
from assay.core.manifest import Manifest
from assay.core.rundir import file_sha256
from assay.errors import AssayError
from assay.retrieval import (
    BM25Retriever,
    Corpus,
    DenseRetriever,
    HybridRetriever,
    Retriever,
    TransformersEmbedder,
    load_corpus,
)
from assay.retrieval._identity import MACHINE_KEYS

# keys of a retriever's description that name an installed version, not what it does
_VERSION_KEYS = frozenset({"library", "torch", "transformers"})
_SCORE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Refusal:
    """Why a component's records cannot be checked: a skip (something is not here), or,
    when `fails`, a problem (a file the run read is here with other bytes)."""

    reason: str
    fails: bool = False


class Retrieval:
    """One verifier's retriever, rebuilt; `reproduce` a record's passages."""

    def __init__(self, retriever: Retriever, top_k: int) -> None:
        self.retriever, self.top_k = retriever, top_k

    def reproduce(self, row: dict[str, Any]) -> list[Passage] | str:
        """The passages retrieved now for the record's claim, or what differs from the
        evidence the record names."""
        hits = self.retriever.search(str(row.get("claim") or ""), k=self.top_k)
        recorded = [e for e in row.get("evidence") or [] if isinstance(e, dict)]
        now = [h.passage.id for h in hits]
        then = [str(e.get("passage_id")) for e in recorded]
        if now != then:
            return f"retrieval not reproduced: evidence {then} recorded, {now} retrieved now"
        for rank, (hit, entry) in enumerate(zip(hits, recorded, strict=True), start=1):
            score = entry.get("score")
            if not isinstance(score, int | float) or not math.isclose(
                hit.score, score, rel_tol=_SCORE_TOLERANCE, abs_tol=1e-9
            ):
                return (
                    f"retrieval not reproduced: {hit.passage.id} (rank {rank}) scored "
                    f"{hit.score!r} now, {score!r} recorded"
                )
        return [h.passage for h in hits]


def _inputs(manifest: Manifest) -> Iterator[Any]:
    """The manifest's `inputs` (files besides datasets and prompts), when it has them."""
    yield from getattr(manifest, "inputs", None) or []


def _field(entry: Any, name: str) -> Any:
    return entry.get(name) if isinstance(entry, dict) else getattr(entry, name, None)


def _candidates(run_dir: Path, manifest: Manifest, sha: str, path: str | None) -> list[Path]:
    """Where the corpus may be: a copy in the run directory (an `inputs` entry's
    `snapshot`, or `snapshot/data/<sha16>-<name>` as packs name it), its recorded path."""
    found = [
        run_dir / str(_field(e, "snapshot"))
        for e in _inputs(manifest)
        if _field(e, "sha256") == sha and _field(e, "snapshot")
    ]
    if path:
        found.append(run_dir / "snapshot" / "data" / f"{sha[:16]}-{Path(path).name}")
        found.append(Path(path).expanduser())
    return list(dict.fromkeys(found))


def find_corpus(run_dir: Path, manifest: Manifest, info: dict[str, Any]) -> Corpus | Refusal:
    """The corpus the run searched, from a file whose sha256 is the recorded one."""
    sha, path = info.get("sha256"), info.get("path")
    if not isinstance(sha, str) or not sha:
        return Refusal(f"corpus {path}: no sha256 recorded")
    present = [p for p in _candidates(run_dir, manifest, sha, path) if p.is_file()]
    if not present:
        return Refusal(
            f"corpus {path} is not here and the run directory has no copy of it "
            "(`bundle_data = true` or `assay pack --with-data` keeps one)"
        )
    good = [p for p in present if file_sha256(p) == sha]
    if not good:
        now = file_sha256(present[0])
        return Refusal(
            f"corpus {present[0]} has sha256 {now[:12]}, the run searched {sha[:12]}", fails=True
        )
    try:
        return load_corpus(good[0])
    except AssayError as exc:
        return Refusal(f"corpus {good[0]} does not load: {exc}", fails=True)


def _dense(described: dict[str, Any], corpus: Corpus) -> DenseRetriever | Refusal:
    """The dense half, from the local model directory the run used, when it is here."""
    embedder = described.get("embedder") or {}
    model_dir = Path(str(embedder.get("model_dir") or ""))
    if not embedder.get("model_dir") or not model_dir.is_dir():
        return Refusal(
            f"dense retrieval model {model_dir} is not here: the dense half of the "
            "retrieval cannot be run again"
        )
    pooling = embedder.get("pooling")
    try:
        model = TransformersEmbedder(
            model_dir,
            pooling=pooling if pooling in ("mean", "cls") else "mean",
            batch_size=int(embedder.get("batch_size") or 32),
            max_length=int(embedder.get("max_length") or 256),
        )
    except (AssayError, ValueError, OSError) as exc:
        return Refusal(f"dense retrieval model {model_dir} does not load: {exc}")
    return DenseRetriever(
        corpus,
        model,
        query_prefix=str(described.get("query_prefix") or ""),
        passage_prefix=str(described.get("passage_prefix") or ""),
    )


def _bm25(described: dict[str, Any], corpus: Corpus) -> BM25Retriever:
    return BM25Retriever(corpus, k1=float(described["k1"]), b=float(described["b"]))


def _rebuild(described: dict[str, Any], corpus: Corpus) -> Retriever | Refusal:
    """The verifier's retriever, as `verifiers.corpus_retriever` builds it."""
    kind = described.get("kind")
    if kind == "bm25":
        return _bm25(described, corpus)
    if kind != "hybrid":
        return Refusal(f"a {kind} retriever is not rebuilt by verify")
    parts = described.get("components") or {}
    dense = _dense(parts.get("dense") or {}, corpus)
    if isinstance(dense, Refusal):
        return dense
    return HybridRetriever(
        _bm25(parts.get("bm25") or {}, corpus),
        dense,
        method=str(described.get("method") or "rrf"),
        rrf_k=float(described.get("rrf_k", 60)),
        candidates=int(described.get("candidates", 100)),
    )


def _portable(value: Any) -> Any:
    """A description without machine paths and installed versions."""
    if isinstance(value, dict):
        drop = MACHINE_KEYS | _VERSION_KEYS
        return {k: _portable(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_portable(v) for v in value]
    return value


def setting_difference(then: Any, now: Any, where: str = "") -> str | None:
    """The first key path at which two descriptions differ, or None."""
    if isinstance(then, dict) and isinstance(now, dict):
        for key in sorted(set(then) | set(now)):
            found = setting_difference(then.get(key), now.get(key), f"{where}.{key}".lstrip("."))
            if found is not None:
                return found
        return None
    return None if then == now else f"{where or 'the settings'}: {then!r} then, {now!r} now"


def retrieval_for(run_dir: Path, manifest: Manifest, entry: dict[str, Any]) -> Retrieval | Refusal:
    """A retrieval verifier's search, rebuilt and checked to be the one the run used."""
    described = entry.get("retriever")
    if not isinstance(described, dict):
        return Refusal("no retriever recorded in the manifest")
    bm25 = described if described.get("kind") == "bm25" else None
    bm25 = bm25 or (described.get("components") or {}).get("bm25") or {}
    corpus = find_corpus(run_dir, manifest, bm25.get("corpus") or {})
    if isinstance(corpus, Refusal):
        return corpus
    try:
        retriever = _rebuild(described, corpus)
    except (KeyError, TypeError, ValueError) as exc:
        return Refusal(f"the recorded retriever does not rebuild ({exc})")
    if isinstance(retriever, Refusal):
        return retriever
    differs = setting_difference(_portable(described), _portable(retriever.describe()))
    if differs is not None:
        return Refusal(f"the installed retriever is not the one the run used ({differs})")
    return Retrieval(retriever, int(entry.get("top_k") or 10))
