"""Reading a run directory: its file names, records, manifest, metrics and digests.

The one reader of what runs write. Everything that reads a run directory (resume,
recompute, reparse, reports, `assay.open_run`) goes through these functions, so a
record file is parsed one way everywhere: a torn last line (a process killed mid-write)
is skipped, a corrupt line is an error naming file, line and field, and for records
with the same key the last line wins.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, RootModel, ValidationError

from assay.core._rundir_columns import Column, read_columns
from assay.core.manifest import Manifest
from assay.core.records import JudgmentRecord
from assay.errors import RunError, first_problem

__all__ = [
    "ANSWERS_FILE",
    "BATCHES_FILE",
    "CANDIDATES_FILE",
    "CERTIFICATES_FILE",
    "CLAIMS_FILE",
    "COMPARE_DIR",
    "Column",
    "DIGESTS_KEY",
    "GATES_FILE",
    "GATE_DECISIONS_FILE",
    "ITEMS_FILE",
    "ITEM_JUDGMENTS_FILE",
    "JUDGMENTS_FILE",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "POLICIES_DIR",
    "RECORD_FILES",
    "RESPONSES_FILE",
    "RUN_INFO_FILE",
    "SENTENCES_FILE",
    "SWEEP_FILE",
    "SWEEP_SUMMARY_FILE",
    "TUNE_DIR",
    "TUNE_RESULT_FILE",
    "VERIFICATIONS_FILE",
    "file_sha256",
    "iter_jsonl",
    "iter_numbered",
    "iter_numbered_rows",
    "iter_records",
    "iter_rows",
    "latest",
    "latest_records",
    "read_columns",
    "read_json",
    "read_manifest",
    "record_digests",
]

JUDGMENTS_FILE = "judgments.jsonl"
SENTENCES_FILE = "sentences.jsonl"
CLAIMS_FILE = "claims.jsonl"
VERIFICATIONS_FILE = "verifications.jsonl"
ANSWERS_FILE = "answers.jsonl"
ITEMS_FILE = "items.jsonl"
ITEM_JUDGMENTS_FILE = "item_judgments.jsonl"
GATES_FILE = "gates.jsonl"
MANIFEST_FILE = "manifest.json"
METRICS_FILE = "metrics.json"
RECORD_FILES = (
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    CLAIMS_FILE,
    VERIFICATIONS_FILE,
    ANSWERS_FILE,
    ITEMS_FILE,
    ITEM_JUDGMENTS_FILE,
    GATES_FILE,
)
BATCHES_FILE = "batches.json"  # the provider batches a run submitted (batch mode)
DIGESTS_KEY = "records_sha256"
# What `assay policies` writes under `policies/<name>/` (with its own claims.jsonl,
# manifest.json and metrics.json, named by the constants above).
RESPONSES_FILE = "responses.jsonl"
CERTIFICATES_FILE = "certificates.jsonl"
GATE_DECISIONS_FILE = "gate_decisions.jsonl"
CANDIDATES_FILE = "candidates.jsonl"
SWEEP_FILE = "sweep.jsonl"
SWEEP_SUMMARY_FILE = "sweep_summary.json"
RUN_INFO_FILE = "run_info.json"
POLICIES_DIR = "policies"  # policies/<name>/ holds one applied policy
COMPARE_DIR = "compare"  # policies/<name>/compare/<other>.json
TUNE_DIR = "tune"  # policies/<name>/tune/ holds a tuning's candidates and result
TUNE_RESULT_FILE = "result.json"

M = TypeVar("M", bound=BaseModel)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file (manifest, metrics); errors name the file and line."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError("file not found", file=path) from None
    except json.JSONDecodeError as exc:
        raise RunError(f"not valid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(value, dict):
        raise RunError("expected a JSON object", file=path)
    return value


def read_manifest(run_dir: Path) -> Manifest:
    """The typed manifest of `run_dir` (older manifests load: every field is optional)."""
    return Manifest.model_validate(read_json(run_dir / MANIFEST_FILE))


def iter_numbered(path: Path, model: type[M]) -> Iterator[tuple[int, M]]:
    """(line number, record) of an append-only JSONL file, for messages that name the
    line; a torn last line is skipped, a corrupt one an error naming file and line."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if not line.endswith("\n"):
                return
            try:
                yield lineno, model.model_validate_json(line)
            except ValidationError as exc:
                raise _corrupt(exc, line, path, lineno) from None


def iter_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Records of any type from an append-only JSONL file; a torn last line is skipped."""
    for _, record in iter_numbered(path, model):
        yield record


class _Row(RootModel[dict[str, Any]]):
    """Any JSON object: a record line read as a plain dict."""


def iter_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Lines of a JSONL file as plain JSON objects, read like `iter_jsonl` (a torn last
    line skipped, a corrupt one an error naming file and line), for callers without a
    record model (policy outputs, answers, Parquet export)."""
    for row in iter_jsonl(path, _Row):
        yield row.root


def iter_numbered_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, plain JSON object) of each line, read like `iter_rows`."""
    for lineno, row in iter_numbered(path, _Row):
        yield lineno, row.root


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


_TYPE_TAGS = frozenset({"int", "float", "str", "bool", "none", "dict", "list"})


def _dotted(loc: tuple[int | str, ...]) -> str | None:
    """pydantic's error location as a field path (`pairs.0.page`), without the member
    tags it appends inside a union (`int`, `function-after[...]`)."""
    parts: list[str] = []
    for part in loc:
        if isinstance(part, str) and (part in _TYPE_TAGS or "[" in part):
            break
        parts.append(str(part))
    return ".".join(parts) or None


def _corrupt(exc: ValidationError, text: str, path: Path, lineno: int) -> RunError:
    """One line naming file, line and the field that failed (pydantic's loc, dotted); a
    line that is not JSON names the column and the last key before it."""
    problem = first_problem(exc, typo_first=False)
    if problem.type != "json_invalid":
        field = _dotted(problem.loc)
        return RunError(f"corrupt record: {problem.message}", file=path, line=lineno, field=field)
    try:
        json.loads(text.rstrip("\n"))
        where, why = "", problem.msg  # JSON that only pydantic rejects
    except json.JSONDecodeError as bad:
        keys = _KEY.findall(text[: bad.pos])
        after = f" after key {keys[-1]!r}" if keys else ""
        where, why = f" at column {bad.colno}{after}", bad.msg
    return RunError(f"corrupt record: not valid JSON{where}: {why}", file=path, line=lineno)


def latest(path: Path, model: type[M]) -> dict[Any, M]:
    """One record per key (every record model has a `key`); a later line wins."""
    return {record.key: record for record in iter_jsonl(path, model)}  # type: ignore[attr-defined]


def iter_records(path: str | Path) -> Iterator[JudgmentRecord]:
    """Judgment records of a run, in file order (see `iter_jsonl`)."""
    return iter_jsonl(Path(path), JudgmentRecord)


def latest_records(path: str | Path) -> dict[tuple[str, str, str, str], JudgmentRecord]:
    """One judgment record per key; a later line for the same key supersedes an earlier one."""
    return latest(Path(path), JudgmentRecord)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_digests(run_dir: Path) -> dict[str, str]:
    """{record file name: sha256 hex} of the record files `run_dir` holds now."""
    return {
        name: file_sha256(run_dir / name) for name in RECORD_FILES if (run_dir / name).is_file()
    }
