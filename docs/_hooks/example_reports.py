"""An mkdocs hook: the HTML pages the tutorials show are made at build time, by running the
examples, never pasted.

Each entry of `REPORTS` runs an example spec into a temporary folder (offline: the examples
use deterministic judges) and renders one `assay` HTML page from it; the page joins the
site under `examples/`, where the tutorials link to it. A change in the code that changes
a report changes the page with the next build.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
REPORTS = {
    # site path: (example spec, the assay command that writes the page into OUT)
    "examples/demo-report.html": ("demo.toml", ["report", "RUN", "-f", "html", "-o", "OUT"]),
    "examples/compare-items-report.html": (
        "compare-items.toml",
        ["report", "RUN", "-f", "html", "-o", "OUT"],
    ),
    "examples/compare-items-comparison.html": (
        "compare-items.toml",
        ["compare", "RUN", "--reference", "baseline:token-overlap", "-f", "html", "-o", "OUT"],
    ),
}


def _assay(args: list[str], cwd: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"assay {' '.join(args)} failed: {done.stderr.strip()}")


def _page(spec: str, command: list[str], work: Path, name: str) -> bytes:
    """Run `spec` once per work folder, then write the page the command renders."""
    run = work / "runs" / Path(spec).stem
    if not run.is_dir():
        spec_path = str(ROOT / "examples" / spec)
        _assay(["run", spec_path, "--output-dir", str(run), "--no-progress", "--no-cache"], work)
    out = work / name
    _assay([str(run) if a == "RUN" else str(out) if a == "OUT" else a for a in command], work)
    return out.read_bytes()


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    with tempfile.TemporaryDirectory(prefix="assay-docs-") as tmp:
        work = Path(tmp)
        for site_path, (spec, command) in REPORTS.items():
            content = _page(spec, command, work, Path(site_path).name)
            files.append(File.generated(config, site_path, content=content))
    return files
