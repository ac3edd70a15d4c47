"""Stages ask a judge what it can do through protocols (`PromptedJudge`), not by its class:
a judge of your own that renders prompts is told the data row, as LLMJudge is."""

from __future__ import annotations

from typing import Any

from assay.core.judging import (
    JudgeItem,
    Judgment,
    PromptedJudge,
    Status,
    judge_at,
    judge_variables,
)
from assay.judges import LLMJudge
from assay.judges._baselines import BASELINES


class MyPromptedJudge:
    """Not an LLMJudge: only the protocol's methods."""

    id = "mine"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    def describe(self) -> dict[str, Any]:
        return {"id": self.id}

    async def __call__(self, item: JudgeItem, *, where: str | None = None) -> Judgment:
        self.seen.append(("item", where))
        return Judgment(status=Status.OK, label="supported", score=1.0)

    def request_for(self, item: JudgeItem, *, where: str | None = None) -> Any:
        return None

    async def judge_variables(
        self, variables: dict[str, Any], *, where: str | None = None
    ) -> Judgment:
        self.seen.append(("variables", where))
        return Judgment(status=Status.OK, label="supported", score=1.0)


async def test_a_prompted_judge_of_your_own_is_told_the_row() -> None:
    judge = MyPromptedJudge()
    assert isinstance(judge, PromptedJudge)
    await judge_at(judge, JudgeItem(claim="c", evidence="e"), where="data.jsonl line 3")
    await judge_variables(judge, {"claim": "c"}, where="items.csv line 4")
    assert judge.seen == [("item", "data.jsonl line 3"), ("variables", "items.csv line 4")]


async def test_a_judge_without_a_prompt_gets_the_row_as_an_item() -> None:
    seen: list[JudgeItem] = []

    class Plain:
        id = "plain"

        def describe(self) -> dict[str, Any]:
            return {"id": self.id}

        async def __call__(self, item: JudgeItem) -> Judgment:
            seen.append(item)
            return Judgment(status=Status.OK, label="supported", score=1.0)

    judge = Plain()
    assert not isinstance(judge, PromptedJudge)
    await judge_at(judge, JudgeItem(claim="c", evidence="e"), where="ignored")
    row = {"claim": "c", "evidence": "e", "question": 7, "topic": "t"}
    await judge_variables(judge, row, where="ignored")
    assert seen[1] == JudgeItem(claim="c", evidence="e", question="7", extra={"topic": "t"})


def test_llm_judges_are_prompted_and_baselines_are_not() -> None:
    for name in ("id", "describe", "__call__", "request_for", "judge_variables"):
        assert hasattr(LLMJudge, name)
    baseline = next(iter(BASELINES.values()))()
    assert not isinstance(baseline, PromptedJudge)
