"""A run's spec rebuilt from its directory alone, for `assay rerun`: the spec the
manifest recorded (its resolved form when present, so this version's defaults do not
change the re-run), the prompts from the snapshot, the datasets by sha256.

A dataset is the file the run read if its bytes still hash to the recorded sha256,
else the run directory's copy (`snapshot/data/`, with `bundle_data`), else the re-run
is refused: re-running on other data measures the data, not the judge. With
`allow_data_change` the file as it is now is used and the new run's manifest says so.
The other files the spec names (the manifest's `inputs`: a corpus, an evidence file)
are found the same way (`_inputs`), and their spec fields pointed at the file used.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from assay.core.manifest import DatasetInfo, Manifest, RerunSource
from assay.core.rundir import MANIFEST_FILE, file_sha256
from assay.core.settings import ModelDefaults
from assay.datasets._load import BUILTIN_DATA_DIR, BUILTIN_DATASETS
from assay.errors import RunError, SpecError
from assay.redaction import MARKER
from assay.runs.rebuild._sources import dataset_info, resolve_dataset
from assay.runs.rerun._inputs import point_inputs
from assay.runs.spec._spec import LoadedSpec, RunSpec, validate_spec


def _matches(path: Path | None, sha: str | None) -> bool:
    return path is not None and path.is_file() and file_sha256(path) == sha


def _bundled_copy(run_dir: Path, info: DatasetInfo) -> Path | None:
    """The run directory's copy of a dataset: the manifest's `snapshot` (`bundle_data`),
    or the copy `assay pack --with-data` adds under the same name, leaving the manifest
    as it was: `snapshot/data/<sha256[:16]>-<file name>`."""
    if info.snapshot:
        return run_dir / info.snapshot
    if info.sha256 and info.path:
        return run_dir / "snapshot" / "data" / f"{info.sha256[:16]}-{Path(info.path).name}"
    return None


def _dataset_file(run_dir: Path, info: DatasetInfo, allow_change: bool) -> tuple[Path | None, str]:
    """(file to read, how): "same" (the recorded file), "snapshot", "changed" (allowed)
    or "unchecked" (no sha recorded: a folder or a source read another way)."""
    original = resolve_dataset(run_dir, info)
    if info.sha256 is None:
        return original, "unchecked"
    if _matches(original, info.sha256):
        return original, "same"
    snapshot = _bundled_copy(run_dir, info)
    if _matches(snapshot, info.sha256):
        return snapshot, "snapshot"
    present = original if original is not None and original.exists() else None
    if allow_change and present is not None:
        return present, "changed"
    why = "changed since the run" if present is not None else "is missing"
    copy_note = (
        ""
        if snapshot is not None and snapshot.exists()
        else (" and the run directory has no copy (snapshot/data)")
    )
    fix = "pass --allow-data-change to re-run on it as it is now" if present else "restore it"
    raise RunError(
        f"dataset {info.name!r}: {info.path} {why} (sha256 {info.sha256[:12]} recorded)"
        f"{copy_note}; {fix}",
        file=run_dir / MANIFEST_FILE,
    )


def _block_name(block: dict[str, Any]) -> str:
    """The dataset's name as the run named it: `name`, else the file's stem (a bundled
    dataset's file: `builtin:forcebench-demo` reads forcebench_demo.jsonl)."""
    if block.get("name"):
        return str(block["name"])
    path = str(block.get("path", ""))
    if path.startswith("builtin:"):
        name = path.removeprefix("builtin:")
        return Path(BUILTIN_DATASETS.get(name, name)).stem
    return Path(path).stem


def _point_blocks(
    run_dir: Path, manifest: Manifest, blocks: Any, allow_change: bool, notes: dict[str, list[str]]
) -> None:
    """Set each dataset block's `path` to the file the re-run reads (absolute), keeping
    `builtin:NAME` when the installed copy is the recorded one."""
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict) or "path" not in block:
            continue
        info = dataset_info(manifest, _block_name(block))
        if info is None:
            raise RunError(
                f"dataset {_block_name(block)!r} of the spec is not in the manifest's "
                "datasets; this run cannot be re-run from its directory",
                file=run_dir / MANIFEST_FILE,
            )
        path, how = _dataset_file(run_dir, info, allow_change)
        if how in ("snapshot", "changed"):
            notes["data_from_snapshot" if how == "snapshot" else "data_changed"].append(info.name)
        builtin = str(block["path"]).startswith("builtin:")
        if path is not None and not (builtin and path.parent == BUILTIN_DATA_DIR):
            block["path"] = str(path.resolve())


def _model_blocks(raw: dict[str, Any]) -> list[Any]:
    """The blocks that call a chat model, in the order `spec_resolved` lists them."""
    blocks = list(raw.get("judges") or [])
    fact = raw.get("factuality")
    if isinstance(fact, dict):
        blocks += [fact.get("decomposer"), *(fact.get("verifiers") or [])]
    return blocks


def _with_resolved_settings(spec: dict[str, Any], resolved: dict[str, Any]) -> dict[str, Any]:
    """`spec` with `[defaults]` and each model block's settings (temperature, max_tokens,
    ...) as the run resolved them: what its requests were built from, whatever this
    version's defaults are. Only model settings: the rest of `spec_resolved` spells out
    defaults of options (a dataset's optional columns) that change what is required."""
    out = copy.deepcopy(spec)
    settings = set(ModelDefaults.model_fields)
    if isinstance(resolved.get("defaults"), dict):
        out["defaults"] = dict(resolved["defaults"])
    for block, done in zip(_model_blocks(out), _model_blocks(resolved), strict=False):
        if isinstance(block, dict) and isinstance(done, dict):
            block.update({k: v for k, v in done.items() if k in settings})
    return out


def _redacted(value: Any, where: str = "") -> str | None:
    """The first field of the recorded spec whose value was redacted when the manifest
    was written (a credential in `extra_body` or `api_base`): a re-run cannot send it."""
    if isinstance(value, str):
        return where if MARKER in value else None
    if not isinstance(value, (dict, list)):
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        here = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip(".")
        found = _redacted(item, here)
        if found is not None:
            return found
    return None


def _candidates(manifest: Manifest) -> list[tuple[str, dict[str, Any]]]:
    spec = manifest.spec if isinstance(manifest.spec, dict) else {}
    out = []
    if isinstance(manifest.spec_resolved, dict) and spec:
        out.append(
            (
                "spec with spec_resolved settings",
                _with_resolved_settings(spec, manifest.spec_resolved),
            )
        )
    if spec:
        out.append(("spec", copy.deepcopy(spec)))
    return out


Found = tuple[str, dict[str, Any], RunSpec, dict[str, list[str]]]


def _pointed(
    run_dir: Path, manifest: Manifest, raw: dict[str, Any], allow: bool
) -> dict[str, list[str]]:
    """Point `raw`'s datasets and input files at the files the re-run reads; the notes
    (`RerunSource` fields) of what was not read from the original files."""
    notes: dict[str, list[str]] = {
        "data_changed": [],
        "data_from_snapshot": [],
        "inputs_changed": [],
        "inputs_from_snapshot": [],
    }
    _point_blocks(run_dir, manifest, raw.get("datasets"), allow, notes)
    fact = raw.get("factuality")
    if isinstance(fact, dict):
        _point_blocks(run_dir, manifest, fact.get("datasets"), allow, notes)
    point_inputs(run_dir, manifest, raw, allow, notes)
    return notes


def _first_valid(run_dir: Path, manifest: Manifest, allow_data_change: bool) -> Found:
    """The first candidate spec that validates (the recorded `spec` last: its error is
    the one shown)."""
    where = str(run_dir / MANIFEST_FILE)
    for source, raw in _candidates(manifest):
        notes = _pointed(run_dir, manifest, raw, allow_data_change)
        try:
            return source, raw, validate_spec(raw, where=where), notes
        except SpecError:
            if source == "spec":
                raise
    raise RunError("the manifest records no spec; this run cannot be re-run", file=where)


def rebuilt_spec(
    run_dir: Path, manifest: Manifest, prompt_dir: Path, *, allow_data_change: bool
) -> tuple[LoadedSpec, RerunSource]:
    """The spec to re-run `run_dir` with, its prompts read from `prompt_dir` (staged by
    `stage_prompts`), and what it was rebuilt from."""
    where = str(run_dir / MANIFEST_FILE)
    found = _first_valid(run_dir, manifest, allow_data_change)
    source, raw, spec, notes = found
    secret = _redacted(raw)
    if secret is not None:
        raise RunError(
            f"spec field {secret} was redacted when the manifest was written, so a re-run "
            "cannot send it; give credentials through the environment (api_key_env) and "
            "run the original spec instead",
            file=where,
        )
    # the prompts are read from the staged snapshot; the recorded spec keeps its own
    # `prompt_dirs` so an interrupted re-run resumes under the same spec
    spec = spec.model_copy(update={"prompt_dirs": [str(prompt_dir)]})
    text = json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()
    loaded = LoadedSpec.model_construct(
        spec=spec,
        path=where,
        base_dir=str(_base_dir(run_dir, manifest)),
        sha256=hashlib.sha256(text).hexdigest(),
        raw=raw,
    )
    return loaded, RerunSource(
        run_id=manifest.run_id,
        run_dir=str(run_dir),
        manifest_sha256=file_sha256(run_dir / MANIFEST_FILE),
        spec_source=source,
        **notes,
    )


def _base_dir(run_dir: Path, manifest: Manifest) -> Path:
    """Where the spec's other relative paths resolve: the original spec's folder when it
    is still there (the author's machine), else the run directory."""
    recorded = Path(manifest.spec_path) if manifest.spec_path else None
    if recorded is not None and recorded.parent.is_dir():
        return recorded.parent
    return run_dir.resolve()


__all__ = ["RerunSource", "rebuilt_spec"]
