"""Which record files a report's metrics came from, checked against the files on disk.

`metrics.json` records the sha256 of every record file it summarises (`records_sha256`).
A report recomputes those digests: a file edited, added or removed since means the
metrics are stale, and the report says so in one line naming the fix. Run directories
written before digests were recorded show the files' current digests, marked so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from assay.core.rundir import DIGESTS_KEY, record_digests

State = Literal["match", "changed", "missing", "added", "not recorded"]
STALE_STATES = frozenset({"changed", "missing", "added"})
STATE_TEXT = {
    "match": "matches metrics.json",
    "changed": "changed since metrics were computed",
    "missing": "gone since metrics were computed",
    "added": "written after metrics were computed",
    "not recorded": "not recorded by this run",
}


class RecordDigest(BaseModel):
    """One record file: the digest metrics.json names, the one on disk, and the verdict."""

    model_config = ConfigDict(frozen=True)

    file: str
    recorded: str | None
    on_disk: str | None
    state: State

    @property
    def stale(self) -> bool:
        return self.state in STALE_STATES

    @property
    def note(self) -> str:
        return STATE_TEXT[self.state]


class RecordsCheck(BaseModel):
    """The record files behind a run's metrics, and whether the metrics still describe them."""

    model_config = ConfigDict(frozen=True)

    run_dir: str
    recorded: bool
    files: tuple[RecordDigest, ...]

    @property
    def stale(self) -> bool:
        return any(f.stale for f in self.files)

    @property
    def message(self) -> str:
        """One line: stale (and the fix), verified, or digests not recorded."""
        changed = [f.file for f in self.files if f.stale]
        if changed:
            return (
                f"stale: {', '.join(changed)} changed since metrics.json was computed; "
                f"run `assay recompute {self.run_dir}`"
            )
        if not self.recorded:
            return "record digests not recorded by this run (written before assay recorded them)"
        return "metrics.json matches the record files on disk (sha256)"

    def as_json(self) -> dict[str, Any]:
        """What `assay report -f json` shows under `records_sha256`."""
        return {
            "stale": self.stale,
            "message": self.message,
            "files": {
                f.file: {"recorded": f.recorded, "on_disk": f.on_disk, "state": f.state}
                for f in self.files
            },
        }


def _state(recorded: Mapping[str, Any] | None, name: str, on_disk: str | None) -> State:
    if recorded is None:
        return "not recorded"
    if name not in recorded:
        return "added"
    if on_disk is None:
        return "missing"
    return "match" if recorded[name] == on_disk else "changed"


def check_records(run_dir: Path, metrics: Mapping[str, Any]) -> RecordsCheck:
    """Compare `metrics["records_sha256"]` with the record files in `run_dir` now."""
    raw = metrics.get(DIGESTS_KEY)
    recorded = {str(k): v for k, v in raw.items()} if isinstance(raw, Mapping) else None
    on_disk = record_digests(run_dir)
    names = [*on_disk, *(n for n in (recorded or {}) if n not in on_disk)]
    files = tuple(
        RecordDigest(
            file=name,
            recorded=None if recorded is None else recorded.get(name),
            on_disk=on_disk.get(name),
            state=_state(recorded, name, on_disk.get(name)),
        )
        for name in names
    )
    return RecordsCheck(run_dir=str(run_dir), recorded=recorded is not None, files=files)
