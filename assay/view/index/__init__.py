"""Run discovery and the judgments table of `assay view`.

`ViewIndex(paths)` lists the run directories under `paths` (`runs()`) and answers
`JudgmentQuery`s over a run's judgments (`query()`): every record file's latest line per
key, one row each, with its gold and outcome, filtered, sorted and paged in DuckDB. A run
still being written is followed: each query first reads the lines appended since the
last one (a stat per file when nothing changed), and `version()` tells a page whether
to reload. DuckDB is imported here only: the rest of assay never loads it.
"""

from __future__ import annotations

from assay.view.index._index import ViewIndex
from assay.view.index._models import (
    SORTS,
    Facets,
    JudgmentPage,
    JudgmentQuery,
    JudgmentRow,
    RunSummary,
)
from assay.view.index._runs import discover, run_id, writer_active

__all__ = [
    "SORTS",
    "Facets",
    "JudgmentPage",
    "JudgmentQuery",
    "JudgmentRow",
    "RunSummary",
    "ViewIndex",
    "discover",
    "run_id",
    "writer_active",
]
