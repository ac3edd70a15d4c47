"""`assay --version` and `assay list`: every list is read from the registry a spec uses."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay import __version__
from assay.catalog import (
    ANSWER_FORMATS,
    DECOMPOSER_INFO,
    SECTIONS,
    VERIFIER_INFO,
    Section,
    catalog,
)
from assay.datasets import load_pairs
from assay.datasets._importers import FORMATS
from assay.datasets._load import CSV_SUFFIXES, JSONL_SUFFIXES
from assay.errors import SpecError
from assay.judges import BASELINES, baseline
from assay.prompts import PromptRegistry
from assay.runs._spec import DECOMPOSER_KINDS, VERIFIER_KINDS, DecomposerSpec, VerifierSpec


def _assay(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, NO_COLOR="1", COLUMNS="200", PYTHONIOENCODING="utf-8", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _section(name: str) -> Section:
    (part,) = catalog(name)
    return part


def _first_column(name: str) -> list[str]:
    return [row[0] for row in _section(name).rows]


def test_version_flag_and_command(tmp_path: Path) -> None:
    flag = _assay("--version", cwd=tmp_path)
    assert flag.returncode == 0 and flag.stdout == f"assay {__version__}\n"
    command = _assay("version", cwd=tmp_path)  # kept, bare number for scripts
    assert command.returncode == 0 and command.stdout.strip() == __version__


def test_judges_and_baselines_are_the_registry() -> None:
    assert _first_column("judges") == ["llm", *(f"baseline:{n}" for n in BASELINES)]
    rows = _section("baselines").rows
    assert [r[0] for r in rows] == list(BASELINES)
    for name, version, params, description in rows:
        judge = baseline(name)
        assert judge.describe()["version"] == version and description
        for param in params.split(", "):  # every listed parameter is one baseline() takes
            try:
                baseline(name, **{param: None})
            except Exception as exc:
                assert "has no parameter" not in str(exc)
        with pytest.raises(SpecError, match="has no parameter"):
            baseline(name, nope=1)


def test_decomposers_are_what_a_spec_accepts() -> None:
    assert _first_column("decomposers") == list(DECOMPOSER_KINDS)
    assert set(DECOMPOSER_INFO) == set(DECOMPOSER_KINDS)
    for kind in DECOMPOSER_KINDS:
        DecomposerSpec(kind=kind, model="m")
    with pytest.raises(ValidationError):
        DecomposerSpec(kind="paragraph")


def test_verifiers_are_what_a_spec_accepts() -> None:
    kind_type = typing.get_type_hints(VerifierSpec)["kind"]
    assert _first_column("verifiers") == list(VERIFIER_KINDS)
    assert tuple(typing.get_args(kind_type)) == VERIFIER_KINDS
    assert set(VERIFIER_INFO) == set(VERIFIER_KINDS)


def test_prompts_are_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = list(PromptRegistry())
    rows = _section("prompts").rows
    assert [r[0] for r in rows] == [p.ref for p in registry]
    assert [r[2] for r in rows] == [p.sha256[:12] for p in registry]
    assert [r[1] for r in rows] == [p.meta.task for p in registry]


def test_importers_are_the_loaders(tmp_path: Path) -> None:
    rows = {r[0]: r for r in _section("importers").rows}
    assert [k for k in rows if k.startswith("answers:")] == [f"answers:{f}" for f in FORMATS]
    assert set(ANSWER_FORMATS) == set(FORMATS)
    assert rows["forcebench"][1].split(", ") == [*JSONL_SUFFIXES, *CSV_SUFFIXES]
    demo = load_pairs("builtin:forcebench-demo")
    line = demo.pairs[0].model_dump_json()
    for suffix in JSONL_SUFFIXES:  # each listed suffix really loads
        (tmp_path / f"p{suffix}").write_text(line + "\n", encoding="utf-8")
        assert load_pairs(tmp_path / f"p{suffix}").rows == 1


def test_list_cli_is_plain_text_and_complete(tmp_path: Path) -> None:
    proc = _assay("list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    titles = [line for line in proc.stdout.splitlines() if line in SECTIONS]
    assert titles == list(SECTIONS)
    assert not set("│┃━─╭") & set(proc.stdout)  # not a TTY: no box drawing
    one = _assay("list", "verifiers", cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.splitlines()[0] == "verifiers"
    assert [line.split()[0] for line in one.stdout.splitlines()[2:]] == list(VERIFIER_KINDS)


def test_list_unknown_section_is_one_error_line(tmp_path: Path) -> None:
    proc = _assay("list", "judge", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: unknown section 'judge'")
    assert len(proc.stderr.strip().splitlines()) == 1
