"""The line of a TOML file a field path names (`assay._toml_lines`): every key tomllib
reads from the example specs is found on a line that writes it, the awkward corners of
TOML (multi-line strings, quoted and dotted keys, arrays of tables nested in arrays of
tables) are read as tomllib reads them, and the command's spec errors name the line."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay._toml_lines import field_line, key_lines

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.toml"))


def _paths(obj: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every table, array-of-tables entry and key tomllib read, as a field path."""
    if path:
        yield path
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _paths(value, (*path, key))
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        for i, item in enumerate(obj):
            yield from _paths(item, (*path, i))


def _field(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.name)
def test_every_key_of_the_examples_is_found_where_it_is_written(spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    lines = text.splitlines()
    for path in _paths(tomllib.loads(text)):
        number = field_line(text, _field(path))
        assert number is not None, path
        names = [p for p in path if isinstance(p, str)]
        # its own line, or the line of the inline table or array that holds it
        assert any(name in lines[number - 1] for name in names), (path, lines[number - 1])


AWKWARD = '''\
# a comment: x = 1
name = "awkward"
notes = """
judges = "not a key"
[not.a.header]
"""
"quoted.key" = 1
site.owner = "me"

[[judges]]
models = [
  "a",
  "b",
]
params = { threshold = 0.3 }

[[judges.extra]]
x = 1

[[judges.extra]]
x = 2

[[judges]]
models = ["c"]

[[judges.extra]]
x = 3

[factuality.decomposer]
kind = 'llm'
'''


def test_awkward_toml_is_read_as_tomllib_reads_it() -> None:
    data = tomllib.loads(AWKWARD)
    assert data["judges"][1]["extra"][0]["x"] == 3  # what the lines below must agree with
    lines = key_lines(AWKWARD)
    assert lines[("name",)] == 2 and lines[("notes",)] == 3
    assert lines[("judges",)] == 10  # its first entry, not the "judges = " in the string
    assert ("not", "a", "header") not in lines
    assert lines[("quoted.key",)] == 7 and lines[("site", "owner")] == 8
    assert lines[("judges", 0)] == 10 and lines[("judges", 0, "models")] == 11
    assert lines[("judges", 0, "extra", 1, "x")] == 21
    assert lines[("judges", 1, "models")] == 24
    assert lines[("judges", 1, "extra", 0, "x")] == 27  # a new judge's arrays start afresh
    assert lines[("factuality", "decomposer", "kind")] == 30


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("judges[0].models[1]", 11),  # an array item: the array's line
        ("judges[0].params.threshold", 15),  # in an inline table: its key's line
        ("judges[1]", 23),  # a whole entry: its header
        ("judges[1].max_tokens", 23),  # not written (a default): the entry's header
        ("judges.1.extra.0.x", 27),  # pydantic's dotted form of the same path
        ("factuality.decomposer.prompt", 29),
        ("max_cost_usd", None),  # nothing of it in the file
    ],
)
def test_a_field_is_found_at_the_nearest_line_that_names_it(field: str, line: int | None) -> None:
    assert field_line(AWKWARD, field) == line


def test_a_spec_error_names_the_file_line_and_field(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "x"\n[[datasets]]\npath = "builtin:forcebench-demo"\n\n[[judges]]\n'
        'models = ["openai/gpt-4o-mini"]\nprompts = ["generic-support@1"]\nrpm = 0\n',
        encoding="utf-8",
    )
    code, _, err = invoke(["run", str(spec), "--output-dir", str(tmp_path / "out")])
    assert code == 2
    assert err.strip() == (
        f"error: {spec}:8: field 'judges[0].rpm': Input should be greater than or equal to 1"
    )
