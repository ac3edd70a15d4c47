"""The plan of a run: serialisable work items, and which of them are still to do.

A work item names its inputs by id only (dataset, pair or answer, judge or verifier), so
a plan can be written as JSON and run later by another executor; the stages resolve
the ids to objects. Resuming is planning against what the record files already hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import Status
from assay.core.pairs import Member


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True)


class JudgeWork(_Item):
    """One judge's judgment of one member of one ForceBench pair."""

    stage: Literal["judge"] = "judge"
    dataset: str
    pair_id: str
    member: Member
    judge_id: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The key of the `JudgmentRecord` this item produces."""
        return (self.dataset, self.pair_id, self.member.value, self.judge_id)


class SentenceWork(_Item):
    """The decomposition of one sentence of one answer into claims."""

    stage: Literal["decompose"] = "decompose"
    dataset: str
    answer_id: str
    sentence_id: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.dataset, self.answer_id, self.sentence_id)


class ClaimWork(_Item):
    """One verifier's verdict on one claim."""

    stage: Literal["verify"] = "verify"
    dataset: str
    answer_id: str
    claim_id: str
    verifier_id: str

    @property
    def claim_key(self) -> tuple[str, str, str]:
        return (self.dataset, self.answer_id, self.claim_id)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (*self.claim_key, self.verifier_id)


class ItemWork(_Item):
    """One judge's judgment of one item of an items dataset (pairwise: in one order)."""

    stage: Literal["item"] = "item"
    dataset: str
    item_id: str
    order: Literal["ab", "ba"] | None = None
    judge_id: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The key of the `ItemJudgmentRecord` this item produces."""
        return (self.dataset, self.item_id, self.order or "", self.judge_id)


WorkItem = Annotated[JudgeWork | SentenceWork | ClaimWork | ItemWork, Field(discriminator="stage")]


class Plan(BaseModel):
    """Work items in the order they are run; `model_dump_json()` is the wire form."""

    items: list[WorkItem] = Field(default_factory=list)


class _Keyed(Protocol):
    @property
    def key(self) -> Any: ...


class _Recorded(Protocol):
    @property
    def status(self) -> Status: ...


W = TypeVar("W", bound=_Keyed)


def redo_statuses(retry_errors: bool) -> set[Status]:
    """Recorded outcomes that count as not done: api_error, with --retry-errors."""
    return {Status.API_ERROR} if retry_errors else set()


def pending(planned: Iterable[W], recorded: Mapping[Any, _Recorded], redo: set[Status]) -> list[W]:
    """Planned items with no record yet, or whose record ended in a status to redo."""
    return [w for w in planned if w.key not in recorded or recorded[w.key].status in redo]
