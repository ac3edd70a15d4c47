"""`assay pack`: a run as a deterministic, checksummed archive.

Round trip byte for byte; the same run packs to the same bytes; anything credential-like
refuses the pack (never printing the secret); `--with-data` carries the dataset files,
checked by sha256; a run being written or not complete is refused; errors are one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke
from _pack_runs import EXAMPLES, KEY, PASSWORD, demo_run, files, pack, run

from assay.core.rundir_lock import WriterLock

__all__ = ["demo_run", "run"]  # fixtures, imported to be found


def test_round_trip_gives_the_same_files_and_leaves_lock_and_temp_files_out(
    run: Path, tmp_path: Path
) -> None:
    code, out, err = pack(run, tmp_path / "run.tar.gz")
    assert code == 0, err
    assert out.startswith(f"packed {run} -> {tmp_path / 'run.tar.gz'} (")
    code, out, err = invoke(["unpack", str(tmp_path / "run.tar.gz"), "-o", str(tmp_path / "u")])
    assert code == 0, err
    assert out.strip() == str(tmp_path / "u")
    got, source = files(tmp_path / "u"), files(run)
    assert got.pop("SHA256SUMS")
    assert got == {k: v for k, v in source.items() if not k.startswith(".")}
    assert "snapshot/prompts/0123456789abcdef-judge.prompt" in got
    with tarfile.open(tmp_path / "run.tar.gz") as tar:
        names = tar.getnames()
    assert names == sorted(names) and all(n == "demo" or n.startswith("demo/") for n in names)


def test_sha256sums_lists_every_other_file_in_sha256sum_format(run: Path, tmp_path: Path) -> None:
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    assert invoke(["unpack", str(tmp_path / "a.tar.gz"), "-o", str(tmp_path / "u")])[0] == 0
    lines = (tmp_path / "u" / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    listed = {line[66:]: line[:64] for line in lines}
    assert all(line[64:66] == "  " for line in lines)
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in files(tmp_path / "u").items()}
    digests.pop("SHA256SUMS")
    assert listed == digests


def test_the_same_run_packs_to_the_same_bytes(run: Path, tmp_path: Path) -> None:
    assert pack(run, tmp_path / "a.tar.gz")[0] == 0
    elsewhere = Path(shutil.copytree(run, tmp_path / "other" / "demo"))
    for path in elsewhere.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
        path.chmod(0o600 if path.is_file() else 0o700)
    assert pack(elsewhere, tmp_path / "b.tar.gz")[0] == 0
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    (elsewhere / "labels.jsonl").write_text("{}\n", encoding="utf-8")
    assert pack(elsewhere, tmp_path / "c.tar.gz")[0] == 0
    assert (tmp_path / "a.tar.gz").read_bytes() != (tmp_path / "c.tar.gz").read_bytes()


def _plant_raw_output(run: Path) -> tuple[str, int]:
    lines = (run / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    record["raw_output"] = f"Here is my answer.\n{KEY}\n"  # after an escaped newline
    lines[4] = json.dumps(record)
    (run / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "judgments.jsonl", 5


def _plant_prompt(run: Path) -> tuple[str, int]:
    path = run / "snapshot" / "prompts" / "0123456789abcdef-judge.prompt"
    path.write_text(f"Judge this.\n\napi_key = '{PASSWORD}'\n", encoding="utf-8")
    return "snapshot/prompts/0123456789abcdef-judge.prompt", 3


def _plant_url(run: Path) -> tuple[str, int]:
    note = {"item_id": "y", "note": f"data at https://ann:{PASSWORD}@data.example.org/x.csv"}
    with (run / "labels.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(note) + "\n")
    return "labels.jsonl", 2


def _plant_field(run: Path) -> tuple[str, int]:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["spec"]["client_secret"] = PASSWORD
    text = json.dumps(manifest, indent=2)
    (run / "manifest.json").write_text(text, encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "client_secret" in ln)
    return f"manifest.json:{line}", 0


@pytest.mark.parametrize(
    ("plant", "shape"),
    [
        (_plant_raw_output, "sk-... API key"),
        (_plant_prompt, "api_key=... pair"),
        (_plant_url, "URL with user:password"),
        (_plant_field, "value of field 'client_secret'"),
    ],
)
def test_a_credential_anywhere_refuses_the_pack_without_printing_it(
    run: Path, tmp_path: Path, plant: Callable[[Path], tuple[str, int]], shape: str
) -> None:
    rel, line = plant(run)
    where = f"{run / rel}:{line}" if line else str(run / rel)
    code, out, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {where}: looks like a credential")
    assert shape in err
    assert KEY not in err and PASSWORD not in err
    assert not list(tmp_path.glob("*.tar.gz")) and not list(tmp_path.glob(".*partial"))


def test_redacted_and_harmless_values_do_not_refuse_thepack(run: Path, tmp_path: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["spec"]["judges"] = [
        {
            "api_key": "<redacted>",
            "api_key_env": "OPENAI_API_KEY",
            "token": None,
            "extra_headers": {"Authorization": "<redacted>", "User-Agent": "me/1.0"},
            "api_base": "https://proxy.example.org/v1",
        }
    ]
    manifest["description"] = "Bearer <redacted>; see https://example.org/runs?page=2&sort=asc"
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    code, _, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 0, err


def test_a_header_value_in_a_record_refuses_thepack(run: Path, tmp_path: Path) -> None:
    record = {"request": {"extra_headers": {"X-Tenant-Auth": PASSWORD}}}
    (run / "labels.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, _, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 2 and f"{run / 'labels.jsonl'}:1:" in err
    assert "value of header 'X-Tenant-Auth'" in err and PASSWORD not in err


def test_a_run_being_written_is_refused(run: Path, tmp_path: Path) -> None:
    with WriterLock(run, command="assay run", fix="wait"):
        code, _, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 2 and err.count("\n") == 1
    assert "another assay process" in err and "`assay run`" in err
    assert not (tmp_path / "x.tar.gz").exists()


def test_an_incomplete_run_needs_allow_incomplete(run: Path, tmp_path: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, _, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 2 and "not complete (manifest status: interrupted)" in err
    assert "--allow-incomplete" in err and not (tmp_path / "x.tar.gz").exists()
    assert pack(run, tmp_path / "x.tar.gz", "--allow-incomplete")[0] == 0


def _use_local_data(run: Path, tmp_path: Path) -> Path:
    """Point the manifest's pairs dataset at a copy of its file (which a test may edit)."""
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    data = tmp_path / "data" / "pairs.jsonl"
    data.parent.mkdir()
    shutil.copyfile(manifest["datasets"][0]["path"], data)
    manifest["datasets"][0]["path"] = str(data)
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return data


def test_with_data_packs_each_dataset_file_and_leaves_the_run_as_it_was(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _use_local_data(run, tmp_path)
    before = files(run)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    code, out, err = pack(run, tmp_path / "a.tar.gz", "--with-data")
    assert code == 0, err
    assert "2 dataset file(s)" in out
    assert files(run) == before
    assert pack(run, tmp_path / "b.tar.gz", "--with-data")[0] == 0
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    assert invoke(["unpack", str(tmp_path / "a.tar.gz"), "-o", str(tmp_path / "u")])[0] == 0
    packed = json.loads((tmp_path / "u" / "PACKED.json").read_text(encoding="utf-8"))
    assert packed["packed_at"] == "2023-11-14T22:13:20Z"
    assert packed["packed_by"].startswith("assay ") and packed["run"] == "demo"
    first = packed["data"][0]
    sha = json.loads(before["manifest.json"])["datasets"][0]["sha256"]
    assert first["snapshot"] == f"snapshot/data/{sha[:16]}-pairs.jsonl"
    assert (tmp_path / "u" / first["snapshot"]).read_bytes() == data.read_bytes()
    assert [d["section"] for d in packed["data"]] == ["datasets", "factuality.datasets"]
    assert "PACKED.json" in (tmp_path / "u" / "SHA256SUMS").read_text(encoding="utf-8")


def test_an_unpacked_archive_with_data_packs_again_without_the_originalfiles(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _use_local_data(run, tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert pack(run, tmp_path / "a.tar.gz", "--with-data")[0] == 0
    (tmp_path / "u").mkdir()
    assert (
        invoke(["unpack", str(tmp_path / "a.tar.gz"), "-o", str(tmp_path / "u" / "demo")])[0] == 0
    )
    data.unlink()  # the reader has the archive only
    code, _, err = pack(tmp_path / "u" / "demo", tmp_path / "b.tar.gz", "--with-data")
    assert code == 0, err
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()


def test_with_data_refuses_a_dataset_changed_since_the_run(run: Path, tmp_path: Path) -> None:
    data = _use_local_data(run, tmp_path)
    data.write_text(data.read_text(encoding="utf-8").replace("a", "b", 1), encoding="utf-8")
    code, _, err = pack(run, tmp_path / "x.tar.gz", "--with-data")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {data}: --with-data: dataset 'forcebench-demo' has changed")
    data.unlink()
    code, _, err = pack(run, tmp_path / "x.tar.gz", "--with-data")
    assert code == 2 and "is not at this path any more" in err
    assert not (tmp_path / "x.tar.gz").exists()


def test_pack_defaults_to_the_run_name_and_refuses_to_overwrite(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(["pack", str(run)])
    assert code == 0 and (tmp_path / "demo.tar.gz").is_file()
    code, _, err = invoke(["pack", str(run)])
    assert (
        code == 2 and err == "error: demo.tar.gz: already exists; remove it or choose another -o\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pack", "{tmp}/nowhere"], "{tmp}/nowhere: not a directory; give a run directory"),
        (["pack", "{tmp}"], "{tmp}: not a run directory (no manifest.json)"),
        (["pack", "{run}", "-o", "{run}/x.tar.gz"], "inside the run directory it packs"),
        (["pack", "{run}", "-o", "{tmp}/no/x.tar.gz"], "{tmp}/no: no such directory"),
        (["unpack", "{tmp}/none.tar.gz"], "{tmp}/none.tar.gz: no such archive file"),
        (["unpack", "{run}/manifest.json"], "not a readable .tar.gz archive"),
    ],
)
def test_cli_errors_are_one_line(run: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    fill = {"tmp": str(tmp_path), "run": str(run)}
    code, _, err = invoke([a.format(**fill) for a in argv])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: ") and message.format(**fill) in err


def test_a_link_in_the_run_directory_is_refused_not_followed(run: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("not the run's\n", encoding="utf-8")
    (run / "notes.txt").symlink_to(tmp_path / "outside.txt")
    code, _, err = pack(run, tmp_path / "x.tar.gz")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {run / 'notes.txt'}: a symbolic link cannot be packed")
    assert not (tmp_path / "x.tar.gz").exists()


def test_with_data_on_a_run_that_bundled_its_data_packs_that_copy(tmp_path: Path) -> None:
    """`bundle_data = true` put the file in the run already: `--with-data` checks that
    copy and maps it, needing no file outside the run, and packs it once."""
    shutil.copyfile(
        EXAMPLES.parent / "assay" / "data" / "forcebench_demo.jsonl", tmp_path / "p.jsonl"
    )
    spec = tmp_path / "bundled.toml"
    spec.write_text(
        'name = "bundled"\nbundle_data = true\nbootstrap = 0\n'
        '[[datasets]]\nname = "fb"\npath = "p.jsonl"\n'
        '[[baselines]]\nname = "citation-presence"\n',
        encoding="utf-8",
    )
    run_dir = tmp_path / "bundled"
    code, _, err = invoke(["run", str(spec), "--output-dir", str(run_dir), "--no-progress"])
    assert code == 0, err
    (tmp_path / "p.jsonl").unlink()
    code, out, err = pack(run_dir, tmp_path / "b.tar.gz", "--with-data")
    assert code == 0, err
    assert out.endswith(", 1 dataset file(s))\n")
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        data = [n for n in tar.getnames() if n.startswith("bundled/snapshot/data/")]
        packed = json.loads(tar.extractfile("bundled/PACKED.json").read())  # type: ignore[union-attr]
    snapshot = json.loads((run_dir / "manifest.json").read_text("utf-8"))["datasets"][0]["snapshot"]
    assert data == [f"bundled/{snapshot}"] and packed["data"][0]["snapshot"] == snapshot
