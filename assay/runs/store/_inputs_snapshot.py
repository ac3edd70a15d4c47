"""The files a run reads besides its datasets and prompts, recorded so that a reader can
check them and a re-run can find them: a retrieval verifier's `corpus`, the `[gate]`'s,
a MedScore answers dataset's `evidence_file`, and any other path-valued key of a block
(a field typed `PathText` in a kind's parameters, a plugin's included).

Each is a manifest `inputs` entry named by the spec field that gave it, with the file's
sha256; `bundle_data = true` copies it into `snapshot/data/` as it copies datasets. A
directory (a local model: `dense_model`) is recorded by path only, never hashed nor
copied: model weights are large, and the component that loads them records their hash.
The `[[policies]]` blocks of the built-in kinds name no file (thresholds, calibration
maps and lexicons are inline or shipped with assay), so they add nothing here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.functional_validators import AfterValidator

from assay.core.building import params_model
from assay.core.manifest import InputFileInfo, Manifest
from assay.errors import RunError
from assay.inputs import nonblank_path
from assay.runs.spec._spec import LoadedSpec, RunSpec, component_refs

__all__ = [
    "InputFiles",
    "bundled_input",
    "check_same_inputs",
    "input_copy",
    "input_fields",
    "spec_inputs",
]


def _marks_path(meta: Any) -> bool:
    return isinstance(meta, AfterValidator) and meta.func is nonblank_path


def _is_path(annotation: Any, metadata: Iterable[Any] = ()) -> bool:
    """Whether a field is typed `PathText` (alone, optional or inside a union)."""
    if any(_marks_path(m) for m in metadata):
        return True
    if any(_marks_path(m) for m in getattr(annotation, "__metadata__", ())):
        return True
    return any(_is_path(arg) for arg in get_args(annotation))


def path_fields(model: type[BaseModel] | None) -> list[str]:
    """The names of a model's path-valued fields, in declaration order."""
    if model is None:
        return []
    return [n for n, f in model.model_fields.items() if _is_path(f.annotation, f.metadata)]


def _block_paths(prefix: str, block: Any, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [
        (f"{prefix}.{name}", value)
        for name in path_fields(type(block))
        if name not in skip and isinstance(value := getattr(block, name, None), str)
    ]


def input_fields(spec: RunSpec) -> list[tuple[str, str]]:
    """(spec field, path as written) of every auxiliary file the spec names: the
    datasets' own paths and the top-level folders (output, prompts) are not inputs."""
    out: list[tuple[str, str]] = []
    for i, block in enumerate(spec.datasets):
        out += _block_paths(f"datasets[{i}]", block, skip=("path",))
    fact = spec.factuality
    for i, answers in enumerate(fact.datasets if fact is not None else []):
        out += _block_paths(f"factuality.datasets[{i}]", answers, skip=("path",))
    for ref in component_refs(spec):
        names = path_fields(params_model(ref.registry.get(ref.kind)))
        out += [
            (f"{ref.params_field}.{name}", value)
            for name in names
            if isinstance(value := ref.params.get(name), str)
        ]
    if spec.gate is not None:
        out += _block_paths("gate", spec.gate)
    return out


def _resolve(text: str, base_dir: Path) -> Path:
    """A path from the spec: relative to the spec's folder, as the run reads corpora;
    else to the working directory (a model directory is handed to transformers as is)."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return path
    for candidate in (base_dir / path, Path.cwd() / path):
        if candidate.exists():
            return candidate.resolve()
    return (base_dir / path).resolve()


def spec_inputs(loaded: LoadedSpec) -> list[tuple[str, Path]]:
    """Every auxiliary file of a loaded spec, resolved as the run resolves it."""
    base = Path(loaded.base_dir)
    return [(field, _resolve(text, base)) for field, text in input_fields(loaded.spec)]


def _sha256(path: Path, field: str) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        why = exc.strerror
        raise RunError(f"{field}: cannot read it to record it ({why})", file=path) from None


class InputFiles:
    """A run's auxiliary files, hashed once (when the manifest is first written, right
    after the run read them) and, when bundling, copied once."""

    def __init__(self, fields: Iterable[tuple[str, Path]]) -> None:
        self.fields = list(fields)
        self._infos: list[InputFileInfo] | None = None

    def infos(self) -> list[InputFileInfo]:
        """One entry per field whose path exists (a hub id given as `dense_model` names
        nothing here, and is not recorded)."""
        if self._infos is None:
            self._infos = []
            for field, path in self.fields:
                if path.is_dir():
                    self._infos.append(InputFileInfo(field=field, path=str(path), kind="directory"))
                elif path.is_file():
                    sha = _sha256(path, field)
                    info = InputFileInfo(field=field, path=str(path), kind="file", sha256=sha)
                    self._infos.append(info)
        return [info.model_copy() for info in self._infos]


def check_same_inputs(before: Manifest, now: list[InputFileInfo], where: Path) -> None:
    """Refuse to resume when a file the spec names changed since the run started: the
    spec still names it by the same path, and the run would mix records made on two."""
    old = {i.field: i for i in before.inputs}
    for info in now:
        recorded = old.get(info.field)
        if recorded is not None and recorded.sha256 and recorded.sha256 != info.sha256:
            raise RunError(
                f"{info.field} ({info.path}) changed since this run started (sha256 "
                f"{recorded.sha256[:12]} -> {str(info.sha256)[:12]}); undo the change, or use "
                "another output_dir (or --output-dir) to start a new run",
                file=where,
            )


def bundled_input(run_dir: Path, info: InputFileInfo) -> Path | None:
    """The run directory's copy of an input file: the manifest's `snapshot`, or the copy
    `assay pack --with-data` adds under the same name (`<sha256[:16]>-<file name>`)."""
    if info.snapshot:
        return run_dir / info.snapshot
    if info.sha256:
        return run_dir / "snapshot" / "data" / f"{info.sha256[:16]}-{Path(info.path).name}"
    return None


def input_copy(run_dir: Path, info: InputFileInfo) -> Path | None:
    """A file here with the bytes the run read: the recorded path, else the run
    directory's copy; None when neither holds them (or nothing was hashed)."""
    for path in (Path(info.path), bundled_input(run_dir, info)):
        if path is None or not path.is_file() or not info.sha256:
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() == info.sha256:
            return path
    return None
