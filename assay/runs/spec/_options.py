"""What a caller asks of a run (options) and what it gets back (outcome)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from assay.inputs import PathText


class RunOptions(BaseModel):
    output_dir: PathText | None = None
    use_cache: bool = True
    refresh_cache: bool = False
    cache_dir: PathText | None = None
    retry_errors: bool = Field(
        default=False, description="Re-run judgments that ended in api_error."
    )
    progress: bool = True
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="The run's spending cap in USD (over the spec's)."
    )
    max_requests: int | None = Field(
        default=None, ge=1, description="The run's cap on requests sent (over the spec's)."
    )


class RunOutcome(BaseModel):
    run_dir: str
    status: str
    planned: int = Field(description="Planned ForceBench judgments.")
    recorded: int
    written_this_session: int
    failed: int = Field(description="Judgments and factuality records counted as failures.")
    message: str | None = None
    verifications_planned: int | None = None
    verifications_recorded: int | None = None
