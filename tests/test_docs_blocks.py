"""The docs/**/*.md pages are run like the README (tests/test_readme.py's machinery): each
page in its own sandbox, its ```bash, ```python, ```toml, ```prompt blocks run in order
and each ```text block checked against the output of the command before it. A block
that cannot run here (it needs the network or a local model, or is a sketch with `...`)
says so with `<!-- not run: why -->` on the line before its fence; plain ``` fences,
```json and ```jsonc are illustrations (formulas, shapes of records), not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from _readme_fork import ForkServer
from test_readme import _env, _run_blocks, link_repository, readme_blocks

DOCS = Path(__file__).resolve().parents[1] / "docs"
RUN = {"bash", "python", "toml", "text", "prompt"}
SHOWN = {"", "json", "jsonc"}
PAGES = sorted(DOCS.rglob("*.md"))


def page_id(page: Path) -> str:
    """The page's path under docs/ (`how-to/resume.md`): `-k` selects pages by it."""
    return page.relative_to(DOCS).as_posix()


def test_docs_blocks_are_of_known_kinds() -> None:
    for page in PAGES:
        kinds = {b.lang for b in readme_blocks(page.read_text(encoding="utf-8"))}
        assert kinds <= RUN | SHOWN, (page_id(page), kinds - RUN - SHOWN)


@pytest.mark.parametrize(
    "page",
    [
        p
        for p in PAGES
        if any(b.lang in RUN and not b.not_run for b in readme_blocks(p.read_text("utf-8")))
    ],
    ids=page_id,
)
def test_every_docs_block_runs(page: Path, tmp_path: Path) -> None:
    box = link_repository(tmp_path)
    env = _env(box)
    forks = ForkServer(box, env)
    try:
        blocks = [b for b in readme_blocks(page.read_text(encoding="utf-8")) if b.lang in RUN]
        _run_blocks(blocks, box, env, {}, forks, page=f"docs/{page_id(page)}")
    finally:
        forks.close()
