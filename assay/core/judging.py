"""The judge contract: an item in, exactly one judgment out."""

from __future__ import annotations

from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import CallAccounting, Status, TokenLogprob, Usage

__all__ = [
    "PAIRWISE",
    "SINGLE",
    "Judge",
    "JudgeItem",
    "Judgment",
    "PromptedJudge",
    "Status",
    "Usage",
    "judge_at",
    "judge_task",
    "judge_variables",
    "item_of_variables",
]

SINGLE = "judge"
PAIRWISE = "pairwise"


class JudgeItem(BaseModel):
    """What a judge sees: a claim, the evidence cited for it, optionally the question."""

    model_config = ConfigDict(frozen=True)

    claim: str
    evidence: str
    question: str | None = None
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Extra template variables for custom prompts."
    )


class Judgment(CallAccounting):
    """One judge's verdict on one item, with everything needed to audit it."""

    status: Status
    label: str | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    raw_output: str | None = None
    refusal: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    model_returned: str | None = None
    finish_reason: str | None = None
    label_probability: float | None = Field(
        default=None, ge=0.0, le=1.0, exclude_if=lambda v: v is None
    )
    logprobs: list[TokenLogprob] | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


@runtime_checkable
class Judge(Protocol):
    """A judge is an async callable with a stable id and a description of itself.

    `describe()` is what goes into the run manifest: it must identify everything that
    can change the judge's output (model, prompt hash, decoding, parser version...).
    """

    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def __call__(self, item: JudgeItem) -> Judgment: ...


def judge_task(judge: Judge) -> str:
    """What a judge answers: "judge" (one claim or response) unless it says "pairwise"
    (which of two responses is better) with a `task` attribute."""
    task = getattr(judge, "task", SINGLE)
    return task if task in (SINGLE, PAIRWISE) else SINGLE


@runtime_checkable
class PromptedJudge(Protocol):
    """A judge that renders a prompt template (`assay.judges.LLMJudge`, or your own): it
    names the data row (`where`) in a template error, renders the request it would send
    (`validate` checks it on the first row), and judges an items row's raw variables."""

    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def __call__(self, item: JudgeItem, *, where: str | None = None) -> Judgment: ...

    def request_for(self, item: JudgeItem, *, where: str | None = None) -> Any: ...

    async def judge_variables(
        self, variables: dict[str, Any], *, where: str | None = None
    ) -> Judgment: ...


_PROMPTED_MEMBERS = ("id", "describe", "__call__", "request_for", "judge_variables")
_PROMPTED_CLASSES: set[type] = set()


def is_prompted(judge: object) -> bool:
    """`isinstance(judge, PromptedJudge)`, remembered for a class that has every member
    itself: a runtime-checkable Protocol check is a `hasattr` per member (~0.1 ms), which
    a run paid again for every judgment."""
    kind = type(judge)
    if kind in _PROMPTED_CLASSES:
        return True
    if not isinstance(judge, PromptedJudge):
        return False  # not remembered: an instance attribute may supply a member
    if all(hasattr(kind, name) for name in _PROMPTED_MEMBERS):
        _PROMPTED_CLASSES.add(kind)
    return True


async def judge_at(judge: Judge, item: JudgeItem, *, where: str) -> Judgment:
    """`judge(item)`, naming the data row in the errors of a judge that renders prompts."""
    if is_prompted(judge):
        return await cast(PromptedJudge, judge)(item, where=where)
    return await judge(item)


async def judge_variables(judge: Judge, variables: dict[str, Any], *, where: str) -> Judgment:
    """An items row judged: a prompted judge sees exactly the row's variables; any other
    judge gets them as a `JudgeItem` (`claim`, `evidence`, `question`, the rest `extra`)."""
    if is_prompted(judge):
        return await cast(PromptedJudge, judge).judge_variables(variables, where=where)
    return await judge(item_of_variables(variables))


def item_of_variables(values: dict[str, Any]) -> JudgeItem:
    """What a judge without a prompt sees of an items row: claim, evidence and question,
    the rest as extras."""
    extra = {k: v for k, v in values.items() if k not in ("claim", "evidence", "question")}
    question = values.get("question")
    return JudgeItem(
        claim=str(values.get("claim") or ""),
        evidence=str(values.get("evidence") or ""),
        question=None if question is None else str(question),
        extra=extra,
    )
