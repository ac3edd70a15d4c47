"""A local passage corpus (JSONL), retrieval hits and the retriever contract."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from assay.core.answers import Passage
from assay.datasets import check_unique, json_lines
from assay.errors import DatasetError

#: Accepted keys, first match wins: assay/BEIR (`_id`), Pyserini (`contents`), DPR-like.
ID_KEYS: tuple[str, ...] = ("id", "docid", "_id")
TEXT_KEYS: tuple[str, ...] = ("text", "contents", "passage")


class Corpus:
    """Passages in file order plus the identity of the file they came from.

    `sha256` is the hash of the file's bytes as stored (for a corpus built in memory with
    `from_passages`, of its canonical JSONL). Passage ids are unique.
    """

    __slots__ = ("_index", "passages", "path", "sha256")

    def __init__(self, passages: Sequence[Passage], *, path: str | None, sha256: str) -> None:
        self.passages: tuple[Passage, ...] = tuple(passages)
        self.path = path
        self.sha256 = sha256
        index: dict[str, int] = {}
        for i, p in enumerate(self.passages):
            if p.id in index:
                raise ValueError(f"duplicate passage id {p.id!r}")
            index[p.id] = i
        self._index = index

    @classmethod
    def from_passages(cls, passages: Iterable[Passage]) -> Corpus:
        """An in-memory corpus; `sha256` covers the passages' canonical JSON lines."""
        items = list(passages)
        digest = hashlib.sha256()
        for p in items:
            line = json.dumps(p.model_dump(), sort_keys=True, ensure_ascii=False)
            digest.update(line.encode("utf-8") + b"\n")
        return cls(items, path=None, sha256=digest.hexdigest())

    def __len__(self) -> int:
        return len(self.passages)

    def __iter__(self) -> Iterator[Passage]:
        return iter(self.passages)

    def __getitem__(self, i: int) -> Passage:
        return self.passages[i]

    def __contains__(self, passage_id: object) -> bool:
        return passage_id in self._index

    def index_of(self, passage_id: str) -> int:
        """Position of a passage in the corpus (KeyError if unknown)."""
        return self._index[passage_id]

    def get(self, passage_id: str) -> Passage:
        """The passage with this id (KeyError if unknown)."""
        return self.passages[self._index[passage_id]]

    def describe(self) -> dict[str, Any]:
        """Identity for run manifests: path, sha256 and number of passages."""
        return {"path": self.path, "sha256": self.sha256, "size": len(self.passages)}

    def __repr__(self) -> str:
        return f"Corpus(path={self.path!r}, size={len(self.passages)}, sha256={self.sha256[:12]}…)"


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved passage: `rank` starts at 1; higher `score` is better."""

    passage: Passage
    score: float
    rank: int

    @property
    def id(self) -> str:
        return self.passage.id


@runtime_checkable
class Retriever(Protocol):
    """What the retrieved-corpus verifier needs from a retriever."""

    @property
    def corpus(self) -> Corpus: ...

    def search(self, query: str, k: int = 10) -> list[Hit]: ...

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]: ...

    def describe(self) -> dict[str, Any]: ...


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def top_k(
    indices: NDArray[np.int64], scores: NDArray[np.float64], k: int
) -> list[tuple[int, float]]:
    """The `k` best (index, score) pairs: score descending, ties by smaller index."""
    n = len(scores)
    if n == 0:
        return []
    if n > k:
        # keep everything tied with the k-th best score so the tie-break stays exact
        kth = np.partition(scores, n - k)[n - k]
        keep = scores >= kth
        indices, scores = indices[keep], scores[keep]
    order = np.lexsort((indices, -scores))[:k]
    return [(int(indices[i]), float(scores[i])) for i in order]


def make_hits(corpus: Corpus, ranked: Iterable[tuple[int, float]]) -> list[Hit]:
    return [
        Hit(passage=corpus.passages[i], score=s, rank=r) for r, (i, s) in enumerate(ranked, start=1)
    ]


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------


def _first_key(row: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if k in row), None)


def _optional_str(row: dict[str, Any], key: str, path: Path, line: int) -> str | None:
    value = row.get(key)
    if value is None or isinstance(value, str):
        return value
    raise DatasetError("must be a string or null", file=path, line=line, field=key)


def _provenance(row: dict[str, Any], path: Path, line: int) -> tuple[str | None, int | str | None]:
    """`doc_id` (string or integer) and `page` (integer or string), both optional."""
    doc_id, page = row.get("doc_id"), row.get("page")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if doc_id is not None and not (isinstance(doc_id, str) and doc_id.strip()):
        raise DatasetError(
            "must be a non-empty string, an integer or null", file=path, line=line, field="doc_id"
        )
    if page is not None and (isinstance(page, bool) or not isinstance(page, int | str)):
        raise DatasetError(
            "must be an integer, a string or null", file=path, line=line, field="page"
        )
    return doc_id, page


def _passage(row: object, path: Path, line: int) -> tuple[Passage, str]:
    if not isinstance(row, dict):
        raise DatasetError("each line must be a JSON object", file=path, line=line)
    id_key = _first_key(row, ID_KEYS)
    if id_key is None:
        raise DatasetError(
            f"missing passage id (one of {', '.join(ID_KEYS)})", file=path, line=line, field="id"
        )
    pid = row[id_key]
    if isinstance(pid, int) and not isinstance(pid, bool):
        pid = str(pid)
    if not isinstance(pid, str) or not pid.strip():
        raise DatasetError(
            "passage id must be a non-empty string or an integer",
            file=path,
            line=line,
            field=id_key,
        )
    text_key = _first_key(row, TEXT_KEYS)
    if text_key is None:
        raise DatasetError(
            f"missing passage text (one of {', '.join(TEXT_KEYS)})",
            file=path,
            line=line,
            field="text",
        )
    text = row[text_key]
    if not isinstance(text, str):
        raise DatasetError("passage text must be a string", file=path, line=line, field=text_key)
    doc_id, page = _provenance(row, path, line)
    passage = Passage(
        id=pid,
        text=text,
        title=_optional_str(row, "title", path, line),
        source=_optional_str(row, "source", path, line),
        doc_id=doc_id,
        page=page,
    )
    return passage, id_key


def load_corpus(path: str | Path) -> Corpus:
    """Read a JSONL corpus (optionally `.gz`): one passage object per line.

    Keys: `id` (or `docid`, `_id`; string or integer), `text` (or `contents`,
    `passage`), optional `title`, `source`, `doc_id` (string or integer) and `page`
    (integer or string: where a cited passage sits); other keys are ignored. Blank lines are
    skipped. Errors are `DatasetError`s naming file, line and field; ids must be unique.
    """
    resolved = Path(path).expanduser()
    if not resolved.is_file():
        raise DatasetError("corpus file not found", file=resolved)
    raw = resolved.read_bytes()
    sha256 = hashlib.sha256(raw).hexdigest()
    if resolved.suffix.lower() == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DatasetError(f"cannot decompress: {exc}", file=resolved) from None
    passages: list[Passage] = []
    seen: dict[str, int] = {}
    for lineno, row in json_lines(raw, resolved):
        passage, id_key = _passage(row, resolved, lineno)
        check_unique(passage.id, seen, resolved, lineno, id_key)
        passages.append(passage)
    if not passages:
        raise DatasetError("corpus has no passages", file=resolved)
    return Corpus(passages, path=str(resolved.resolve()), sha256=sha256)
