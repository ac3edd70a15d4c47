"""The index's boundary models: a run's summary, a table query, its rows and page.

The server builds a `JudgmentQuery` from URL query parameters, so its bounds (page,
page size, the two judges of `differ`) are checked here, once, by pydantic."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "SORTS",
    "Facets",
    "JudgmentPage",
    "JudgmentQuery",
    "JudgmentRow",
    "RunSummary",
]

# Sortable columns: the only names a query may sort by (they are put into the SQL).
SORTS = (
    "item_id",
    "dataset",
    "variant",
    "judge_id",
    "model",
    "status",
    "label",
    "score",
    "preference",
    "gold",
    "outcome",
    "attempts",
    "latency_s",
    "tokens",
    "cost_usd",
    "recorded_at",
)
MAX_PAGE_SIZE = 1000


class RunSummary(BaseModel):
    """One run directory as the runs page lists it, from its manifest and file names."""

    id: str = Field(description="URL-safe id: sha1 of the resolved path, 12 hex digits.")
    path: str = Field(description="The path shown: relative to the given root when inside it.")
    dir: str = Field(description="The run directory as found (for opening its files).")
    name: str = Field(description="The manifest's name, else the directory's name.")
    kinds: list[str] = Field(default_factory=list, description="What the run holds.")
    status: str = Field(
        description="running (a writer holds the lock now) | complete | interrupted | "
        "budget_exhausted | failed | unreadable"
    )
    reason: str | None = Field(default=None, description="Why an unreadable run is unreadable.")
    planned: int | None = None
    recorded: int | None = None
    judges: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    cost_usd: float | None = None
    created_at: str | None = None
    updated_at: str | None = None


class JudgmentQuery(BaseModel):
    """Filters, sort and page of the judgments table; every filter narrows (AND)."""

    model_config = ConfigDict(extra="forbid")

    judge: list[str] = Field(default_factory=list)
    status: list[str] = Field(default_factory=list)
    label: list[str] = Field(default_factory=list)
    dataset: list[str] = Field(default_factory=list)
    unit: list[str] = Field(default_factory=list)
    outcome: Literal["correct", "wrong", "no_gold"] | None = None
    disagreeing: bool = False
    inconsistent: bool = False
    differ: list[str] = Field(default_factory=list)
    cache_hit: bool | None = None
    retried: bool | None = None
    search: str | None = Field(default=None, max_length=500)
    sort: str = "item_id"
    desc: bool = False
    page: int = Field(default=1, ge=1, le=1_000_000)
    page_size: int = Field(default=50, ge=1, le=MAX_PAGE_SIZE)

    @field_validator("differ")
    @classmethod
    def _two_judges(cls, value: list[str]) -> list[str]:
        if value and (len(value) != 2 or value[0] == value[1]):
            raise ValueError("differ takes exactly two different judge ids")
        return value

    @field_validator("sort")
    @classmethod
    def _known_sort(cls, value: str) -> str:
        if value not in SORTS:
            raise ValueError(f"unknown sort {value!r}; one of: {', '.join(SORTS)}")
        return value


class JudgmentRow(BaseModel):
    """One judgment (a record file's latest line for its key) with its gold and outcome."""

    unit: str = Field(description="pair (judgments.jsonl) | item | claim (verifications.jsonl)")
    dataset: str
    item_id: str = Field(description="Pair id, item id, or `answer_id:claim_id` for a claim.")
    variant: str | None = Field(description="Pair member, pairwise order, or None.")
    judge_id: str = Field(description="The judge's (or verifier's) id.")
    model: str | None
    prompt_id: str | None
    prompt_version: int | None
    status: str
    label: str | None
    score: float | None
    preference: str | None
    gold: str | None
    gold_source: str | None = Field(description="dataset | adjudicated | None")
    outcome: str = Field(description="correct | wrong | no_gold")
    cache_hit: bool
    attempts: int
    latency_s: float
    tokens: int | None
    cost_usd: float | None
    error: str | None
    recorded_at: str | None
    answer_id: str | None = Field(default=None, description="A claim's answer.")
    claim_id: str | None = Field(default=None, description="A claim's id in its answer.")


class JudgmentPage(BaseModel):
    rows: list[JudgmentRow]
    total: int = Field(description="Rows matching the filters, over all pages.")
    page: int
    page_size: int
    sort: str
    desc: bool
    version: int = Field(description="Changes whenever new records or labels were read.")


class Facets(BaseModel):
    """What the filter dropdowns offer: the values present in the run's judgments."""

    judges: list[str] = Field(default_factory=list)
    statuses: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    datasets: list[str] = Field(default_factory=list)
    units: list[str] = Field(default_factory=list)
