"""What makes a run directory self-contained: the exact bytes of every prompt file a run
used that is not a built-in of the installed version, and (with `bundle_data = true`)
of every dataset file, copied under `snapshot/` when the run starts.

A copy is named `<sha256[:16]>-<file name>` and its sha256 is checked against the hash
the run recorded when it loaded the file, so a snapshot is the file the records came
from or the run refuses to start. A prompt given a custom output model records a
derived hash (the file's joined with the schema's, see `Prompt.with_output_model`); its
entry then also names the file's own hash, `file_sha256`. Built-in prompts are named by
`builtin: true` and the assay version, and are not copied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.core.atomic import write_bytes_atomic
from assay.core.manifest import DatasetInfo, InputFileInfo, Manifest
from assay.errors import RunError
from assay.runs.store._inputs_snapshot import InputFiles, check_same_inputs

SNAPSHOT_DIR = "snapshot"
PROMPTS = "prompts"
DATA = "data"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_into_snapshot(run_dir: Path, source: Path, kind: str, data: bytes) -> str:
    """Write `data` (the bytes of `source`) as `snapshot/<kind>/<sha[:16]>-<name>`,
    atomically; a copy already there with the same bytes (a resumed run) is kept.
    Returns the path relative to the run directory."""
    sha = _sha256(data)
    rel = f"{SNAPSHOT_DIR}/{kind}/{sha[:16]}-{source.name}"
    dest = run_dir / rel
    if dest.is_file() and _sha256(dest.read_bytes()) == sha:
        return rel
    write_bytes_atomic(dest, data)
    return rel


def _read(source: Path, what: str) -> bytes:
    try:
        return source.read_bytes()
    except OSError as exc:
        raise RunError(
            f"{what}: cannot read it to snapshot it ({exc.strerror})", file=source
        ) from None


def prompt_identities(value: Any) -> Iterator[dict[str, Any]]:
    """Every prompt identity (`Prompt.identity()`: a dict with `file`, `sha256` and
    `builtin`) inside a component's manifest entry, however deeply a kind nests them."""
    if isinstance(value, dict):
        if isinstance(value.get("file"), str) and "sha256" in value and "builtin" in value:
            yield value
            return
        for item in value.values():
            yield from prompt_identities(item)
    elif isinstance(value, list):
        for item in value:
            yield from prompt_identities(item)


def _matches(identity: dict[str, Any], file_sha: str) -> bool:
    """Whether a file with hash `file_sha` is the prompt this identity recorded: the same
    hash, or, for a custom output model, the hash derived from it and the schema's."""
    recorded = identity.get("sha256")
    if recorded == file_sha:
        return True
    schema = identity.get("output_schema_sha256")
    return schema is not None and recorded == _sha256(f"{file_sha}+{schema}".encode())


def _components(manifest: Manifest) -> list[dict[str, Any]]:
    """The manifest entries of everything that may use a prompt."""
    entries = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    return entries


class RunSnapshot:
    """Copies a run's prompt files (and, with `bundle_data`, its dataset and other input
    files) into its snapshot once, and names each copy in the manifest every time it is
    written. `inputs`: (spec field, resolved path) of the files the spec names besides
    datasets and prompts (`_inputs_snapshot.spec_inputs`), recorded in `inputs`."""

    def __init__(
        self,
        run_dir: Path,
        *,
        bundle_data: bool = False,
        inputs: Iterable[tuple[str, Path]] = (),
    ) -> None:
        self.run_dir = run_dir
        self.bundle_data = bundle_data
        self.inputs = InputFiles(inputs)
        self._done: dict[tuple[str, str], tuple[str, str]] = {}  # (file, sha) -> (rel, file sha)

    def annotate(self, manifest: Manifest) -> None:
        """Add `snapshot` and `file_sha256` to every non-built-in prompt identity, and
        `snapshot` to every dataset when bundling, copying a file the first time."""
        for entry in _components(manifest):
            for identity in prompt_identities(entry):
                if identity.get("builtin"):
                    continue
                rel, file_sha = self._prompt(identity)
                identity["snapshot"] = rel
                identity["file_sha256"] = file_sha
        if self.bundle_data:
            fact = manifest.factuality
            for info in [*manifest.datasets, *(fact.datasets if fact is not None else [])]:
                note = self._dataset(info)
                if note is not None and note not in manifest.warnings:
                    manifest.warnings.append(note)
        self._annotate_inputs(manifest)

    def _annotate_inputs(self, manifest: Manifest) -> None:
        """Record the spec's other files (`inputs`, only when there are some, so a run
        without any writes the manifest it always wrote), copying them when bundling."""
        infos = self.inputs.infos()
        if not infos:
            return
        for info in infos if self.bundle_data else []:
            note = self._input(info)
            if note is not None and note not in manifest.warnings:
                manifest.warnings.append(note)
        manifest.inputs = infos

    def check_resumable(self, before: Manifest, where: Path) -> None:
        """Refuse to resume a run whose input files changed since it started."""
        check_same_inputs(before, self.inputs.infos(), where)

    def _input(self, info: InputFileInfo) -> str | None:
        """Copy one input file and set its `snapshot`; a note for a directory."""
        if info.kind == "directory":
            return f"bundle_data: {info.field} is a directory (a local model); not copied"
        source = Path(info.path)
        key = (str(source), str(info.sha256))
        if key not in self._done:
            data = _read(source, info.field)
            if _sha256(data) != info.sha256:
                raise RunError(
                    f"{info.field} changed since the run read it (sha256 differs): run the "
                    "command again",
                    file=source,
                )
            self._done[key] = (copy_into_snapshot(self.run_dir, source, DATA, data), "")
        info.snapshot = self._done[key][0]
        return None

    def _prompt(self, identity: dict[str, Any]) -> tuple[str, str]:
        key = (str(identity["file"]), str(identity["sha256"]))
        done = self._done.get(key)
        if done is not None:
            return done
        source = Path(key[0])
        data = _read(source, "prompt file")
        file_sha = _sha256(data)
        if not _matches(identity, file_sha):
            raise RunError(
                f"prompt file changed since the run loaded it (sha256 {file_sha[:12]}, "
                f"recorded {key[1][:12]}): run the command again",
                file=source,
            )
        self._done[key] = (copy_into_snapshot(self.run_dir, source, PROMPTS, data), file_sha)
        return self._done[key]

    def _dataset(self, info: DatasetInfo) -> str | None:
        """Copy one dataset file and set its `snapshot`; a note when it is not one file
        (nothing to copy byte for byte)."""
        source = Path(info.path) if info.path else None
        if source is None or not source.is_file():
            return f"bundle_data: dataset {info.name!r} is not a single file; not copied"
        key = (str(source), str(info.sha256))
        if key not in self._done:
            data = _read(source, f"dataset {info.name!r}")
            if info.sha256 is not None and _sha256(data) != info.sha256:
                raise RunError(
                    f"dataset {info.name!r} changed since the run loaded it (sha256 "
                    "differs): run the command again",
                    file=source,
                )
            self._done[key] = (copy_into_snapshot(self.run_dir, source, DATA, data), "")
        info.snapshot = self._done[key][0]
        return None


def _prompts_of(manifest: Manifest) -> dict[tuple[str, str], tuple[str, str]]:
    """(component id, prompt id@version) -> (sha256, file) for every prompt a run used."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for entry in _components(manifest):
        owner = str(entry.get("id"))
        for identity in prompt_identities(entry):
            ref = f"{identity.get('id')}@{identity.get('version')}"
            out[(owner, ref)] = (str(identity.get("sha256")), str(identity["file"]))
    return out


def check_same_prompts(before: Manifest, now: Manifest, where: Path) -> None:
    """Refuse to resume when a component's prompt changed since the run started: the
    spec names a prompt by path or id, so editing the file leaves the spec unchanged,
    and the run would mix records made by two prompts."""
    old = _prompts_of(before)
    for key, (sha, file) in _prompts_of(now).items():
        recorded = old.get(key)
        if recorded is not None and recorded[0] != sha:
            raise RunError(
                f"prompt {key[1]} of {key[0]} changed since this run started (sha256 "
                f"{recorded[0][:12]} -> {sha[:12]}, {file}); undo the change, or use another "
                "output_dir (or --output-dir) to start a new run",
                file=where,
            )
