"""The one place that rewrites a benchmark's block in docs/benchmarks.md and
benchmarks/README.md.

Figures in the documentation are written by the benchmark that measured them, never typed by
hand: each script's `--update-readme` passes its measured figures here, and only the text
between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` changes. The block states when it
was measured, on what (CPU count, load average) and by which command, so a reader can
rerun it.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the documentation site's Benchmarks page first (figures only), then benchmarks/README.md
READMES = (ROOT / "docs" / "benchmarks.md", ROOT / "benchmarks" / "README.md")
NAME = re.compile(r"<!-- bench:(?P<name>[a-z0-9-]+) -->")


class MarkerError(ValueError):
    """A README lacks a block's markers, or holds them more than once or out of order."""


def markers(name: str) -> tuple[str, str]:
    """The opening and closing comment of block `name`."""
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def block_names(text: str) -> list[str]:
    """The names of the blocks a README holds, in document order."""
    return [m.group("name") for m in NAME.finditer(text)]


def script_for(name: str) -> str:
    """The script that writes block `name`: `rate-limits` is written by
    bench_rate_limits.py, and `nli-int8` (no bench_nli_int8.py) by bench_nli.py."""
    whole = f"benchmarks/bench_{name.replace('-', '_')}.py"
    if (ROOT / whole).is_file():
        return whole
    return f"benchmarks/bench_{name.split('-')[0]}.py"


def _load_now() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


@dataclass
class Measurement:
    """When and where a run measured, taken at its start; `finish()` adds the load after."""

    command: str
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    cpus: int = field(default_factory=lambda: os.cpu_count() or 0)
    load_before: str = field(default_factory=_load_now)
    load_after: str = ""

    @classmethod
    def of_this_run(cls, script: str, argv: Sequence[str] | None = None) -> Measurement:
        """The command as it was typed (`python benchmarks/<script> <args>`)."""
        args = list(sys.argv[1:] if argv is None else argv)
        return cls(command=shlex.join(["python", f"benchmarks/{script}", *args]))

    def header(self) -> str:
        self.load_after = self.load_after or _load_now()
        return (
            f"Measured {self.started:%Y-%m-%d %H:%M} UTC by `{self.command}` on a machine "
            f"with {self.cpus} CPUs (load average 1/5/15 min: {self.load_before} before, "
            f"{self.load_after} after); written by the script:"
        )


def replace_block(text: str, name: str, body: str, where: str = "README") -> str:
    """`text` with block `name`'s content replaced by `body`; nothing else changes."""
    start, end = markers(name)
    counts = (text.count(start), text.count(end))
    if counts != (1, 1):
        raise MarkerError(
            f"{where}: expected one {start} and one {end}, found {counts[0]} and {counts[1]}"
        )
    head, rest = text.split(start)
    if end not in rest:
        raise MarkerError(f"{where}: {end} comes before {start}")
    tail, inner = rest.split(end)[1], body.strip("\n")  # keep a code block's indentation
    return f"{head}{start}\n{inner}\n{end}{tail}"


def update_readmes(
    name: str,
    measurement: Measurement,
    figures: str,
    details: str = "",
    paths: Sequence[Path] = READMES,
) -> None:
    """Rewrite block `name` in every README with the measurement's header and `figures`;
    benchmarks/README.md (any path but the first) also gets `details`.

    Every README is checked before any is written, so a missing marker changes nothing.
    """
    head, figures, details = measurement.header(), figures.strip("\n"), details.strip("\n")
    bodies = [f"{head}\n\n{figures}", f"{head}\n\n{figures}\n\n{details}".rstrip("\n")]
    texts = {
        p: replace_block(p.read_text(encoding="utf-8"), name, bodies[min(i, 1)], str(p))
        for i, p in enumerate(paths)
    }
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")


def preformatted(text: str) -> str:
    """Console output as a markdown code block by indentation: README.md's fenced blocks
    are executed by tests/test_readme.py, indented ones are not."""
    return "\n".join(f"    {line}" if line.strip() else "" for line in text.splitlines())


def update_from_cli(
    name: str,
    measurement: Measurement,
    figures: str,
    details: str = "",
    paths: Sequence[Path] = READMES,
) -> int:
    """update_readmes for a script's `main`: a marker problem is one line, exit status 2."""
    try:
        update_readmes(name, measurement, figures, details, paths)
    except MarkerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
