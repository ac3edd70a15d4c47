"""The README/docs block checker itself (fast; tests/test_readme.py runs the blocks).

A ```text block showing 2 of the 5 lines a command printed passed
silently. A text block is now the whole output unless `<!-- excerpt -->` says it is a
part; an excerpt's lines must keep the output's order."""

from __future__ import annotations

import pytest
from test_readme import Block, check_output, readme_blocks

OUTPUT = "prompt ok: judge one\nprompt ok: judge two\n\nspec.toml:   spec ok\n"


def _text(body: str, *, excerpt: bool = False) -> Block:
    return Block("text", body, 10, excerpt=excerpt)


def test_whole_output_passes_modulo_spacing_and_blank_lines() -> None:
    check_output(_text("prompt ok: judge one\nprompt ok:  judge two\nspec.toml: spec ok\n"), OUTPUT)


def test_part_of_the_output_fails_unless_marked_excerpt() -> None:
    part = "prompt ok: judge two\nspec.toml: spec ok\n"
    with pytest.raises(AssertionError, match="not the command's whole output"):
        check_output(_text(part), OUTPUT)
    check_output(_text(part, excerpt=True), OUTPUT)


def test_more_than_the_output_fails() -> None:
    with pytest.raises(AssertionError):
        check_output(_text(OUTPUT + "one line more\n"), OUTPUT)


def test_excerpt_lines_must_exist_and_keep_their_order() -> None:
    with pytest.raises(AssertionError, match="not in this order"):
        check_output(_text("spec.toml: spec ok\nprompt ok: judge one\n", excerpt=True), OUTPUT)
    with pytest.raises(AssertionError, match="docs/x.md:10"):
        check_output(_text("prompt ok: judge three\n", excerpt=True), OUTPUT, "docs/x.md")


def test_markers_are_read_from_the_line_before_the_fence() -> None:
    page = (
        "Some text.\n<!-- excerpt -->\n```text\na\n```\n\n```text\nb\n```\n"
        "<!-- not run: needs the network -->\n```bash\ngit clone x\n```\n"
        "<!-- not run: -->\n```bash\ny\n```\n"
    )
    blocks = readme_blocks(page)
    assert [(b.lang, b.excerpt, b.not_run) for b in blocks] == [
        ("text", True, False),
        ("text", False, False),
        ("bash", False, True),
        ("bash", False, False),  # a not-run marker must give its reason
    ]
