"""The Jinja environment of the HTML report: package templates, autoescaping, filters."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined

from assay._values import FILTERS


def _finalize(value: object) -> object:
    """`{{ none }}` prints nothing (a missing manifest field), not the word "None"."""
    return "" if value is None else value


@cache
def environment() -> Environment:
    """Templates from `assay/report/templates`; every `{{ value }}` is HTML-escaped."""
    env = Environment(
        loader=PackageLoader("assay.report", "templates"),
        autoescape=True,
        extensions=["jinja2.ext.do"],
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters.update(f0=lambda v: f"{v:.0f}", f1=lambda v: f"{v:.1f}", f2=lambda v: f"{v:.2f}")
    return env
