"""The generated reference pages (docs/reference/spec.md, cli.md, file-formats.md,
python-api.md) match the code, and what they show is documented in the code.

(a) `python docs/gen_reference.py` writes exactly the committed pages, so a changed
model, option or module makes this fail until the pages are regenerated; (b) every
field of the spec's models and of the run directory's record, manifest, metrics and
policy-output models has a description (except the models fail_closed's published
certificate schema embeds, whose schema a description would change); (c) every CLI
command, argument and option has help text.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def gen() -> Iterator[ModuleType]:
    """The generator's helper package, imported as the script imports it."""
    sys.path.insert(0, str(DOCS))
    try:
        import _reference_gen.cli
        import _reference_gen.formats
        import _reference_gen.models
        import _reference_gen.spec

        yield _reference_gen
    finally:
        sys.path.remove(str(DOCS))


def test_generated_pages_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(DOCS / "gen_reference.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        f"{done.stderr}\nthe reference pages are stale: run python docs/gen_reference.py"
    )


def test_check_names_a_stale_page(tmp_path: Path) -> None:
    """--check compares the file, so an edited page is reported (the check can fail)."""
    sys.path.insert(0, str(DOCS))
    try:
        import gen_reference
    finally:
        sys.path.remove(str(DOCS))
    for name, text in gen_reference.pages().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert gen_reference.stale(tmp_path) == []
    (tmp_path / "reference/cli.md").write_text("# edited by hand\n", encoding="utf-8")
    assert gen_reference.stale(tmp_path) == ["reference/cli.md"]


def test_every_spec_field_is_described(gen: ModuleType) -> None:
    models = gen.spec.spec_models()
    assert len(models) > 10
    missing = [m for model in models for m in gen.models.missing_descriptions(model)]
    assert missing == [], f"spec fields without Field(description=...): {missing}"


def test_every_record_and_manifest_field_is_described(gen: ModuleType) -> None:
    models = gen.formats.described_models()
    names = {m.__name__ for m in models}
    expected = {"Manifest", "JudgmentRecord", "GateCandidate", "Usage", "ForceRow"}
    assert expected | {"GateDecisionRecord", "FailClosedClaimRecord"} <= names
    missing = [m for model in models for m in gen.models.missing_descriptions(model)]
    assert missing == [], f"record fields without Field(description=...): {missing}"


def test_every_command_and_option_has_help(gen: ModuleType) -> None:
    assert gen.cli.undocumented() == []


def test_undocumented_names_a_command_or_option_without_help(gen: ModuleType) -> None:
    import typer

    probe = typer.Typer(help="A probe app.")

    @probe.command(help="Documented.")
    def said(flag: bool = typer.Option(False, help="Documented.")) -> None: ...

    @probe.command()
    def silent(count: int = typer.Option(1)) -> None: ...

    found = gen.cli.undocumented(typer.main.get_command(probe))
    assert found == ["assay silent", "assay silent --count"]


def test_undocumented_detects_a_missing_description(gen: ModuleType) -> None:
    from pydantic import BaseModel, Field

    class Probe(BaseModel):
        said: int = Field(default=0, description="Documented.")
        silent: int = 0

    assert gen.models.missing_descriptions(Probe) == ["Probe.silent"]


def test_spec_page_lists_every_table_key() -> None:
    """Spot check: a key of a nested table appears with its TOML path and default."""
    page = (DOCS / "reference/spec.md").read_text(encoding="utf-8")
    assert "| `[[judges]].temperature` |" in page
    assert "| `[gate].k1_initial` | int (>= 1, <= 100000) | `50` |" in page
    assert "## `[[policies]]`" in page
