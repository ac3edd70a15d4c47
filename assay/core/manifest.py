"""The run manifest (`manifest.json`): what ran, with what, and how far it got.

One typed model for every writer (a run, an import, reparse, recompute). Every field is
optional and unknown fields are kept, so a manifest written by an older version loads,
and `dump()` writes back only the fields that were read or set, in the order below.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CacheInfo",
    "DatasetInfo",
    "FactualitySection",
    "GateSection",
    "Manifest",
    "Reparse",
    "Session",
]

MANIFEST_VERSION = 1


class _Open(BaseModel):
    """Keeps fields this version does not know, so a rewrite never drops them."""

    model_config = ConfigDict(extra="allow")


class Session(_Open):
    """One `assay run` invocation on the run directory (a resume adds one)."""

    started_at: str | None = None
    todo: int | None = Field(default=None, description="Work items this session planned to run.")
    resumed: bool | None = None
    ended_at: str | None = None
    written: int | None = Field(default=None, description="Judgments written this session.")
    status: str | None = None


class DatasetInfo(_Open):
    name: str
    path: str | None = None
    sha256: str | None = None
    format: str | None = None
    rows: int | None = None


class CacheInfo(_Open):
    enabled: bool | None = None
    refresh: bool | None = None
    dir: str | None = Field(default=None, description="The cache directory actually used.")


class FactualitySection(_Open):
    """The decompose → verify pipeline: its components (each `describe()` plus `stats`)."""

    datasets: list[DatasetInfo] = Field(default_factory=list)
    decomposer: dict[str, Any] = Field(default_factory=dict)
    verifiers: list[dict[str, Any]] = Field(default_factory=list)
    length_penalty: Any = None
    planned_verifications: int | None = None
    recorded_verifications: int | None = None


class GateSection(_Open):
    """The gate stage: its reranker and retriever (each `describe()`), settings, and
    counters derived from `gates.jsonl`."""

    id: str | None = None
    reranker: dict[str, Any] = Field(default_factory=dict)
    retriever: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    planned_questions: int | None = None
    recorded_questions: int | None = None
    stats: dict[str, Any] = Field(default_factory=dict)


class Reparse(_Open):
    from_parser: str | None = None
    to_parser: str | None = None
    changes: dict[str, int] = Field(default_factory=dict)
    backup: str | None = None


class Manifest(_Open):
    """The whole manifest. Judges are their own `describe()` plus `id` and `stats`."""

    manifest_version: int = MANIFEST_VERSION
    run_id: str | None = None
    name: str | None = None
    created_at: str | None = None
    sessions: list[Session] = Field(default_factory=list)
    environment: dict[str, Any] = Field(default_factory=dict)
    imported_from: dict[str, Any] | None = None
    spec_path: str | None = None
    spec_sha256: str | None = None
    spec: dict[str, Any] = Field(default_factory=dict)
    datasets: list[DatasetInfo] = Field(default_factory=list)
    parser_version: str | None = None
    cache: CacheInfo | None = None
    failure_policy: dict[str, Any] | None = None
    outputs: dict[str, str] = Field(default_factory=dict)
    status: str | None = Field(default=None, description="running|complete|failed|interrupted")
    message: str | None = None
    updated_at: str | None = None
    planned_judgments: int | None = None
    recorded_judgments: int | None = None
    judges: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    factuality: FactualitySection | None = None
    gate: GateSection | None = None
    finished_at: str | None = None
    reparses: list[Reparse] = Field(default_factory=list)
    incomplete: list[str] | None = None
    redacted_fields: list[str] = Field(default_factory=list)

    def dump(self) -> dict[str, Any]:
        """The JSON object to write: the fields read or set, unknown ones kept."""
        return self.model_dump(mode="json", exclude_unset=True)
