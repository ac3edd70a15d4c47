"""`assay --version` and `assay list`: every list is read from the registry a spec uses."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from _cli import invoke_as_process

from assay import __version__
from assay.catalog import SECTIONS, Section, catalog, section_name
from assay.cli import LIST_SECTIONS
from assay.core.registry import JUDGES, REGISTRIES, VERIFIERS
from assay.datasets import CSV_SUFFIXES, JSONL_SUFFIXES, load_pairs
from assay.errors import SpecError
from assay.judges import baseline
from assay.prompts import PromptRegistry


def _assay(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"}
    full.update(env or {})
    return invoke_as_process(list(args), env=full, cwd=cwd)  # in-process: same output, no start-up


def _section(name: str) -> Section:
    (part,) = catalog(name)
    return part


def test_version_flag_and_command(tmp_path: Path) -> None:
    flag = _assay("--version", cwd=tmp_path)
    assert flag.returncode == 0 and flag.stdout == f"assay {__version__}\n"
    command = _assay("version", cwd=tmp_path)  # kept, bare number for scripts
    assert command.returncode == 0 and command.stdout.strip() == __version__


def test_every_registry_is_a_section_with_every_entry() -> None:
    for registry in REGISTRIES:
        rows = _section(section_name(registry)).rows
        assert [r[0] for r in rows] == registry.names(), registry.kind
        for name, package, description in rows:
            info = registry.info(name)
            assert (package, description) == (info.package, info.description)
    assert _section("verifiers").rows, "the built-in verifiers are registered"
    assert {r[1] for r in _section("judges").rows} == {"assay"}  # no plugin installed here


def test_sections_are_the_registries_then_baselines_prompts_datasets() -> None:
    names = [section_name(r) for r in REGISTRIES]
    assert (names[0], "baselines", *names[1:], "prompts", "datasets") == SECTIONS
    assert LIST_SECTIONS.split(", ") == list(SECTIONS)  # what `assay list --help` says


def test_baselines_are_the_judges_registry() -> None:
    rows = _section("baselines").rows
    listed = [n.removeprefix("baseline:") for n in JUDGES if n.startswith("baseline:")]
    assert [r[0] for r in rows] == listed and len(listed) >= 5
    for name, version, params, description in rows:
        judge = baseline(name)
        assert str(judge.describe()["version"]) == version and description
        for param in params.split(", "):  # every listed parameter is one baseline() takes
            try:
                baseline(name, **{param: None})
            except Exception as exc:
                assert "has no parameter" not in str(exc)
        with pytest.raises(SpecError, match="has no parameter"):
            baseline(name, nope=1)


def test_prompts_are_the_registry() -> None:
    registry = list(PromptRegistry())
    rows = _section("prompts").rows
    assert [r[0] for r in rows] == [p.ref for p in registry]
    assert [r[2] for r in rows] == [p.sha256[:12] for p in registry]
    assert [r[1] for r in rows] == [p.meta.task for p in registry]


def test_datasets_are_the_loaders(tmp_path: Path) -> None:
    rows = {r[0]: r for r in _section("datasets").rows}
    assert rows["forcebench"][1].split(", ") == [*JSONL_SUFFIXES, *CSV_SUFFIXES]
    demo = load_pairs("builtin:forcebench-demo")
    line = demo.pairs[0].model_dump_json()
    for suffix in JSONL_SUFFIXES:  # each listed suffix really loads
        (tmp_path / f"p{suffix}").write_text(line + "\n", encoding="utf-8")
        assert load_pairs(tmp_path / f"p{suffix}").rows == 1
    assert load_pairs(next(n for n in rows if n.startswith("builtin:"))).rows > 0


def test_list_cli_is_plain_text_and_complete(tmp_path: Path) -> None:
    proc = _assay("list", cwd=tmp_path, env={"COLUMNS": "60"})
    assert proc.returncode == 0, proc.stderr
    titles = [line for line in proc.stdout.splitlines() if line in SECTIONS]
    assert titles == list(SECTIONS)
    assert not set("│┃━─╭…") & set(proc.stdout)  # not a TTY: no box drawing, nothing cut
    for registry in REGISTRIES:  # every description whole, even in 60 columns
        for entry in registry.entries():
            row = rf"^{re.escape(entry.name)} +{entry.package} +{re.escape(entry.description)}$"
            assert re.search(row, proc.stdout, re.MULTILINE), row
    one = _assay("list", "verifiers", cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.splitlines()[0] == "verifiers"
    assert [line.split()[0] for line in one.stdout.splitlines()[2:]] == VERIFIERS.names()


def test_list_unknown_section_is_one_error_line(tmp_path: Path) -> None:
    proc = _assay("list", "judge", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: unknown section 'judge'")
    assert len(proc.stderr.strip().splitlines()) == 1
