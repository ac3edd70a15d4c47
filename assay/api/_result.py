"""A run directory seen from Python: its manifest, status, metrics and records as tables.

`RunResult` keeps nothing but the path: every call reads the run directory again, so a
result opened while a run is still writing (or after `assay reparse`) shows what is on
disk now. Record tables hold the latest line per key, the records the metrics count.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from assay.core.outcomes import Usage
from assay.core.records import (
    ClaimRecord,
    ItemJudgmentRecord,
    ItemRecord,
    JudgmentRecord,
    SentenceRecord,
    VerificationRecord,
)
from assay.core.rundir import (
    CLAIMS_FILE,
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
)
from assay.runs import JUDGMENTS_FILE
from assay.runs.store._rundir import read_run_manifest, read_run_metrics

if TYPE_CHECKING:
    import pandas as pd

USAGE_PREFIX = "usage_"


def record_columns(model: type[BaseModel]) -> list[str]:
    """The record's own fields first (what was judged, the outcome), then the shared
    provenance and accounting fields, `usage` spread into `usage_*` columns."""
    own = vars(model).get("__annotations__", {})
    names = sorted(model.model_fields, key=lambda name: name not in own)  # stable
    columns: list[str] = []
    for name in names:
        if name == "usage":
            columns += [USAGE_PREFIX + part for part in Usage.model_fields]
        else:
            columns.append(name)
    return columns


def _row(record: BaseModel) -> dict[str, Any]:
    row = record.model_dump(mode="json")
    usage = row.pop("usage", None)
    if isinstance(usage, dict):
        row.update({USAGE_PREFIX + key: value for key, value in usage.items()})
    return row


def records_frame(records: Iterable[BaseModel], model: type[BaseModel]) -> pd.DataFrame:
    """One row per record; an empty table still has every column."""
    import pandas as pd

    frame = pd.DataFrame([_row(r) for r in records], columns=record_columns(model))
    if "recorded_at" in frame.columns:
        frame["recorded_at"] = pd.to_datetime(frame["recorded_at"], utc=True, format="ISO8601")
    return frame


def _latest(path: Path, model: type[Any]) -> list[Any]:
    """A later line for the same key supersedes an earlier one (a retried error)."""
    return list({record.key: record for record in iter_jsonl(path, model)}.values())


class RunResult:
    """A run directory written by `assay run`, `assay.run(...)` or `assay import-medscore`."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        read_run_manifest(self.run_dir)  # fail now, naming the path, if it is no run

    def __repr__(self) -> str:
        return f"RunResult({str(self.run_dir)!r}, status={self.status!r})"

    @property
    def manifest(self) -> dict[str, Any]:
        """manifest.json as written (redacted): spec, judges' describe(), counts, sessions."""
        return read_run_manifest(self.run_dir)

    @property
    def status(self) -> str:
        """complete, running, interrupted, budget_exhausted or failed."""
        return str(self.manifest.get("status"))

    @property
    def message(self) -> str | None:
        """Why a run is not complete (the failure policy, an unreachable endpoint...)."""
        message = self.manifest.get("message")
        return None if message is None else str(message)

    def metrics(self) -> pd.DataFrame:
        """Every metric as the tidy long table `assay report -f csv` writes."""
        from assay.report import tidy_frame

        return tidy_frame(read_run_metrics(self.run_dir))

    def judgments(self) -> pd.DataFrame:
        """ForceBench judgments: one row per (dataset, pair, member, judge)."""
        return records_frame(_latest(self.run_dir / JUDGMENTS_FILE, JudgmentRecord), JudgmentRecord)

    def items(self) -> pd.DataFrame:
        """Items datasets: one row per item with its gold and raters' labels."""
        return records_frame(_latest(self.run_dir / ITEMS_FILE, ItemRecord), ItemRecord)

    def item_judgments(self) -> pd.DataFrame:
        """Items datasets: one row per (dataset, item, order, judge) judgment."""
        path = self.run_dir / ITEM_JUDGMENTS_FILE
        return records_frame(_latest(path, ItemJudgmentRecord), ItemJudgmentRecord)

    def sentences(self) -> pd.DataFrame:
        """Factuality: how each answer sentence was decomposed."""
        path = self.run_dir / SENTENCES_FILE
        return records_frame(_latest(path, SentenceRecord), SentenceRecord)

    def claims(self) -> pd.DataFrame:
        """Factuality: one row per claim the decomposer produced."""
        return records_frame(iter_jsonl(self.run_dir / CLAIMS_FILE, ClaimRecord), ClaimRecord)

    def verifications(self) -> pd.DataFrame:
        """Factuality: one row per (claim, verifier) verdict."""
        path = self.run_dir / VERIFICATIONS_FILE
        return records_frame(_latest(path, VerificationRecord), VerificationRecord)


def open_run(run_dir: str | Path) -> RunResult:
    """An existing run directory as a `RunResult` (nothing is run or recomputed)."""
    return RunResult(run_dir)
