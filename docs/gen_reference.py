"""Write the generated reference pages under docs/reference/ from the code alone.

    python docs/gen_reference.py          # (re)write the pages
    python docs/gen_reference.py --check  # exit 1, naming them, if any page is stale

The spec, CLI and file-format references come from the pydantic models and the typer
app, the Python API page holds mkdocstrings directives for the public modules: one
source of truth, and tests/test_docs_reference.py fails when a page no longer matches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from _reference_gen.api import api_page  # noqa: E402
from _reference_gen.cli import cli_page  # noqa: E402
from _reference_gen.formats import formats_page  # noqa: E402
from _reference_gen.spec import spec_page  # noqa: E402

PAGES: dict[str, Callable[[], str]] = {
    "reference/spec.md": spec_page,
    "reference/cli.md": cli_page,
    "reference/file-formats.md": formats_page,
    "reference/python-api.md": api_page,
}


def pages() -> dict[str, str]:
    """Each generated page's path (under docs/) and its text."""
    return {name: build() for name, build in PAGES.items()}


def stale(docs_dir: Path = DOCS) -> list[str]:
    """The pages whose file differs from what the code generates now."""
    out = []
    for name, text in pages().items():
        path = docs_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(name)
    return out


def main(argv: list[str]) -> int:
    if "--check" in argv:
        old = stale()
        for name in old:
            print(f"docs/{name} is stale: run python docs/gen_reference.py", file=sys.stderr)
        return 1 if old else 0
    for name, text in pages().items():
        path = DOCS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote docs/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
