"""`assay validate SPEC` names a bundled dataset as the spec names it (`builtin:NAME`),
not by the path of the installed package: the README shows the command's whole output,
which must be the same on every machine."""

from __future__ import annotations

from pathlib import Path

from tests._cli import invoke

REPO = Path(__file__).resolve().parents[1]


def test_validate_names_builtin_datasets_as_written(tmp_path: Path) -> None:
    (tmp_path / "pairs.jsonl").write_text(
        (REPO / "assay" / "data" / "forcebench_demo.jsonl").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[[datasets]]\npath = "builtin:forcebench-demo"\n'
        '[[datasets]]\nname = "mine"\npath = "pairs.jsonl"\n'
        '[[baselines]]\nname = "token-overlap"\n',
        encoding="utf-8",
    )
    code, out, err = invoke(["validate", str(spec)])
    assert code == 0, err
    lines = out.splitlines()
    assert "builtin:forcebench-demo: 60 rows ok (forcebench_demo)" in lines
    assert f"{tmp_path / 'pairs.jsonl'}: 60 rows ok (mine)" in lines  # a file: its path
    assert str(REPO / "assay" / "data") not in out
