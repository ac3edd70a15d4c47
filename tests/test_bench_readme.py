"""The benchmark figures (docs/benchmarks.md, benchmarks/README.md) are written by the
benchmark scripts, never by hand.

benchmarks/_readme_blocks.py rewrites one marked block per script run; these tests pin that
it touches nothing outside its block, is idempotent, refuses a missing, duplicated or
reversed marker with one line, and that every block in those pages belongs to a script that
exists, writes it with `--update-readme`, and says when, where and how it was measured.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _readme_blocks as blocks  # noqa: E402

DOC = """# Title

Prose with no figures.

<!-- bench:alpha -->
old alpha
<!-- /bench:alpha -->

Between the blocks.

<!-- bench:beta -->
old beta
<!-- /bench:beta -->
tail
"""


def test_a_block_is_rewritten_alone_and_idempotently() -> None:
    once = blocks.replace_block(DOC, "alpha", "new alpha\n\n| a | b |")
    assert "old alpha" not in once and "new alpha\n\n| a | b |\n<!-- /bench:alpha -->" in once
    untouched = [DOC.split("<!-- bench:alpha -->")[0], DOC.split("<!-- /bench:alpha -->")[1]]
    assert once.startswith(untouched[0]) and once.endswith(untouched[1])
    assert blocks.replace_block(once, "alpha", "new alpha\n\n| a | b |") == once
    back = blocks.replace_block(once, "alpha", "old alpha")
    assert back == DOC


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (DOC.replace("<!-- bench:alpha -->\n", ""), "found 0 and 1"),
        (DOC + "<!-- bench:alpha -->\n", "found 2 and 1"),
        (DOC.replace("<!-- /bench:alpha -->", ""), "found 1 and 0"),
    ],
)
def test_a_missing_or_duplicated_marker_is_refused_in_one_line(text: str, found: str) -> None:
    with pytest.raises(blocks.MarkerError) as err:
        blocks.replace_block(text, "alpha", "x", where="README.md")
    message = str(err.value)
    assert "\n" not in message and message.startswith("README.md: ") and found in message


def test_a_closing_marker_before_its_opening_marker_is_refused() -> None:
    reversed_doc = "<!-- /bench:alpha -->\ntext\n<!-- bench:alpha -->\n"
    with pytest.raises(blocks.MarkerError, match="comes before"):
        blocks.replace_block(reversed_doc, "alpha", "x")


def test_both_readmes_are_checked_before_either_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top, bench = tmp_path / "README.md", tmp_path / "bench.md"
    top.write_text(DOC, encoding="utf-8")
    bench.write_text(DOC.replace("beta", "gamma"), encoding="utf-8")
    run = blocks.Measurement.of_this_run("bench_x.py", ["--n", "2", "--update-readme"])
    assert blocks.update_from_cli("beta", run, "figures", paths=(top, bench)) == 2
    assert top.read_text(encoding="utf-8") == DOC  # nothing written
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {bench}: expected one")

    assert blocks.update_from_cli("alpha", run, "figures", "details", (top, bench)) == 0
    top_block = top.read_text(encoding="utf-8").split("<!-- bench:alpha -->")[1]
    bench_block = bench.read_text(encoding="utf-8").split("<!-- bench:alpha -->")[1]
    assert "figures" in top_block and "details" not in top_block
    assert "figures\n\ndetails\n<!-- /bench:alpha -->" in bench_block
    assert "`python benchmarks/bench_x.py --n 2 --update-readme`" in top_block


def test_the_header_says_when_on_what_and_by_which_command() -> None:
    run = blocks.Measurement.of_this_run("bench_x.py", ["--label", "two words"])
    header = run.header()
    assert f"{run.started:%Y-%m-%d %H:%M} UTC" in header
    assert f"with {run.cpus} CPUs" in header and run.cpus >= 1
    assert "python benchmarks/bench_x.py --label 'two words'" in header
    assert re.search(r"load average 1/5/15 min: [\d.]+ / [\d.]+ / [\d.]+ before", header)


def test_console_output_becomes_an_indented_block_that_the_readme_test_does_not_run(
    tmp_path: Path,
) -> None:
    text = "phase   wall s\n\ncold     1.00"
    assert blocks.preformatted(text) == "    phase   wall s\n\n    cold     1.00"
    readme = tmp_path / "README.md"
    readme.write_text(DOC, encoding="utf-8")
    run = blocks.Measurement.of_this_run("bench_x.py", [])
    blocks.update_readmes("beta", run, blocks.preformatted(text), paths=(readme,))
    written = readme.read_text(encoding="utf-8")
    assert ":\n\n    phase   wall s\n\n    cold     1.00\n<!-- /bench:beta -->" in written


def _sources_of(script: Path) -> str:
    """The script and the benchmarks/_*.py helpers it imports (where its blocks are named)."""
    text = script.read_text(encoding="utf-8")
    helpers = re.findall(r"^\s*from (_\w+) import", text, flags=re.MULTILINE)
    extra = [ROOT / "benchmarks" / f"{h}.py" for h in helpers]
    return text + "".join(p.read_text(encoding="utf-8") for p in extra if p.exists())


@pytest.mark.parametrize("readme", ["docs/benchmarks.md", "benchmarks/README.md"])
def test_every_block_belongs_to_a_script_that_writes_it(readme: str) -> None:
    text = (ROOT / readme).read_text(encoding="utf-8")
    names = blocks.block_names(text)
    assert names, f"{readme} has no benchmark blocks"
    for name in names:
        start, end = blocks.markers(name)
        assert text.count(start) == 1 and text.count(end) == 1, f"{readme}: {name}"
        script = ROOT / blocks.script_for(name)
        assert script.is_file(), f"{readme}: block {name!r} names missing {script}"
        source = _sources_of(script)
        assert '"--update-readme"' in source, f"{script.name} has no --update-readme"
        assert f'"{name}"' in source, f"{script.name} never writes block {name!r}"
        body = text.split(start)[1].split(end)[0]
        assert f"benchmarks/{script.name}" in body, f"{readme}: block {name!r}"


def test_both_readmes_hold_the_same_blocks() -> None:
    top = blocks.block_names((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8"))
    bench = blocks.block_names((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8"))
    assert sorted(top) == sorted(bench)
