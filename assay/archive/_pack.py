"""`assay pack`: a finished run directory as one portable, checkable archive.

The archive is a gzip tar whose members all sit under one folder, the run's name, with a
`SHA256SUMS` a reader checks with `assay unpack` (or `sha256sum -c`). It is written only
after a secrets scan of every file it would hold, and it is deterministic (sorted
members, fixed times, owners and modes, gzip time 0), so packing the same run twice gives
the same bytes and an archive's own sha256 can be published next to it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from assay.archive._data import DataCopy, data_copies, packed_json
from assay.archive._files import (
    PACKED_FILE,
    SUMS_FILE,
    ArchiveError,
    render_sums,
    run_files,
    sha256_of,
)
from assay.archive._secrets import scan_file, scan_text
from assay.core.manifest import Manifest
from assay.core.rundir import MANIFEST_FILE, read_manifest
from assay.core.rundir_lock import WriterLock
from assay.errors import PathError, RunError

__all__ = ["PackResult", "pack_run"]

_FILE_MODE = 0o644
_DIR_MODE = 0o755


@dataclass
class PackResult:
    """What `pack_run` wrote."""

    archive: Path
    files: int  #: members listed in SHA256SUMS
    data: list[DataCopy] = field(default_factory=list)  #: with --with-data


def pack_run(
    run_dir: Path, output: Path, *, with_data: bool = False, allow_incomplete: bool = False
) -> PackResult:
    """Pack `run_dir` into `output` (refused: a run being written, an incomplete one
    unless `allow_incomplete`, anything credential-like, an existing `output`)."""
    manifest = _packable(run_dir, allow_incomplete=allow_incomplete)
    _check_output(run_dir, output)
    name = run_dir.resolve().name
    sources = {rel: run_dir / rel for rel in run_files(run_dir)}
    extra: dict[str, bytes] = {}
    copies: list[DataCopy] = []
    if with_data:
        copies, data = data_copies(run_dir, manifest, set(sources))
        sources.update(data)
        extra[PACKED_FILE] = packed_json(manifest, name, copies)
    _scan(sources, extra)
    sums = {rel: sha256_of(path) for rel, path in sources.items()}
    sums.update({rel: hashlib.sha256(data).hexdigest() for rel, data in extra.items()})
    extra[SUMS_FILE] = render_sums(sums)
    _write(output, name, sources, extra, sums)
    return PackResult(archive=output, files=len(sums), data=copies)


def _packable(run_dir: Path, *, allow_incomplete: bool) -> Manifest:
    if not run_dir.is_dir():
        raise PathError("not a directory; give a run directory", file=run_dir)
    if not (run_dir / MANIFEST_FILE).is_file():
        raise RunError(f"not a run directory (no {MANIFEST_FILE})", file=run_dir)
    WriterLock(
        run_dir, command="assay pack", fix="wait for it to finish, then pack it"
    ).check_free()
    manifest = read_manifest(run_dir)
    if manifest.status != "complete" and not allow_incomplete:
        raise RunError(
            f"the run is not complete (manifest status: {manifest.status}); finish it "
            "(run its spec again to resume), or pack it as it is with --allow-incomplete",
            file=run_dir / MANIFEST_FILE,
        )
    return manifest


def _check_output(run_dir: Path, output: Path) -> None:
    if output.exists() or output.is_symlink():
        raise PathError("already exists; remove it or choose another -o", file=output)
    if output.resolve().is_relative_to(run_dir.resolve()):
        raise PathError("inside the run directory it packs; choose another -o", file=output)
    if not output.parent.is_dir():
        raise PathError("no such directory; create it first", file=output.parent)


def _scan(sources: dict[str, Path], extra: dict[str, bytes]) -> None:
    """Refuse on the first credential-like value, before anything is written."""
    for rel in sorted(sources):
        hit = scan_file(sources[rel])
        if hit is not None:
            _refuse(sources[rel], hit.line, hit.shape)
    for rel, data in sorted(extra.items()):
        hit = scan_text(data.decode("utf-8"), as_json=rel.endswith(".json"))
        if hit is not None:
            _refuse(Path(rel), hit.line, hit.shape)


def _refuse(path: Path, line: int, shape: str) -> None:
    raise ArchiveError(
        f"looks like a credential ({shape}); remove or redact it and pack again "
        "(a run with a secret in it is never packed)",
        file=path,
        line=line,
    )


def _write(
    output: Path, name: str, sources: dict[str, Path], extra: dict[str, bytes], sums: dict[str, str]
) -> None:
    """The archive, via a temporary sibling renamed into place (never half an archive)."""
    tmp = output.with_name(f".{output.name}.partial")
    try:
        with (
            tmp.open("wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            _add_members(tar, name, sources, extra, sums)
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)


def _add_members(
    tar: tarfile.TarFile,
    name: str,
    sources: dict[str, Path],
    extra: dict[str, bytes],
    sums: dict[str, str],
) -> None:
    every = {*sources, *extra}
    folders = {p.as_posix() for rel in every for p in Path(rel).parents} - {"."}
    tar.addfile(_info(name, tarfile.DIRTYPE, 0))
    for rel in sorted(folders | every):
        if rel in folders:
            tar.addfile(_info(f"{name}/{rel}", tarfile.DIRTYPE, 0))
        elif rel in extra:
            data = extra[rel]
            tar.addfile(_info(f"{name}/{rel}", tarfile.REGTYPE, len(data)), io.BytesIO(data))
        else:
            _add_file(tar, f"{name}/{rel}", sources[rel], sums[rel])


def _add_file(tar: tarfile.TarFile, arcname: str, path: Path, digest: str) -> None:
    """One file, hashed again as it is read: what is packed is what SHA256SUMS lists."""
    with path.open("rb") as fh:
        size = path.stat().st_size
        reader = _Hashing(fh)
        try:
            tar.addfile(_info(arcname, tarfile.REGTYPE, size), reader)
        except OSError:
            reader.digest.update(b"\0")  # shrank while read: cannot match any more
        if reader.digest.hexdigest() != digest:
            raise RunError("changed while it was being packed; pack again", file=path)


class _Hashing(io.RawIOBase):
    """A file read through a sha256."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self.digest.update(data)
        return data


def _info(arcname: str, kind: bytes, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    info.type = kind
    info.size = size
    info.mode = _DIR_MODE if kind == tarfile.DIRTYPE else _FILE_MODE
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
