"""The judge reads its prompt's output model, labels and scores once (a speed memo), and
a judge given another prompt parses by the new prompt's."""

from __future__ import annotations

from assay.core.judging import Status
from assay.judges import LLMJudge
from assay.models import ModelConfig, make_client
from assay.prompts import PromptRegistry

SUPPORT = '{"label": "fully_supported", "rationale": "r"}'
FORCE = '{"label": "force_gap", "rationale": "r"}'


def _parse(judge: LLMJudge, content: str) -> tuple[Status, str | None, float | None]:
    j = judge.judgment_from_raw(content=content, finish_reason="stop", refusal=None)
    return j.status, j.label, j.score


def test_a_new_prompt_is_read_again() -> None:
    registry = PromptRegistry()
    client = make_client(ModelConfig(model="openai/x"), None)
    judge = LLMJudge(client, registry.get("generic-support@1"))
    assert _parse(judge, SUPPORT) == (Status.OK, "fully_supported", 1.0)
    assert _parse(judge, SUPPORT) == (Status.OK, "fully_supported", 1.0)  # memoised
    force = registry.get("force-aware@1")
    judge.prompt = force
    status, label, _ = _parse(judge, SUPPORT)
    assert status is Status.PARSE_ERROR and label is None  # not a force-aware label
    assert _parse(judge, FORCE) == (Status.OK, "force_gap", force.meta.scores["force_gap"])
