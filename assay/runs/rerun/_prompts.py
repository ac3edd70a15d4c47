"""A run's prompts found again from its directory alone, for `assay rerun`.

Each prompt the run used is taken from the run directory's snapshot (its sha256
checked), or, for a run written before snapshots, from the file the manifest recorded
if its bytes still hash to the recorded sha256. Built-ins come from the installed
package, and only when its copy is byte for byte the one the run used: a built-in that
changed between versions would silently re-run another prompt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.core.manifest import Manifest
from assay.errors import PromptError, RunError
from assay.prompts import PromptRegistry
from assay.runs.store._snapshot import prompt_identities


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _components(manifest: Manifest) -> list[dict[str, Any]]:
    """The manifest entries that may name a prompt: judges, decomposer, verifiers."""
    entries = list(manifest.judges)
    if manifest.factuality is not None:
        entries += [manifest.factuality.decomposer, *manifest.factuality.verifiers]
    return entries


def used_prompts(manifest: Manifest) -> Iterator[dict[str, Any]]:
    """Every prompt identity the run recorded, each (id, version, sha256) once."""
    seen: set[tuple[str, str, str]] = set()
    for entry in _components(manifest):
        for identity in prompt_identities(entry):
            key = (str(identity.get("id")), str(identity.get("version")), str(identity["sha256"]))
            if key not in seen:
                seen.add(key)
                yield identity


def _ref(identity: dict[str, Any]) -> str:
    return f"{identity.get('id')}@{identity.get('version')}"


def _matches(identity: dict[str, Any], data: bytes) -> bool:
    """The bytes are the prompt recorded: its hash, or (custom output model) the hash
    derived from it and the schema's, as `Prompt.with_output_model` records it."""
    sha = _sha(data)
    if sha in (identity.get("file_sha256"), identity.get("sha256")):
        return True
    schema = identity.get("output_schema_sha256")
    return schema is not None and identity.get("sha256") == _sha(f"{sha}+{schema}".encode())


def check_builtin(identity: dict[str, Any], registry: PromptRegistry, version: str) -> None:
    """Refuse a built-in the installed assay does not ship byte for byte."""
    ref = _ref(identity)
    try:
        installed = registry.get(ref)
    except PromptError:
        raise RunError(
            f"built-in prompt {ref} (assay {version}) is not in the installed assay; "
            f"install assay {version} to re-run this run"
        ) from None
    if installed.sha256 != identity.get("sha256"):
        raise RunError(
            f"built-in prompt {ref} differs from the one the run used (sha256 "
            f"{installed.sha256[:12]} installed, {str(identity.get('sha256'))[:12]} recorded "
            f"with assay {version}); install assay {version} to re-run this run"
        )


def prompt_bytes(run_dir: Path, identity: dict[str, Any]) -> tuple[str, bytes]:
    """(file name, bytes) of a non-built-in prompt: the snapshot, else (a run written
    before snapshots) the recorded file if unchanged; a `RunError` naming it otherwise."""
    ref, snapshot = _ref(identity), identity.get("snapshot")
    if isinstance(snapshot, str) and snapshot:
        path = run_dir / snapshot
        if not path.is_file():
            raise RunError(
                f"prompt {ref}: its snapshot {snapshot} is missing from the run directory",
                file=path,
            )
        data = path.read_bytes()
        if not _matches(identity, data):
            raise RunError(
                f"prompt {ref}: its snapshot {snapshot} does not hash to the recorded sha256 "
                f"{str(identity.get('sha256'))[:12]}",
                file=path,
            )
        name = path.name.split("-", 1)[1] if "-" in path.name else path.name
        return name, data
    recorded = Path(str(identity["file"]))
    found = recorded.read_bytes() if recorded.is_file() else None
    if found is None or not _matches(identity, found):
        what = "changed since the run" if found is not None else "is missing"
        raise RunError(
            f"prompt {ref}: the run directory has no snapshot of it and the recorded file "
            f"{what}; restore it (sha256 {str(identity.get('sha256'))[:12]}) to re-run",
            file=recorded,
        )
    return recorded.name, found


def stage_prompts(run_dir: Path, manifest: Manifest, into: Path) -> int:
    """Write every prompt the run used (checked) into `into`, a prompt directory for
    the re-run; returns how many. Built-ins are checked, not copied."""
    registry = PromptRegistry(include_env=False)
    version = str(getattr(manifest.environment, "assay_version", None) or "?")
    staged: dict[str, bytes] = {}
    for identity in used_prompts(manifest):
        if identity.get("builtin"):
            check_builtin(identity, registry, version)
            continue
        name, data = prompt_bytes(run_dir, identity)
        if name in staged and staged[name] != data:
            name = f"{_sha(data)[:16]}-{name}"  # two files of one name: keep both
        staged[name] = data
    into.mkdir(parents=True, exist_ok=True)
    for name, data in staged.items():
        (into / name).write_bytes(data)
    return len(staged)


__all__ = ["stage_prompts", "used_prompts"]
