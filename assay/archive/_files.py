"""Which files of a run directory an archive holds, and its checksum list.

An archive holds the run as written (manifest, records, metrics, labels, policies,
snapshots, report) and nothing that belongs to one machine or one moment: not the
writer's lock file, not a writer's temporary files (dot files, see `assay.core.atomic`),
and not a previous pack's `SHA256SUMS` / `PACKED.json` (written fresh for each archive).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from assay.errors import AssayError, RunError

__all__ = [
    "GENERATED",
    "PACKED_FILE",
    "SUMS_FILE",
    "ArchiveError",
    "parse_sums",
    "render_sums",
    "run_files",
    "sha256_of",
]

SUMS_FILE = "SHA256SUMS"
PACKED_FILE = "PACKED.json"
GENERATED = frozenset({SUMS_FILE, PACKED_FILE})
_SUM_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")
_CHUNK = 1 << 20


class ArchiveError(AssayError):
    """An archive that cannot be unpacked safely, or a run that cannot be packed."""


def run_files(run_dir: Path) -> list[str]:
    """The run's files to pack, as sorted POSIX paths relative to `run_dir`."""
    found: list[str] = []
    for folder, dirs, files in os.walk(run_dir, followlinks=False):
        base = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and _plain(base / d, run_dir))
        for name in files:
            path = base / name
            rel = path.relative_to(run_dir).as_posix()
            if name.startswith(".") or rel in GENERATED or not _plain(path, run_dir):
                continue
            if "\n" in rel or "\\" in rel:
                raise RunError(
                    "a file name with a newline or backslash cannot be listed in "
                    f"{SUMS_FILE}; rename it",
                    file=path,
                )
            found.append(rel)
    return sorted(found)


def _plain(path: Path, run_dir: Path) -> bool:
    """A regular file or directory; a link or device is refused (an archive holds the
    bytes of the run, never a pointer out of it)."""
    if path.is_symlink():
        raise RunError("a symbolic link cannot be packed; replace it by the file", file=path)
    if not (path.is_file() or path.is_dir()):
        raise RunError("not a regular file; move it out of the run directory", file=path)
    return True


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def render_sums(sums: dict[str, str]) -> bytes:
    """`sha256sum` format (`<hex>  <path>`), sorted by path: `sha256sum -c` checks it."""
    return "".join(f"{sums[rel]}  {rel}\n" for rel in sorted(sums)).encode("utf-8")


def parse_sums(text: str, *, where: str) -> dict[str, str]:
    """path -> hex digest from a `SHA256SUMS` file; a malformed line is an error."""
    sums: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        match = _SUM_LINE.fullmatch(line)
        if match is None or match.group(2) in sums:
            problem = "a repeated path" if match else "not `<sha256>  <path>`"
            raise ArchiveError(f"{SUMS_FILE} line {lineno}: {problem}", file=where)
        sums[match.group(2)] = match.group(1)
    return sums
