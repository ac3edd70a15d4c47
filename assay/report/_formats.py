"""Report formats: what `assay report -f NAME` writes, each an entry of REPORT_FORMATS.

A format is any callable `(RunReport) -> str` (the `ReportFormat` protocol). Register one
from a plugin with ``@REPORT_FORMATS.register("name", description=...)``; a format whose
text belongs in a file rather than on stdout sets ``default_file`` (html:
``report.html``), written into the run directory unless `-o` names another file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, cast, runtime_checkable

import pandas as pd
from markupsafe import Markup

from assay._table import Grid, render_markdown, render_plain
from assay.compare import ComparisonReport, compare_runs
from assay.core.registry import REPORT_FORMATS
from assay.core.rundir import DIGESTS_KEY, JUDGMENTS_FILE, latest_records
from assay.errors import AssayError
from assay.policies.report._data import PolicyReport, policy_reports
from assay.report import _compare_formats as compare_formats
from assay.report._compare_formats import CompareFormat
from assay.report._compare_html import comparison_section
from assay.report._digests import RecordsCheck, check_records
from assay.report._export import tidy_csv
from assay.report._html import render_html_report
from assay.report._policies_html import policies_section
from assay.report._run_compare import with_run_estimates
from assay.report._views import report_grids
from assay.report._views_policies import policy_grids


@dataclass(frozen=True)
class RunReport:
    """A run as every report format sees it: its directory, manifest and metrics."""

    run_dir: Path
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    label: str = ""  # how table titles name the run (default: the directory)
    detail: bool = False  # tables: also per-axis and per-severity rows
    gold: str = "dataset"  # where items' gold comes from (`assay.adjudication`)
    notes: tuple[str, ...] = ()  # lines every format shows (where the gold came from)
    verification: dict[str, Any] | None = None  # `assay verify`'s result (report --verify)

    @property
    def title(self) -> str:
        return self.label or str(self.run_dir)

    @cached_property
    def records(self) -> RecordsCheck:
        """The record files' digests, checked against those metrics.json recorded."""
        return check_records(self.run_dir, self.metrics)

    @cached_property
    def policies(self) -> list[PolicyReport]:
        """The policies applied under `policies/` (none: no policies section), with
        their risk–coverage curves and sample renderings (html, json)."""
        return policy_reports(self.run_dir)

    @cached_property
    def policy_tables(self) -> list[PolicyReport]:
        """The same without curves and samples: what the tables and the CSV show."""
        return policy_reports(self.run_dir, charts=False)

    @property
    def stale_line(self) -> str | None:
        """The one-line stale warning when a record file changed after metrics.json."""
        return self.records.message if self.records.stale else None

    @property
    def warnings(self) -> list[str]:
        """Lines a reader must see before the tables: why the run did not complete (its
        tables are what was recorded), and the stale warning."""
        status, message = self.manifest.get("status"), self.manifest.get("message")
        lines = [f"{status}: {message}"] if status != "complete" and message else []
        return lines + ([self.stale_line] if self.stale_line else []) + list(self.notes)

    def grids(self) -> list[Grid]:
        """The run's tables, then the policies tables."""
        grids = report_grids(self.metrics, self.title, detail=self.detail)
        return grids + policy_grids(self.policy_tables, self.title)


@runtime_checkable
class ReportFormat(Protocol):
    """`(report) -> text`; optional attributes ``default_file`` (see the module doc) and
    ``compare`` (`ComparisonReport -> text`: the format also serves `assay compare`)."""

    def __call__(self, report: RunReport) -> str: ...


F = TypeVar("F")


def compares_with(render: CompareFormat) -> Callable[[F], F]:
    """Decorator: the format also renders `assay compare` reports, with `render`."""

    def attach(fmt: F) -> F:
        setattr(fmt, "compare", render)  # noqa: B010 (a function's attribute)
        return fmt

    return attach


def _compares(fmt: object) -> bool:
    return callable(getattr(fmt, "compare", None))


def comparison_renderer(name: str) -> CompareFormat:
    """How format `name` renders a comparison; a typo, or a format that renders run
    reports only, is a one-line error naming the formats that compare."""
    fmt = REPORT_FORMATS.get(name) if name in REPORT_FORMATS else None
    render = getattr(fmt, "compare", None)
    if callable(render):
        return cast(CompareFormat, render)
    able = [
        n
        for n in REPORT_FORMATS.names()
        if callable(getattr(REPORT_FORMATS.get(n), "compare", None))
    ]
    why = "" if fmt is None else " renders run reports only"
    raise AssayError(f"--format {name!r}{why}: use one of {', '.join(able)}")


def status_line(manifest: dict[str, Any]) -> str:
    """`run NAME · status S · recorded/planned judgments · verifications`."""
    line = f"run {manifest.get('name')} · status {manifest.get('status') or 'unknown'}"
    if manifest.get("planned_judgments"):
        line += (
            f" · {manifest.get('recorded_judgments')}/{manifest.get('planned_judgments')} judgments"
        )
    fact = manifest.get("factuality") or {}
    if fact:
        line += (
            f" · {fact.get('recorded_verifications')}/{fact.get('planned_verifications')}"
            " verifications"
        )
    return line


@REPORT_FORMATS.register("table", description="plain-text tables (rich tables on a terminal)")
@compares_with(compare_formats.table_format)
def table_format(report: RunReport) -> str:
    plain = [render_plain(g) for g in report.grids()]
    return "\n".join([head_lines(report), *plain])


def head_lines(report: RunReport) -> str:
    """The status line, then the report's warnings (`RunReport.warnings`), then a blank
    line."""
    return "\n".join([status_line(report.manifest), *report.warnings]) + "\n"


@REPORT_FORMATS.register("json", description="metrics.json, with the record files checked")
@compares_with(compare_formats.json_format)
def json_format(report: RunReport) -> str:
    """metrics.json as is, except `records_sha256`: each file's recorded and current
    digest; and `policies`, one object per applied policy, when any was applied."""
    data = {**report.metrics, DIGESTS_KEY: report.records.as_json()}
    if report.policies:
        data["policies"] = [p.model_dump(mode="json") for p in report.policies]
    if report.notes:
        data["notes"] = list(report.notes)
    if report.verification is not None:
        data["verification"] = report.verification
    return json.dumps(data, indent=2) + "\n"


@REPORT_FORMATS.register("csv", description="every metric as one tidy long table")
@compares_with(compare_formats.csv_format)
def csv_format(report: RunReport) -> str:
    stale = [f.file for f in report.records.files if f.stale]
    return tidy_csv(report.metrics, report.policy_tables, stale=stale)


@REPORT_FORMATS.register("markdown", description="the report's tables as markdown")
@compares_with(compare_formats.markdown_format)
def markdown_format(report: RunReport) -> str:
    warnings = [f"> **{line}**\n" for line in report.warnings]
    return "\n".join([*warnings, *(render_markdown(g) for g in report.grids())])


def _judgment_statuses(report: RunReport) -> pd.DataFrame | None:
    """Statuses from judgments.jsonl when the manifest's per-judge stats may lag them."""
    judges = report.manifest.get("judges") or []
    stale = report.manifest.get("status") != "complete" or any("stats" not in j for j in judges)
    path = report.run_dir / JUDGMENTS_FILE
    if not stale or not path.exists():
        return None
    latest = latest_records(path).values()
    return pd.DataFrame(
        {"judge_id": [r.judge_id for r in latest], "status": [r.status for r in latest]}
    )


class HtmlFormat:
    """one self-contained HTML page with charts (RUN_DIR/report.html)"""

    default_file: ClassVar[str] = "report.html"
    compare = staticmethod(compare_formats.html_format)

    def __call__(self, report: RunReport) -> str:
        notes = [*(report.manifest.get("warnings") or []), *report.notes]
        return render_html_report(
            {**report.manifest, "warnings": notes} if report.notes else report.manifest,
            report.metrics,
            _judgment_statuses(report),
            report.records,
            comparison=run_comparison(report),
            policies=policies_section(report.policies),
            verification=report.verification,
        )


def run_compared(report: RunReport) -> ComparisonReport | None:
    """The judges (or verifiers) of a run compared, on the run's own bootstrap settings,
    each judge's own value and CI the summary's (`_run_compare`); None when there is
    nothing to compare."""
    spec = report.manifest.get("spec") or {}
    n_boot = int(spec.get("bootstrap", 1000) or 1000)
    try:
        compared = compare_runs(
            [report.run_dir], n_boot=n_boot, seed=int(spec.get("seed", 0)), gold=report.gold
        )
    except AssayError:  # one judge, or no metric two judges share
        return None
    if not compared.comparisons:
        return None
    return with_run_estimates(compared, report.metrics)


def run_comparison(report: RunReport) -> Markup | None:
    """The comparison section of the run's HTML page (see `run_compared`)."""
    compared = run_compared(report)
    return None if compared is None else comparison_section(compared, title="Judges compared")


REPORT_FORMATS.add("html", HtmlFormat(), description=HtmlFormat.__doc__ or "")


def default_file(fmt: object) -> str | None:
    """The file name a format writes into the run directory when `-o` is not given."""
    name = getattr(fmt, "default_file", None)
    return name if isinstance(name, str) and name else None


def resolve_format(name: str) -> ReportFormat:
    """The format registered as `name`; an unknown name is a one-line error listing them."""
    if name not in REPORT_FORMATS:
        raise AssayError(f"--format {name!r}: use one of {', '.join(REPORT_FORMATS.names())}")
    fmt: ReportFormat = REPORT_FORMATS.get(name)
    return fmt


def render_report(name: str, report: RunReport) -> str:
    """The report in format `name` as text (what `-o FILE` would hold)."""
    return resolve_format(name)(report)
