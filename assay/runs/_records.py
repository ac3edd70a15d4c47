"""The per-judgment record written to `judgments.jsonl`, one JSON object per line."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.datasets._forcebench import Axis, Member
from assay.outcomes import Status, Usage


class JudgmentRecord(BaseModel):
    """Everything about one judgment of one pair member by one judge.

    Carries the pair's axis and severity so metrics can be recomputed from this file
    alone. The key `(dataset, pair_id, member, judge_id)` is unique within a run; if a
    line for a key ever appears twice (a retried error), the last one wins.
    """

    model_config = ConfigDict(extra="ignore")

    dataset: str
    pair_id: str
    member: Member
    judge_id: str
    axis: Axis | None = None
    severity: int | None = None
    model: str | None = None
    model_returned: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    prompt_sha256: str | None = None
    parser_version: str | None = None
    status: Status
    label: str | None = None
    score: float | None = None
    attempts: int = 0
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cache_hit: bool = False
    finish_reason: str | None = None
    raw_output: str | None = None
    refusal: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    recorded_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.pair_id, self.member.value, self.judge_id)
