"""The JSON schema of a prompt's custom output model, kept in the run directory.

A prompt answering in a Python model (`Prompt.with_output_model`) records the schema's
hash, `output_schema_sha256`, and a prompt hash derived from the file's and the
schema's; the file alone cannot render its requests again, since the schema sent is
part of each request key. So the schema document the hash covers is written, at run
start, as `snapshot/schemas/<output_schema_sha256[:16]>.json` (its exact bytes hash to
`output_schema_sha256`) and named in the prompt's identity as `schema_snapshot`; `assay
verify` re-renders structured requests from it. A prompt declaring `[output]` tables
in its file gets one too: the same document, readable without parsing the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.core.atomic import write_bytes_atomic
from assay.core.manifest import Manifest
from assay.prompts import Prompt
from assay.prompts._output import score_scale_of
from assay.runs.store._snapshot import SNAPSHOT_DIR, prompt_identities

SCHEMAS = "schemas"
SCHEMA_KEY = "schema_snapshot"  # the identity key naming the copy


def schema_document(model: type[BaseModel]) -> bytes:
    """The bytes `prompts._output.schema_sha256` hashes: the model's JSON schema and the
    score scale it is read with, as canonical JSON (a test keeps the two in step)."""
    scale = score_scale_of(model)
    doc = {"schema": model.model_json_schema(), "scale": scale.model_dump() if scale else None}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


def schema_path(output_schema_sha256: str) -> str:
    """Where a schema with this hash is kept, relative to the run directory."""
    return f"{SNAPSHOT_DIR}/{SCHEMAS}/{output_schema_sha256[:16]}.json"


def _prompts(components: Iterable[object]) -> Iterator[Prompt]:
    for component in components:
        prompt = getattr(component, "prompt", None)
        if isinstance(prompt, Prompt):
            yield prompt


def _write(run_dir: Path, prompt: Prompt, written: dict[str, str]) -> None:
    sha = prompt.identity().get("output_schema_sha256")
    if not isinstance(sha, str) or sha in written:
        return
    data = schema_document(prompt.output_model)
    if hashlib.sha256(data).hexdigest() != sha:
        return  # not the document the hash covers: nothing verify could trust
    rel = schema_path(sha)
    dest = run_dir / rel
    if not (dest.is_file() and dest.read_bytes() == data):
        write_bytes_atomic(dest, data)
    written[sha] = rel


def schema_sources(judges: Iterable[object], factuality: Any) -> list[object]:
    """The components whose prompts may carry a custom output model: the run's judges,
    and the factuality stage's decomposer and verifiers."""
    components: list[object] = list(judges)
    if factuality is not None:
        components += [getattr(factuality, "decomposer", None)]
        components += list(getattr(factuality, "verifiers", []))
    return components


def snapshot_schemas(run_dir: Path, components: Iterable[object], manifest: Manifest) -> None:
    """Write the output schema of every prompt of `components` (`schema_sources`) with a
    custom output model, once, and name each copy in the manifest's prompt identities."""
    written: dict[str, str] = {}
    for prompt in _prompts(components):
        _write(run_dir, prompt, written)
    entries: list[Any] = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    for identity in prompt_identities(entries):
        rel = written.get(str(identity.get("output_schema_sha256")))
        if rel is not None:
            identity[SCHEMA_KEY] = rel
