"""`assay unpack`: an archive made by `assay pack`, checked, then extracted.

An archive comes from someone else, so nothing in it is trusted before it is checked:
every member must be a plain file or folder under the one top folder (no absolute path,
no `..`, no link or device: the classic tar traversal), and every file must match
`SHA256SUMS` (a missing, extra or changed file fails the check, naming each). Only then
is it extracted, into a temporary sibling renamed into place, so a refused archive
leaves nothing behind and an existing directory is never overwritten.
"""

from __future__ import annotations

import hashlib
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from assay.archive._files import SUMS_FILE, ArchiveError, parse_sums
from assay.errors import PathError

__all__ = ["ChecksumMismatch", "unpack_archive"]

_CHUNK = 1 << 20


class ChecksumMismatch(ArchiveError):
    """The archive's files are not the ones its SHA256SUMS lists (exit 1, not 2)."""


def unpack_archive(archive: Path, output: Path | None = None) -> Path:
    """Check `archive`, extract it to `output` (default: `./<top folder>`), return it."""
    if not archive.is_file():
        raise PathError("no such archive file", file=archive)
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()
            top = _check_members(members, archive)
            _check_sums(tar, members, top, archive)
            target = output if output is not None else Path(top)
            _extract(tar, members, top, target)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, OSError) and exc.filename is not None:
            raise
        raise ArchiveError(
            f"not a readable .tar.gz archive ({exc}); was it made by `assay pack`?",
            file=archive,
        ) from None
    return target


def _check_members(members: list[tarfile.TarInfo], archive: Path) -> str:
    """The one top folder; every member a plain file or folder inside it."""
    if not members:
        raise ArchiveError("the archive is empty", file=archive)
    top = PurePosixPath(members[0].name).parts[0] if members[0].name else ""
    seen: set[str] = set()
    for member in members:
        key = PurePosixPath(member.name).as_posix()  # `demo/./x` is `demo/x`
        problem = _unsafe(member, top) or ("a repeated member" if key in seen else "")
        if problem:
            raise ArchiveError(f"refused member {member.name!r}: {problem}", file=archive)
        seen.add(key)
    return top


def _unsafe(member: tarfile.TarInfo, top: str) -> str:
    """Why a member may not be extracted ('' when it may)."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or member.name.startswith(("/", "\\")) or ":" in path.parts[0]:
        return "an absolute path"
    if ".." in path.parts or "\\" in member.name:
        return "a path that climbs out of the archive's folder (..)"
    if top in ("", ".") or path.parts[0] != top:
        return f"outside the archive's one top folder {top!r}"
    if member.issym() or member.islnk():
        return "a link (an archive of a run holds files only)"
    if not (member.isfile() or member.isdir()):
        return "a device, pipe or other special file"
    if len(path.parts) == 1 and not member.isdir():
        return "the top folder must be a folder"
    return ""


def _check_sums(
    tar: tarfile.TarFile, members: list[tarfile.TarInfo], top: str, archive: Path
) -> None:
    """Every file hashed from the archive itself and compared with `SHA256SUMS`."""
    files = {_rel(m, top): m for m in members if m.isfile()}
    if SUMS_FILE not in files:
        raise ChecksumMismatch(
            f"no {SUMS_FILE} in {top}/: not an archive made by `assay pack`", file=archive
        )
    listed = parse_sums(_read(tar, files.pop(SUMS_FILE)).decode("utf-8"), where=str(archive))
    missing = sorted(set(listed) - set(files))
    extra = sorted(set(files) - set(listed))
    changed = sorted(  # read in archive order: a gzip stream seeks forward cheaply
        rel
        for rel, member in files.items()
        if rel in listed and _digest(tar, member) != listed[rel]
    )
    parts = [f"changed {rel}" for rel in changed] + [f"missing {rel}" for rel in missing]
    parts += [f"extra {rel}" for rel in extra]
    if parts:
        raise ChecksumMismatch(
            f"does not match its {SUMS_FILE}: {'; '.join(parts)}; the archive was edited "
            "or damaged after it was packed",
            file=archive,
        )


def _rel(member: tarfile.TarInfo, top: str) -> str:
    return PurePosixPath(member.name).relative_to(top).as_posix()


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    fh = tar.extractfile(member)
    if fh is None:  # pragma: no cover - a checked member is a regular file
        raise ArchiveError(f"cannot read member {member.name!r}")
    with fh:
        return fh.read()


def _digest(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    """A member's sha256, read in chunks (a packed dataset may be large)."""
    fh = tar.extractfile(member)
    if fh is None:  # pragma: no cover - a checked member is a regular file
        raise ArchiveError(f"cannot read member {member.name!r}")
    digest = hashlib.sha256()
    with fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], top: str, target: Path) -> None:
    """Into a temporary sibling of `target`, then renamed: all or nothing."""
    if target.exists() or target.is_symlink():
        raise PathError("already exists; remove it or choose another -o", file=target)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise PathError("no such directory; create it first", file=parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".unpack", dir=parent))
    try:
        data_filter = getattr(tarfile, "data_filter", None)
        if data_filter is not None:
            tar.extractall(staging, members=members, filter=data_filter)
        else:  # pragma: no cover - Python without extraction filters
            tar.extractall(staging, members=members)
        (staging / top).replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
