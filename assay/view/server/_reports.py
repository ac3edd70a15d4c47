"""The run report and the comparison, as `assay report` and `assay compare` make them.

The viewer computes no metric itself: the run page is the HTML report's content
(`HtmlFormat`, the same renderer as `assay report -f html`) and the compare page is
`compare_runs` rendered by `comparison_section`, so every number matches the CLI. Both
are cached per run until a file they read changes, because the report's comparison
draws bootstrap resamples.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from assay.core.rundir import MANIFEST_FILE, METRICS_FILE
from assay.redaction import redact

if TYPE_CHECKING:  # the comparison code (pandas, scipy) loads when a page first needs it
    from assay.compare import ComparisonReport

WATCHED = (MANIFEST_FILE, METRICS_FILE, "labels.jsonl")
_cache: dict[tuple[object, ...], Markup] = {}
_compared: dict[tuple[object, ...], ComparisonReport] = {}
_lock = threading.Lock()


def _stamp(run_dir: Path) -> tuple[object, ...]:
    """What the cached page depends on: the run and its files' sizes and times."""
    parts: list[object] = [str(run_dir)]
    for name in WATCHED:
        path = run_dir / name
        stat = path.stat() if path.is_file() else None
        parts.append(None if stat is None else (stat.st_size, stat.st_mtime_ns))
    policies = run_dir / "policies"
    parts.append(policies.stat().st_mtime_ns if policies.is_dir() else None)
    return tuple(parts)


def _main_part(html: str) -> str:
    """The report page's `<main>` content without its footer (the viewer has its own)."""
    start = html.find("<main>")
    end = html.rfind("<footer>")
    if end < 0:
        end = html.rfind("</main>")
    return html[start + len("<main>") : end] if 0 <= start < end else html


def run_report_html(run_dir: Path) -> Markup:
    """The run report's content; AssayError when the run has no metrics yet."""
    key = (*_stamp(run_dir), *_records_stamp(run_dir))  # the report checks records' digests
    with _lock:
        if key in _cache:
            return _cache[key]
    from assay.report import RunReport, resolve_format
    from assay.runs.store._rundir import read_run_manifest, read_run_metrics

    manifest = redact(read_run_manifest(run_dir))
    report = RunReport(run_dir, manifest, read_run_metrics(run_dir))
    html = Markup(_main_part(str(resolve_format("html")(report))))  # autoescaped by the report
    with _lock:
        if len(_cache) > 64:
            _cache.clear()
        _cache[key] = html
    return html


def comparison(run_dirs: Sequence[Path], gold: str = "dataset") -> ComparisonReport:
    """`assay compare RUN... --gold GOLD` with its other defaults; AssayError when there is
    nothing to compare. Cached until a compared run's files change (its bootstrap takes
    seconds on big runs); the labels file is one of them."""
    from assay.compare import compare_runs

    key = (gold, *(_stamp(d) for d in run_dirs), *(_records_stamp(d) for d in run_dirs))
    with _lock:
        if key in _compared:
            return _compared[key]
    report = compare_runs(list(run_dirs), gold=gold)
    with _lock:
        if len(_compared) > 32:
            _compared.clear()
        _compared[key] = report
    return report


def _records_stamp(run_dir: Path) -> tuple[object, ...]:
    """Sizes and times of the record files a comparison reads (a running run grows them)."""
    return tuple(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(run_dir.glob("*.jsonl"))
    )


def comparison_html(report: ComparisonReport) -> Markup:
    """The comparison's content, as the run report's "Judges compared" section shows it."""
    from assay.report import comparison_section

    return comparison_section(report, title="Judges compared")


def differ_pairs(report: ComparisonReport, run_ids: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each pair of judges the comparison names that belong to one run, as
    (run id, judge A, judge B) with the judge ids the run's records use.

    `run_ids` maps a compared run's directory (as `ComparedRun.run_dir` gives it) to the
    viewer's run id. Judge ids shown as `<run name>/<judge>` lose the prefix."""
    seen: list[tuple[str, str, str]] = []
    for c in report.comparisons:
        for run in report.runs:
            if c.judge_a in run.judges and c.judge_b in run.judges and run.run_dir in run_ids:
                a, b = (j.removeprefix(f"{run.name}/") for j in (c.judge_a, c.judge_b))
                pair = (run_ids[run.run_dir], a, b)
                if pair not in seen and a != b:
                    seen.append(pair)
                break
    return seen
