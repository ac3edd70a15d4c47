"""What a run directory records about its provider batches (`batches.json`): enough to
poll a submitted batch again after a crash instead of resubmitting it."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from assay.core.rundir import BATCHES_FILE
from assay.errors import RunError, first_problem

STATE_FILE = BATCHES_FILE


class BatchJob(BaseModel):
    """One submitted batch, as `batches.json` records it."""

    model: str
    api_base: str | None = None
    judges: list[str]
    input_path: str = Field(description="The uploaded JSONL, relative to the run directory.")
    input_file_id: str
    batch_id: str | None = Field(
        default=None,
        description="None while the batch is being created: a resumed run then looks for a "
        "batch made from `input_file_id` before it creates one.",
    )
    requests: int
    status: str = "submitted"
    collected: bool = False
    answered: int = 0
    errors: int = 0
    sent_online: int = 0
    cost_note: str | None = None

    def summary(self) -> dict[str, Any]:
        """What the manifest's judge entry says about this batch."""
        return self.model_dump(exclude={"judges", "model", "api_base"}, exclude_none=True)


class BatchState(BaseModel):
    jobs: list[BatchJob] = Field(default_factory=list)


def load_state(path: Path) -> BatchState:
    """`batches.json` as an earlier session left it (none yet: no batches)."""
    if not path.exists():
        return BatchState()
    try:
        return BatchState.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        problem = first_problem(exc)
        raise RunError(problem.message, file=path, field=problem.field) from None


def slug(model: str) -> str:
    """A model id as a file name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")


def say_line(text: str) -> None:
    """A batch progress line on stderr."""
    print(text, file=sys.stderr, flush=True)


def quiet(text: str) -> None:
    del text
