"""`assay pack --with-data`: the dataset files a run read, carried inside its archive.

A manifest names each dataset, and each other file the spec named (its `inputs`: a
corpus, an evidence file), by path and sha256; a reader elsewhere has neither the path
nor, often, the file. With `--with-data` each file is checked against its recorded
sha256 now (a file edited since the run would make the archive lie) and packed as
`snapshot/data/<sha256[:16]>-<file name>`, the name a run writing its own data snapshot
uses, and `PACKED.json` says which dataset (or spec field) each copy is. A model
directory is not packed. The run directory itself is never changed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from assay._version import __version__
from assay.archive._files import ArchiveError, sha256_of
from assay.core.manifest import DatasetInfo, InputFileInfo, Manifest

__all__ = ["DataCopy", "Packed", "data_copies", "packed_json"]

DATA_DIR = "snapshot/data"


class DataCopy(BaseModel):
    """One dataset file packed with the run (or, with `reason`, one that could not be)."""

    dataset: str = Field(
        description="The dataset's name in the manifest; for an input file, its spec field."
    )
    section: str = Field(description="`datasets`, `factuality.datasets` or `inputs`.")
    path: str | None = Field(default=None, description="The path the manifest records.")
    sha256: str | None = Field(default=None, description="The manifest's hash of the file.")
    snapshot: str | None = Field(default=None, description="The copy's path in the run.")
    reason: str | None = Field(default=None, description="Why it was not packed.")


class Packed(BaseModel):
    """`PACKED.json`: what an archive made with `--with-data` holds beyond the run."""

    packed_by: str = Field(description="`assay <version>`.")
    packed_at: str = Field(description="UTC time; SOURCE_DATE_EPOCH when set.")
    run: str = Field(description="The run directory's name (the archive's top folder).")
    run_id: str | None = Field(default=None, description="The manifest's run_id.")
    data: list[DataCopy] = Field(
        default_factory=list, description="The dataset files, then the other input files."
    )


def data_copies(
    run_dir: Path, manifest: Manifest, present: set[str]
) -> tuple[list[DataCopy], dict[str, Path]]:
    """Each dataset's and input file's copy, and the files to add (archive path ->
    source). A copy the run directory already holds (`present`) is checked, not added."""
    named = [("datasets", d) for d in manifest.datasets]
    if manifest.factuality is not None:
        named += [("factuality.datasets", d) for d in manifest.factuality.datasets]
    wanted: list[tuple[DataCopy, Callable[[], Path]]] = [
        (_copy(section, info), partial(_source, info, manifest)) for section, info in named
    ]
    wanted += [
        (_input_copy(info), partial(_present, Path(info.path), info.field))
        for info in manifest.inputs
    ]
    copies: list[DataCopy] = []
    sources: dict[str, Path] = {}
    for copy, source in wanted:
        copies.append(copy)
        if copy.snapshot is None or copy.snapshot in sources:
            continue
        if copy.snapshot in present:
            _check(run_dir / copy.snapshot, copy)
        else:
            sources[copy.snapshot] = _check(source(), copy)
    return copies, sources


def _input_copy(info: InputFileInfo) -> DataCopy:
    """An input file's copy: where the run put its own, else the name a run would give it;
    a model directory is recorded by path only, and not packed."""
    copy = DataCopy(dataset=info.field, section="inputs", path=info.path, sha256=info.sha256)
    if info.kind == "directory" or not info.sha256:
        copy.reason = "a directory (a local model): recorded by path only, not packed"
    elif info.snapshot and _inside_data_dir(info.snapshot):
        copy.snapshot = info.snapshot
    else:
        copy.snapshot = f"{DATA_DIR}/{info.sha256[:16]}-{Path(info.path).name}"
    return copy


def _present(path: Path, field: str) -> Path:
    """An input file at its recorded (absolute) path."""
    if not path.is_file():
        raise ArchiveError(
            f"--with-data: {field} is not at this path any more; put the file back, "
            "or pack without --with-data",
            file=path,
        )
    return path


def _copy(section: str, info: DatasetInfo) -> DataCopy:
    """Where the copy goes: where the run put its own (`bundle_data`), else the name a
    run would give it."""
    copy = DataCopy(dataset=info.name, section=section, path=info.path, sha256=info.sha256)
    recorded = getattr(info, "snapshot", None)
    if not info.sha256 or not (info.path or recorded):
        copy.reason = "the manifest names no local file and sha256 for it"
    elif isinstance(recorded, str) and _inside_data_dir(recorded):
        copy.snapshot = recorded
    else:
        copy.snapshot = f"{DATA_DIR}/{info.sha256[:16]}-{Path(info.path or '').name}"
    return copy


def _inside_data_dir(rel: str) -> bool:
    """A recorded snapshot path that names a file under `snapshot/data/` and nowhere else."""
    parts = PurePosixPath(rel).parts
    return len(parts) == 3 and parts[:2] == ("snapshot", "data") and ".." not in parts


def _source(info: DatasetInfo, manifest: Manifest) -> Path:
    """The dataset file: its path as recorded, else beside the run spec."""
    path = Path(info.path or "")
    tries = [path]
    if not path.is_absolute() and manifest.spec_path:
        tries.append(Path(manifest.spec_path).parent / path)
    for candidate in tries:
        if candidate.is_file():
            return candidate
    raise ArchiveError(
        f"--with-data: dataset {info.name!r} is not at this path any more; put the file "
        "back, or pack without --with-data",
        file=path,
    )


def _check(path: Path, copy: DataCopy) -> Path:
    what = copy.dataset if copy.section == "inputs" else f"dataset {copy.dataset!r}"
    if sha256_of(path) != copy.sha256:
        raise ArchiveError(
            f"--with-data: {what} has changed since the run (its sha256 "
            "is not the manifest's); restore the file the run read, or pack without "
            "--with-data",
            file=path,
        )
    return path


def packed_json(manifest: Manifest, run_name: str, copies: list[DataCopy]) -> bytes:
    """`PACKED.json`'s bytes (keys in a fixed order; the time from SOURCE_DATE_EPOCH when
    set, so a reproducible build packs the same bytes)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    seconds = int(epoch) if epoch.isdigit() else int(time.time())
    packed = Packed(
        packed_by=f"assay {__version__}",
        packed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds)),
        run=run_name,
        run_id=manifest.run_id,
        data=copies,
    )
    return (packed.model_dump_json(indent=2) + "\n").encode("utf-8")
