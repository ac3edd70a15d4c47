"""`prompts` and `datasets`: the bytes a run read are the bytes it recorded.

A prompt is checked from its snapshot in the run directory (`snapshot/prompts/...`), a
built-in against the installed built-in, and a run written before snapshots against its
original file when that still exists. A dataset, and every other file the spec named
(the manifest's `inputs`: a corpus, an evidence file), is checked from its bundled
snapshot and from its recorded path, whichever are here; a model directory is not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.audit._model import Check, verdict
from assay.core.manifest import DatasetInfo, InputFileInfo, Manifest
from assay.core.rundir import file_sha256
from assay.datasets import BUILTIN_DATASETS
from assay.datasets._load import BUILTIN_DATA_DIR
from assay.prompts import BUILTIN_DIR
from assay.runs.store._snapshot import prompt_identities as identities_in

DATA_SNAPSHOTS = "snapshot/data"  # where bundled dataset copies live in a run directory


def prompt_identities(manifest: Manifest) -> Iterator[tuple[str, dict[str, Any]]]:
    """(component id, prompt identity) for every judge, decomposer and verifier."""
    entries: list[Any] = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    for entry in entries:
        if isinstance(entry, dict):
            owner = str(entry.get("id") or entry.get("name") or "?")
            for identity in identities_in(entry):
                yield owner, identity


def matches(identity: dict[str, Any], data: bytes) -> bool:
    """The recorded sha256 is the file's, or (a Python output model) derived from it and
    the output schema's hash, as `Prompt.with_output_model` derives it."""
    sha = hashlib.sha256(data).hexdigest()
    expected = identity.get("sha256")
    schema = identity.get("output_schema_sha256")
    derived = hashlib.sha256(f"{sha}+{schema}".encode()).hexdigest()
    return expected in (sha, derived if isinstance(schema, str) else None)


def prompt_source(run_dir: Path, identity: dict[str, Any]) -> tuple[Path | None, str]:
    """The file to check a prompt against, and what it is (snapshot, built-in, original)."""
    snapshot = identity.get("snapshot")
    if isinstance(snapshot, str) and snapshot:
        return run_dir / snapshot, "snapshot"
    file = identity.get("file")
    if identity.get("builtin") and isinstance(file, str):
        return BUILTIN_DIR / Path(file).name, "built-in"
    if isinstance(file, str) and Path(file).is_file():
        return Path(file), "original file"
    return None, "none"


def _check_prompt(
    run_dir: Path, owner: str, identity: dict[str, Any], version: str
) -> tuple[str | None, str | None]:
    """(problem, skip note) for one prompt; both None when it holds."""
    ref = f"{identity.get('id')}@{identity.get('version')} ({owner})"
    path, kind = prompt_source(run_dir, identity)
    if path is None:
        gone = identity.get("file")
        return None, f"{ref}: no snapshot (a run written before snapshots) and {gone} is gone"
    if not path.is_file():
        return f"{ref}: {kind} {path} is missing", None
    if matches(identity, path.read_bytes()):
        return None, None
    if kind == "built-in":
        return f"{ref}: built-in {path.name} changed since assay {version}", None
    expected = identity.get("sha256")
    return f"{ref}: {kind} {path} does not hash to the recorded sha256 {expected}", None


def check_prompts(run_dir: Path, manifest: Manifest) -> Check:
    version = str(manifest.environment.get("assay_version", "?"))
    problems: list[str] = []
    notes: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    for owner, identity in prompt_identities(manifest):
        ident = (identity.get("sha256"), identity.get("snapshot"), identity.get("file"))
        if ident in seen:
            continue
        seen.add(ident)
        problem, note = _check_prompt(run_dir, owner, identity, version)
        problems += [problem] if problem else []
        notes += [note] if note else []
    return verdict("prompts", len(seen) - len(notes), problems, notes, skipped=len(notes))


def dataset_infos(manifest: Manifest) -> list[DatasetInfo]:
    infos = list(manifest.datasets)
    if manifest.factuality is not None:
        infos += manifest.factuality.datasets
    return infos


def dataset_files(run_dir: Path, info: DatasetInfo) -> list[tuple[Path, str]]:
    """The copies of a dataset here: its bundled snapshot (the manifest's `snapshot`, or
    a copy `assay pack --with-data` added under the same name, `<sha256[:16]>-<name>`),
    and its recorded path (a bundled built-in recorded by another install's path: this
    install's copy)."""
    found: list[tuple[Path, str]] = []
    snapshot = getattr(info, "snapshot", None)
    if isinstance(snapshot, str) and snapshot:
        found.append((run_dir / snapshot, "snapshot"))
    elif info.sha256 and info.path:
        packed = run_dir / DATA_SNAPSHOTS / f"{info.sha256[:16]}-{Path(info.path).name}"
        if packed.is_file():
            found.append((packed, "snapshot"))
    if info.path:
        path = Path(info.path).expanduser()
        path = path if path.is_absolute() else run_dir / path
        if not path.exists() and path.name in BUILTIN_DATASETS.values():
            path = BUILTIN_DATA_DIR / path.name
        if path.exists() or not found:
            found.append((path, "file"))
    return found


def input_files(run_dir: Path, info: InputFileInfo) -> list[tuple[Path, str]]:
    """The copies of an input file here: its bundled snapshot (recorded, or added by
    `assay pack --with-data` under `<sha256[:16]>-<name>`) and its recorded path."""
    found: list[tuple[Path, str]] = []
    if info.snapshot:
        found.append((run_dir / info.snapshot, "snapshot"))
    elif info.sha256:
        packed = run_dir / DATA_SNAPSHOTS / f"{info.sha256[:16]}-{Path(info.path).name}"
        if packed.is_file():
            found.append((packed, "snapshot"))
    path = Path(info.path)
    if path.exists() or not found:
        found.append((path, "file"))
    return found


def _check_inputs(run_dir: Path, manifest: Manifest) -> tuple[int, list[str], list[str]]:
    """(files checked, problems, skip notes) of the manifest's `inputs`."""
    problems: list[str] = []
    notes: list[str] = []
    checked = 0
    for info in manifest.inputs:
        if info.kind == "directory" or not info.sha256:
            continue  # a model directory is recorded by path only
        files = input_files(run_dir, info)
        copies = [(p, kind) for p, kind in files if p.is_file()]
        gone = [p for p, kind in files if kind == "snapshot" and not p.is_file()]
        problems += [f"{info.field}: snapshot {p} is missing" for p in gone]
        if not copies and not gone:
            notes.append(f"{info.field}: {info.path} is not here and no snapshot was bundled")
        for path, kind in copies:
            checked += 1
            sha = file_sha256(path)
            if sha != info.sha256:
                problems.append(
                    f"{info.field}: {kind} {path} has sha256 {sha[:12]}, "
                    f"the run read {info.sha256[:12]}"
                )
    return checked, problems, notes


def check_datasets(run_dir: Path, manifest: Manifest) -> Check:
    """Every dataset, then every other input file, against its recorded sha256."""
    problems: list[str] = []
    notes: list[str] = []
    checked = 0
    for info in dataset_infos(manifest):
        if not info.sha256:
            notes.append(f"dataset {info.name}: no sha256 recorded")
            continue
        files = dataset_files(run_dir, info)
        copies = [(p, kind) for p, kind in files if p.is_file()]
        gone = [p for p, kind in files if kind == "snapshot" and not p.is_file()]
        problems += [f"dataset {info.name}: snapshot {p} is missing" for p in gone]
        if not files or (not copies and not gone):
            notes.append(
                f"dataset {info.name}: {info.path} is not here and no snapshot was bundled"
            )
        for path, kind in copies:
            checked += 1
            sha = file_sha256(path)
            if sha != info.sha256:
                problems.append(
                    f"dataset {info.name}: {kind} {path} has sha256 {sha[:12]}, "
                    f"the run read {info.sha256[:12]}"
                )
    more, input_problems, input_notes = _check_inputs(run_dir, manifest)
    problems, notes = problems + input_problems, notes + input_notes
    return verdict("datasets", checked + more, problems, notes, skipped=len(notes))
