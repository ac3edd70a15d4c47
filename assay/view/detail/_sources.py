"""The files a run read, read again: its datasets and its prompts.

Both are cached in-process per (path, modification stamp) so viewing item after item of
a run reads each dataset and prompt once; the sha256 of what was read is compared with
the one the run recorded, so a file edited since the run is said, never hidden.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from assay.core.answers import Passage
from assay.core.manifest import DatasetInfo, Manifest
from assay.datasets import (
    AnswersDataset,
    ItemsDataset,
    ItemsDatasetOptions,
    LoadedDataset,
    load_answers,
    load_items,
    load_pairs,
)
from assay.errors import AssayError
from assay.prompts import BUILTIN_DIR, Prompt, load_prompt_file
from assay.runs.rebuild._sources import (
    answers_options,
    dataset_info,
    items_options,
    resolve_dataset,
)


class Stamp(NamedTuple):
    """What changes when a file is rewritten: the cache key beside its path."""

    mtime_ns: int
    size: int


def stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return Stamp(st.st_mtime_ns, st.st_size)


class Loaded(BaseModel):
    """A dataset as it is now, or why it could not be read; `note` says how it differs
    from what the run read (None: the same bytes)."""

    path: str | None
    dataset: Any = None  # ItemsDataset | LoadedDataset | None
    by_id: dict[str, Any] = {}  # its items (or pairs) by id
    note: str | None = None

    @property
    def changed(self) -> bool:
        return self.note is not None


class _Read(NamedTuple):
    dataset: ItemsDataset | LoadedDataset | AnswersDataset
    by_id: dict[str, Any]


@lru_cache(maxsize=32)
def _items_file(options: str, path: str, when: Stamp) -> _Read:
    del when  # part of the cache key only
    opts = ItemsDatasetOptions.model_validate_json(options).model_copy(update={"path": path})
    data = load_items(opts)
    return _Read(data, {item.id: item for item in data.items})


@lru_cache(maxsize=32)
def _pairs_file(path: str, name: str, delimiter: str | None, when: Stamp) -> _Read:
    del when
    data = load_pairs(path, name=name, delimiter=delimiter)
    return _Read(data, {pair.id: pair for pair in data.pairs})


@lru_cache(maxsize=16)
def _answers_file(path: str, name: str, fmt: str, evidence: str | None, when: Stamp) -> _Read:
    del when
    data = load_answers(path, format=fmt, name=name, evidence_file=evidence)
    return _Read(data, {item.id: item for item in data.items})


def _read(manifest: Manifest, info: DatasetInfo, path: Path, kind: str, run_dir: Path) -> _Read:
    """The file read the way the run read it: items with the spec block's columns,
    pairs with the recorded delimiter, answers with the recorded format."""
    when = stamp(path)
    assert when is not None
    if kind == "pairs":
        delimiter = getattr(info, "delimiter", None)
        sep = delimiter if isinstance(delimiter, str) else None
        return _pairs_file(str(path), info.name, sep, when)
    if kind == "answers":
        fmt, evidence = answers_options(manifest, info, run_dir)
        return _answers_file(str(path), info.name, fmt, evidence, when)
    options = items_options(manifest, info).model_dump_json(exclude_unset=True)
    return _items_file(options, str(path), when)


def load_dataset(run_dir: Path, manifest: Manifest, name: str, *, kind: str) -> Loaded:
    """Dataset `name` as the manifest names it, read now: `kind` is "items", "pairs"
    (ForceBench) or "answers" (factuality)."""
    info = dataset_info(manifest, name)
    if info is None:
        return Loaded(path=None, note=f"dataset {name!r} is not in the run's manifest")
    path = resolve_dataset(run_dir, info)
    when = stamp(path) if path is not None else None
    if path is None or when is None:
        shown = info.path or "(no path recorded)"
        return Loaded(path=info.path, note=f"dataset file changed since the run: {shown} is gone")
    try:
        read = _read(manifest, info, path, kind, run_dir)
    except AssayError as exc:
        return Loaded(path=str(path), note=f"dataset file changed since the run: {exc}")
    data, note = read.dataset, None
    if info.sha256 and data.sha256 != info.sha256:
        note = (
            f"dataset file changed since the run: {path} has sha256 {data.sha256}, "
            f"the run read {info.sha256}"
        )
    return Loaded(path=str(path), dataset=data, by_id=read.by_id, note=note)


# ---- prompts ------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _prompt_file(path: str, builtin: bool, when: Stamp) -> Prompt:
    del when
    return load_prompt_file(Path(path), builtin=builtin)


def _prompt_path(identity: dict[str, Any]) -> Path | None:
    """The prompt file the run read, else (a built-in prompt of another install) the
    built-in file of the same name."""
    file = identity.get("file")
    if not isinstance(file, str) or not file:
        return None
    path = Path(file)
    if path.is_file():
        return path
    if identity.get("builtin"):
        builtin = BUILTIN_DIR / path.name
        if builtin.is_file():
            return builtin
    return path


class PromptCheck(NamedTuple):
    """The prompt file as it is now: `prompt` only when its hash is the record's."""

    prompt: Prompt | None
    status: str
    note: str | None
    file: str | None


def check_prompt(identity: dict[str, Any] | None, record_sha: str | None) -> PromptCheck:
    """Load the prompt a record names and verify it is the one that produced it.

    A prompt given a Python output model (`Prompt.with_output_model`) records a derived
    hash, sha256("<file sha256>+<output schema sha256>"): it is checked by deriving it
    again from the file's hash and the schema hash the manifest recorded."""
    if not identity:
        if record_sha:  # the record names a prompt the manifest does not describe
            note = f"the run's manifest does not describe the prompt (sha256 {record_sha})"
            return PromptCheck(None, "prompt missing", note, None)
        return PromptCheck(None, "no prompt", None, None)
    expected = record_sha or identity.get("sha256")
    path = _prompt_path(identity)
    if path is None:
        return PromptCheck(None, "prompt missing", "the manifest names no prompt file", None)
    when = stamp(path)
    if when is None:
        note = f"prompt file {path} is gone (the record's prompt sha256 {expected})"
        return PromptCheck(None, "prompt missing", note, str(path))
    try:
        prompt = _prompt_file(str(path), bool(identity.get("builtin")), when)
    except AssayError as exc:
        note = f"prompt file {path} no longer loads: {exc}"
        return PromptCheck(None, "prompt changed", note, str(path))
    if prompt.sha256 == expected:
        return PromptCheck(prompt, "exact", None, str(path))
    schema = identity.get("output_schema_sha256")
    if isinstance(schema, str):
        derived = hashlib.sha256(f"{prompt.sha256}+{schema}".encode()).hexdigest()
        if derived == expected:
            note = (
                f"a custom output model: the file's sha256 {prompt.sha256} with the output "
                f"schema's {schema} gives the record's {expected}"
            )
            return PromptCheck(prompt, "exact", note, str(path))
    note = f"prompt file {path} has sha256 {prompt.sha256} now; the record's is {expected}"
    return PromptCheck(None, "prompt changed", note, str(path))


# ---- retrieval corpora -------------------------------------------------------------


@lru_cache(maxsize=4)
def _corpus_file(path: str, when: Stamp) -> tuple[str, dict[str, Passage]]:
    del when
    from assay.retrieval import load_corpus  # tokenizers and indexes: on first use

    corpus = load_corpus(path)
    return corpus.sha256, {p.id: p for p in corpus.passages}


def _corpus_info(described: Any) -> dict[str, Any] | None:
    """The `{path, sha256}` of the corpus a retriever's describe() names (a hybrid
    retriever nests its parts)."""
    if isinstance(described, dict):
        corpus = described.get("corpus")
        if isinstance(corpus, dict) and isinstance(corpus.get("path"), str):
            return corpus
        values: Any = described.values()
    elif isinstance(described, list):
        values = described
    else:
        return None
    return next((c for c in map(_corpus_info, values) if c is not None), None)


def corpus_passages(retriever: Any) -> tuple[dict[str, Passage], str | None]:
    """The passages of the corpus a retrieval verifier searched, by id, and how the
    corpus differs from the one the run read (None: the same bytes)."""
    info = _corpus_info(retriever)
    if info is None:
        return {}, "the manifest names no retrieval corpus"
    path = str(info["path"])
    when = stamp(Path(path))
    if when is None:
        return {}, f"retrieval corpus changed since the run: {path} is gone"
    try:
        sha, passages = _corpus_file(path, when)
    except AssayError as exc:
        return {}, f"retrieval corpus changed since the run: {exc}"
    recorded = info.get("sha256")
    if recorded and sha != recorded:
        why = f"{path} has sha256 {sha}, the run read {recorded}"
        return passages, f"retrieval corpus changed since the run: {why}"
    return passages, None


def clear_caches() -> None:
    """Forget every dataset and prompt read (tests; a server after a long idle)."""
    _items_file.cache_clear()
    _pairs_file.cache_clear()
    _answers_file.cache_clear()
    _corpus_file.cache_clear()
    _prompt_file.cache_clear()
