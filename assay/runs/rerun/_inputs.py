"""A run's other input files (the manifest's `inputs`: a corpus, an evidence file) found
again for `assay rerun`, by sha256, as its datasets are: the file the run read if its
bytes are unchanged, else the run directory's copy (`snapshot/data/`, from `bundle_data`
or `assay pack --with-data`), else the re-run is refused, unless `--allow-data-change`
lets it read the file as it is now. The spec field that named the file is then pointed
at the file used (an absolute path), so nothing resolves against a folder the reader
does not have. A model directory is recorded by path only: it must be where it was.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assay.core.manifest import InputFileInfo, Manifest
from assay.core.rundir import MANIFEST_FILE, file_sha256
from assay.errors import RunError
from assay.runs.store._inputs_snapshot import bundled_input

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _matches(path: Path | None, sha: str | None) -> bool:
    return path is not None and path.is_file() and file_sha256(path) == sha


def input_file(run_dir: Path, info: InputFileInfo, allow_change: bool) -> tuple[Path, str]:
    """(file to read, how): "same", "snapshot" or "changed" (allowed); a `RunError`
    naming the spec field otherwise."""
    where = run_dir / MANIFEST_FILE
    original = Path(info.path)
    if info.kind == "directory" or not info.sha256:
        if original.exists():
            return original, "same"
        raise RunError(
            f"{info.field}: {info.path} is not here; a run directory records a model "
            "directory by path only (it is never copied), so put it there to re-run",
            file=where,
        )
    if _matches(original, info.sha256):
        return original, "same"
    snapshot = bundled_input(run_dir, info)
    if _matches(snapshot, info.sha256):
        assert snapshot is not None
        return snapshot, "snapshot"
    present = original.is_file()
    if allow_change and present:
        return original, "changed"
    why = "changed since the run" if present else "is missing"
    copy_note = "" if snapshot is not None and snapshot.exists() else " and the run directory "
    copy_note += "has no copy (snapshot/data)" if copy_note else ""
    fix = "pass --allow-data-change to re-run on it as it is now" if present else "restore it"
    raise RunError(
        f"{info.field}: {info.path} {why} (sha256 {info.sha256[:12]} recorded){copy_note}; {fix}",
        file=where,
    )


def set_field(raw: dict[str, Any], field: str, value: str) -> bool:
    """Set `field` (`factuality.verifiers[0].corpus`) of a spec dict; False when the
    spec has no such place."""
    keys: list[str | int] = [name or int(index) for name, index in _TOKEN.findall(field)]
    node: Any = raw
    for key in keys[:-1]:
        ok = isinstance(node, dict) and key in node
        ok = ok or (isinstance(node, list) and isinstance(key, int) and key < len(node))
        if not ok:
            return False
        node = node[key]
    if not isinstance(node, dict) or not isinstance(keys[-1], str) or keys[-1] not in node:
        return False
    node[keys[-1]] = value
    return True


def point_inputs(
    run_dir: Path,
    manifest: Manifest,
    raw: dict[str, Any],
    allow_change: bool,
    notes: dict[str, list[str]],
) -> None:
    """Point each input field of `raw` at the file the re-run reads, noting in `notes`
    (`inputs_from_snapshot`, `inputs_changed`) the fields not read from the original."""
    for info in manifest.inputs:
        path, how = input_file(run_dir, info, allow_change)
        if how == "snapshot":
            notes["inputs_from_snapshot"].append(info.field)
        elif how == "changed":
            notes["inputs_changed"].append(info.field)
        if not set_field(raw, info.field, str(path.resolve())):
            raise RunError(
                f"{info.field}: the manifest's inputs name it, but its spec has no such "
                "field; this run cannot be re-run from its directory",
                file=run_dir / MANIFEST_FILE,
            )


__all__ = ["input_file", "point_inputs", "set_field"]
