"""`assay unpack`: nothing in an archive is trusted before it is checked.

A tampered archive (an edited, added or removed file, a `..` or absolute member, a link,
a repeated member) is refused naming the member, exits 1 for a checksum mismatch and 2
for an unsafe member, and extracts nothing; an existing directory is never overwritten.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke
from _pack_runs import demo_run, pack, run

__all__ = ["demo_run", "run"]  # fixtures, imported to be found


# --- tampered archives -------------------------------------------------------------------

Member = tuple[tarfile.TarInfo, bytes]


def _retar(src: Path, dst: Path, change: Callable[[list[Member]], list[Member]]) -> None:
    with tarfile.open(src) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else b"") for m in tar]  # type: ignore[union-attr]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in change(members):
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    dst.write_bytes(gzip.compress(buf.getvalue()))


def _file(name: str, data: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _edit(ms: list[Member]) -> list[Member]:
    return [
        (
            _file(i.name, d.replace(b"supported", b"unsupported", 1))
            if i.name.endswith("judgments.jsonl")
            else (i, d)
        )
        for i, d in ms
    ]


def _link(name: str, target: str, kind: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, b""


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        (_edit, 1, "does not match its SHA256SUMS: changed judgments.jsonl; the archive"),
        (lambda ms: [*ms, _file("demo/evil.txt", b"x")], 1, "SHA256SUMS: extra evil.txt;"),
        (
            lambda ms: [m for m in ms if m[0].name != "demo/metrics.json"],
            1,
            "SHA256SUMS: missing metrics.json;",
        ),
        (
            lambda ms: [*ms, _file("demo/../evil.txt", b"x")],
            2,
            "refused member 'demo/../evil.txt': a path that climbs out",
        ),
        (lambda ms: [*ms, _file("/tmp/evil.txt", b"x")], 2, "'/tmp/evil.txt': an absolute path"),
        (lambda ms: [*ms, _file("other/x.txt", b"x")], 2, "outside the archive's one top folder"),
        (
            lambda ms: [_file("demo", b"x"), *ms[1:]],
            2,
            "refused member 'demo': the top folder must be a folder",
        ),
        (lambda ms: [*ms, ms[3]], 2, "a repeated member"),
        (
            lambda ms: [*ms, _link("demo/notes", "/etc/passwd", tarfile.SYMTYPE)],
            2,
            "refused member 'demo/notes': a link",
        ),
        (
            lambda ms: [*ms, _link("demo/hard", "demo/manifest.json", tarfile.LNKTYPE)],
            2,
            "refused member 'demo/hard': a link",
        ),
        (
            lambda ms: [m for m in ms if m[0].name != "demo/SHA256SUMS"],
            1,
            "no SHA256SUMS in demo/",
        ),
    ],
    ids=[
        "edited",
        "added",
        "removed",
        "dotdot",
        "absolute",
        "outside",
        "topfile",
        "repeated",
        "symlink",
        "hardlink",
        "nosums",
    ],
)
def test_a_tampered_archive_is_refused_and_nothing_is_extracted(
    run: Path,
    tmp_path: Path,
    change: Callable[[list[Member]], list[Member]],
    code: int,
    message: str,
) -> None:
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    _retar(tmp_path / "a.tar.gz", tmp_path / "t.tar.gz", change)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    got, out, err = invoke(["unpack", str(tmp_path / "t.tar.gz"), "-o", str(out_dir / "demo")])
    assert got == code and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {tmp_path / 't.tar.gz'}: ")
    assert message in err
    assert list(out_dir.iterdir()) == [] and not (tmp_path / "evil.txt").exists()


def test_the_untampered_copy_made_the_same_way_unpacks(run: Path, tmp_path: Path) -> None:
    """The tampering helper alone changes nothing a check looks at."""
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    _retar(tmp_path / "a.tar.gz", tmp_path / "t.tar.gz", lambda ms: ms)
    assert invoke(["unpack", str(tmp_path / "t.tar.gz"), "-o", str(tmp_path / "u")])[0] == 0


def test_unpack_defaults_to_the_archive_folder_here_and_never_overwrites(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(["unpack", "a.tar.gz"])
    assert code == 0 and out == "demo\n" and (tmp_path / "demo" / "manifest.json").is_file()
    (tmp_path / "demo" / "labels.jsonl").write_text("mine\n", encoding="utf-8")
    code, _, err = invoke(["unpack", "a.tar.gz"])
    assert code == 2 and err == "error: demo: already exists; remove it or choose another -o\n"
    assert (tmp_path / "demo" / "labels.jsonl").read_text(encoding="utf-8") == "mine\n"


def test_an_unpacked_run_passes_assay_verify(run: Path, tmp_path: Path) -> None:
    """The issue's end to end: pack -> unpack elsewhere -> verify, all from the archive."""
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    assert invoke(["unpack", str(tmp_path / "a.tar.gz"), "-o", str(tmp_path / "u")])[0] == 0
    code, out, err = invoke(["verify", str(tmp_path / "u")])
    assert code == 0, out + err
