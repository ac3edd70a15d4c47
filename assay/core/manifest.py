"""The run manifest (`manifest.json`): what ran, with what, and how far it got.

One typed model for every writer (a run, an import, reparse, recompute). Every field is
optional and unknown fields are kept, so a manifest written by an older version loads,
and `dump()` writes back only the fields that were read or set, in the order below.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BudgetSection",
    "CacheInfo",
    "DatasetInfo",
    "FactualitySection",
    "GateSection",
    "InputFileInfo",
    "Manifest",
    "RateLimitInfo",
    "Reparse",
    "Session",
    "SpendInfo",
]

MANIFEST_VERSION = 1


class _Open(BaseModel):
    """Keeps fields this version does not know, so a rewrite never drops them."""

    model_config = ConfigDict(extra="allow")


class Session(_Open):
    """One `assay run` invocation on the run directory (a resume adds one)."""

    started_at: str | None = Field(default=None, description="When it started (ISO 8601, UTC).")
    todo: int | None = Field(default=None, description="Work items this session planned to run.")
    resumed: bool | None = Field(default=None, description="Whether it continued an earlier run.")
    ended_at: str | None = Field(default=None, description="When it ended (ISO 8601, UTC).")
    written: int | None = Field(default=None, description="Judgments written this session.")
    status: str | None = Field(default=None, description="How the session ended, as the run.")


class DatasetInfo(_Open):
    """One dataset the run read, identified by its content hash."""

    name: str = Field(description="The dataset's name in the spec and the records.")
    path: str | None = Field(default=None, description="The file it was read from.")
    sha256: str | None = Field(default=None, description="Hash of the file's bytes.")
    format: str | None = Field(default=None, description="The importer that read it.")
    rows: int | None = Field(default=None, description="Rows (pairs, items or answers) read.")
    snapshot: str | None = Field(
        default=None,
        description="With `bundle_data = true`: the copy of the file in the run directory, "
        "`snapshot/data/<sha256[:16]>-<file name>` (relative to it).",
    )


class InputFileInfo(_Open):
    """A file the run read besides its datasets and prompts (a retrieval corpus, an
    evidence file), named by the spec field that gave it; or a local model directory,
    recorded by path only (a directory is never hashed nor copied)."""

    field: str = Field(description="The spec field, e.g. `factuality.verifiers[0].corpus`.")
    path: str = Field(description="The file or directory as the run resolved it (absolute).")
    kind: str = Field(default="file", description="`file`, or `directory` (a model).")
    sha256: str | None = Field(default=None, description="Hash of the file's bytes.")
    snapshot: str | None = Field(
        default=None,
        description="With `bundle_data = true`: the copy in the run directory, "
        "`snapshot/data/<sha256[:16]>-<file name>` (relative to it).",
    )


class CacheInfo(_Open):
    """The response cache as the run used it."""

    enabled: bool | None = Field(default=None, description="False with --no-cache.")
    refresh: bool | None = Field(default=None, description="True with --refresh-cache.")
    dir: str | None = Field(default=None, description="The cache directory actually used.")


class FactualitySection(_Open):
    """The decompose → verify pipeline: its components (each `describe()` plus `stats`)."""

    datasets: list[DatasetInfo] = Field(
        default_factory=list, description="The answers datasets read."
    )
    decomposer: dict[str, Any] = Field(
        default_factory=dict, description="The decomposer's `describe()` and `stats`."
    )
    verifiers: list[dict[str, Any]] = Field(
        default_factory=list, description="Each verifier's `describe()`, `id` and `stats`."
    )
    length_penalty: Any = Field(default=None, description="The spec's `length_penalty`.")
    planned_verifications: int | None = Field(
        default=None, description="Claim-verifier pairs to verify."
    )
    recorded_verifications: int | None = Field(
        default=None, description="Verifications written so far."
    )


class GateSection(_Open):
    """The gate stage: its reranker and retriever (each `describe()`), settings, and
    counters derived from `gates.jsonl`."""

    id: str | None = Field(default=None, description="The gate_id of its records.")
    reranker: dict[str, Any] = Field(default_factory=dict, description="The reranker's describe().")
    retriever: dict[str, Any] = Field(
        default_factory=dict, description="The retriever's describe()."
    )
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The [gate] settings the scores depend on."
    )
    planned_questions: int | None = Field(default=None, description="Questions to score.")
    recorded_questions: int | None = Field(default=None, description="Gate records written.")
    stats: dict[str, Any] = Field(
        default_factory=dict, description="Counters derived from gates.jsonl."
    )


class Reparse(_Open):
    """One `assay reparse` of the run's raw outputs."""

    from_parser: str | None = Field(default=None, description="Parser version before.")
    to_parser: str | None = Field(default=None, description="Parser version after.")
    changes: dict[str, int] = Field(
        default_factory=dict, description="Records whose status changed, counted by change."
    )
    backup: str | None = Field(
        default=None, description="Where the old records were kept (the first file's copy)."
    )
    backups: list[str] = Field(
        default_factory=list,
        description="Every re-parsed file's copy (judgments, item judgments); a later "
        "reparse keeps the first.",
    )


class RerunSource(BaseModel):
    """What a re-run (`assay rerun`) was rebuilt from: `rerun_of` in the new run's manifest."""

    model_config = ConfigDict(frozen=True)

    run_id: str | None = Field(description="The original run's id.")
    run_dir: str = Field(description="The original run directory, as given.")
    manifest_sha256: str = Field(description="sha256 of its manifest.json when re-run.")
    spec_source: str = Field(
        description="The manifest's spec with spec_resolved's model settings, or spec alone."
    )
    data_changed: list[str] = Field(
        default_factory=list,
        description="Datasets re-run on bytes other than the recorded (--allow-data-change).",
    )
    data_from_snapshot: list[str] = Field(
        default_factory=list, description="Datasets read from the run directory's snapshot."
    )
    inputs_changed: list[str] = Field(
        default_factory=list,
        description="Spec fields of input files re-run on other bytes (--allow-data-change).",
    )
    inputs_from_snapshot: list[str] = Field(
        default_factory=list,
        description="Spec fields of input files read from the run directory's snapshot.",
    )


class SpendInfo(_Open):
    """One component's (judge, decomposer, verifier) spend over every session."""

    max_cost_usd: float | None = Field(default=None, description="Its own cap, if any.")
    spent_usd: float = Field(default=0.0, description="USD its sent requests cost.")
    requests: int = Field(default=0, description="HTTP requests it sent (retries included).")
    exhausted: bool = Field(
        default=False, description="Its cap refused a request in the latest session."
    )


class BudgetSection(_Open):
    """Spending caps in force and spend so far, every session counted (a resumed run
    starts from these figures)."""

    max_cost_usd: float | None = Field(
        default=None, description="The run's cap in USD (latest session)."
    )
    max_requests: int | None = Field(
        default=None, description="The run's cap on requests (latest session)."
    )
    spent_usd: float = Field(
        default=0.0,
        description="USD spent by requests sent, at the prices the caps use (a request "
        "cut off in flight counts at its worst case).",
    )
    requests: int = Field(default=0, description="HTTP requests sent (retries included).")
    stopped: str | None = Field(
        default=None, description="Why the run's cap stopped sending, if it did."
    )
    next_request_usd: float | None = Field(
        default=None,
        description="The worst case of the request the run's max_cost_usd refused: what a "
        "raised cap must leave room for beyond what was spent.",
    )
    components: dict[str, SpendInfo] = Field(
        default_factory=dict, description="Spend per judge, decomposer and verifier id."
    )


class RateLimitInfo(_Open):
    """One endpoint's rate limits in force and what the latest session met there."""

    endpoint: str = Field(description="api_base (credentials redacted), else the provider.")
    model: str = Field(description="The model id the limits are counted for.")
    rpm: int | None = Field(default=None, description="Requests per minute in force (None: none).")
    tpm: int | None = Field(default=None, description="Tokens per minute in force (None: none).")
    adaptive_concurrency: bool = Field(
        default=True, description="Whether requests in flight adapted to the provider (AIMD)."
    )
    max_concurrency: int = Field(description="Requests in flight allowed at most.")
    rate_limited: int = Field(
        default=0, description="429 answers seen this session (each was retried or recorded)."
    )
    lowest_concurrency: int = Field(
        description="The fewest requests in flight adaptive concurrency came down to."
    )


class Manifest(_Open):
    """The whole manifest. Judges are their own `describe()` plus `id` and `stats`."""

    manifest_version: int = Field(default=MANIFEST_VERSION, description="This layout's version.")
    run_id: str | None = Field(default=None, description="Unique id of the run directory.")
    name: str | None = Field(default=None, description="The spec's `name`.")
    created_at: str | None = Field(default=None, description="When the run began (ISO 8601).")
    sessions: list[Session] = Field(
        default_factory=list, description="Each `assay run` on this directory, in order."
    )
    environment: dict[str, Any] = Field(
        default_factory=dict, description="Python, platform and package versions."
    )
    imported_from: dict[str, Any] | None = Field(
        default=None, description="The tool and source of an imported run."
    )
    spec_path: str | None = Field(default=None, description="The run spec file.")
    spec_sha256: str | None = Field(default=None, description="Hash of the spec file's bytes.")
    spec: dict[str, Any] = Field(
        default_factory=dict, description="The spec as parsed (secrets redacted)."
    )
    spec_resolved: dict[str, Any] | None = Field(
        default=None,
        description="The spec as the run used it, secrets redacted: the shape of `spec` "
        "with every key, defaults filled in, and each model-calling block's settings "
        "(temperature, max_tokens, structured_output, ...) resolved over `[defaults]`. "
        "Informational: resuming compares `spec`.",
    )
    datasets: list[DatasetInfo] = Field(default_factory=list, description="The datasets read.")
    inputs: list[InputFileInfo] = Field(
        default_factory=list,
        description="Other files the spec names (corpora, evidence files, model directories).",
    )
    parser_version: str | None = Field(
        default=None, description="The output parser's version the records were parsed with."
    )
    cache: CacheInfo | None = Field(default=None, description="How the cache was used.")
    failure_policy: dict[str, Any] | None = Field(
        default=None, description="The spec's [failure] settings."
    )
    outputs: dict[str, str] = Field(
        default_factory=dict, description="The run directory and each output file: name -> path."
    )
    status: str | None = Field(
        default=None, description="running|complete|failed|interrupted|budget_exhausted"
    )
    message: str | None = Field(default=None, description="Why the run stopped, or a note.")
    updated_at: str | None = Field(default=None, description="Last rewrite (ISO 8601).")
    planned_judgments: int | None = Field(default=None, description="Judgments to make.")
    recorded_judgments: int | None = Field(default=None, description="Judgments written.")
    judges: list[dict[str, Any]] = Field(
        default_factory=list, description="Each judge's `describe()`, `id` and `stats`."
    )
    warnings: list[str] = Field(default_factory=list, description="What the run warned about.")
    factuality: FactualitySection | None = Field(
        default=None, description="The decompose-then-verify stage, if any."
    )
    gate: GateSection | None = Field(default=None, description="The gate stage, if any.")
    finished_at: str | None = Field(default=None, description="When the run ended.")
    reparses: list[Reparse] = Field(
        default_factory=list, description="Each `assay reparse`, in order."
    )
    incomplete: list[str] | None = Field(
        default=None, description="Problems that make the run's records incomplete."
    )
    redacted_fields: list[str] = Field(
        default_factory=list, description="Paths of values replaced because they held secrets."
    )
    budget: BudgetSection | None = Field(
        default=None, description="Spending caps and spend (`assay run`), every session."
    )
    rerun_of: RerunSource | None = Field(
        default=None, description="The run this one re-runs (`assay rerun`), if any."
    )
    rate_limits: list[RateLimitInfo] = Field(
        default_factory=list,
        description="Per endpoint called (`assay run`): rpm/tpm in force, 429s seen and "
        "the lowest concurrency reached, in the latest session.",
    )

    def dump(self) -> dict[str, Any]:
        """The JSON object to write: the fields read or set, unknown ones kept."""
        return self.model_dump(mode="json", exclude_unset=True)
