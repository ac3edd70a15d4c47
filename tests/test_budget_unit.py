"""The budget on its own: requests in flight hold their worst case, a refusal of the
run's cap is final for the session, a judge's cap stops only that judge, earlier
sessions' spend counts, a request cut off in flight counts at its worst case, prices
given in the spec become the recorded cost; and the token estimate the worst case is
built on is never below what the provider's tokenizer counts (litellm's counter)."""

from __future__ import annotations

import pytest

from assay.core.manifest import BudgetSection, SpendInfo
from assay.core.outcomes import Usage
from assay.models import ChatRequest, Decoding, ModelConfig, RawResponse
from assay.models._budget import (
    Budget,
    BudgetExhausted,
    call_bound,
    prices_of,
    request_bound,
    spending_as,
)
from assay.models._tokens import prompt_token_bound
from assay.prompts import PromptRegistry
from assay.prompts._prompt import Message

PRICED = ModelConfig(
    model="openai/unpriced-x", input_cost_per_token=1e-3, output_cost_per_token=1e-3
)


def _request(text: str = "word " * 30, max_tokens: int = 100) -> ChatRequest:
    messages = [Message(role="user", content=text)]
    return ChatRequest(messages=messages, decoding=Decoding(max_tokens=max_tokens))


def _bound(request: ChatRequest) -> float:
    prompt, completion = request_bound(request)
    return (prompt + completion) * 1e-3


def _answer(prompt: int, completion: int) -> RawResponse:
    return RawResponse(
        content="{}", usage=Usage(prompt_tokens=prompt, completion_tokens=completion)
    )


def test_requests_in_flight_hold_their_worst_case_and_a_refusal_is_final() -> None:
    request = _request()
    budget = Budget(max_cost_usd=_bound(request) * 2.5)
    first, second = budget.admit(PRICED, request), budget.admit(PRICED, request)
    with pytest.raises(BudgetExhausted) as refused:  # nothing spent yet: two held
        budget.admit(PRICED, request)
    assert refused.value.whole_run and budget.run.spent_usd == 0
    budget.settle(first, _answer(10, 5), 1)
    budget.settle(second, _answer(10, 5), 1)
    assert budget.run.spent_usd == pytest.approx(30 * 1e-3) and budget.run.held_usd == 0
    with pytest.raises(BudgetExhausted):  # room again, but the run stopped sending
        budget.admit(PRICED, request)
    assert budget.section().stopped and budget.section().requests == 2


def test_a_components_cap_refuses_only_its_own_requests() -> None:
    request = _request()
    capped = PRICED.model_copy(update={"max_cost_usd": _bound(request) * 1.5})
    budget = Budget()
    with spending_as("judge-a"):
        budget.admit(capped, request)
        with pytest.raises(BudgetExhausted) as refused:
            budget.admit(capped, request)
    assert not refused.value.whole_run
    with spending_as("judge-b"):
        budget.admit(capped, request)  # its own cap, its own spend
    section = budget.section()
    assert section.components["judge-a"].exhausted and not section.components["judge-b"].exhausted
    assert budget.exhausted and budget.stopped is None


def test_earlier_sessions_spend_counts() -> None:
    request = _request()
    earlier = BudgetSection(
        spent_usd=1.0, requests=7, components={"j": SpendInfo(spent_usd=1.0, requests=7)}
    )
    budget = Budget(max_cost_usd=1.0 + _bound(request) * 0.9, earlier=earlier)
    with pytest.raises(BudgetExhausted):
        budget.admit(PRICED, request)
    assert Budget(max_requests=7, earlier=earlier).run.requests == 7
    with pytest.raises(BudgetExhausted, match="max_requests = 7"):
        Budget(max_requests=7, earlier=earlier).admit(PRICED, request)


def test_cut_off_requests_count_at_their_worst_case_and_given_prices_are_recorded() -> None:
    request = _request()
    budget = Budget(max_cost_usd=10.0)
    budget.cancelled(budget.admit(PRICED, request))
    assert budget.run.spent_usd == pytest.approx(_bound(request))
    answer = _answer(40, 2)
    budget.settle(budget.admit(PRICED, request), answer, 1)
    assert answer.usage.cost_usd == pytest.approx(42 * 1e-3)


def test_prices_come_from_the_cost_map_or_the_spec() -> None:
    mini = prices_of(ModelConfig(model="openai/gpt-4o-mini"))
    batch = prices_of(ModelConfig(model="openai/gpt-4o-mini"), batch=True)
    assert mini is not None and batch is not None
    assert batch.input == pytest.approx(mini.input / 2)  # the map's batch price: half
    assert prices_of(ModelConfig(model="openai/unpriced-x")) is None
    assert prices_of(PRICED) is not None and prices_of(PRICED).source == "model settings"


NATURAL = [
    "The claim holds: the cited trial reports a 12% reduction (95% CI 4-19%).",
    "Die Behauptung ist übertrieben; Ångström-Messungen zeigen ≥ 3 µm — nicht mehr.",
    "该研究表明，这种药物可以降低百分之十二的风险，但样本量较小。",
    "この主張は、引用された段落が保証する以上のことを述べています。",
    "Утверждение преувеличивает то, что говорится в цитируемом отрывке.",
    'def f(x: int) -> dict[str, int]:\n    return {"x": x ** 2, "y": [1, 2, 3]}\n',
    '{"label": "fully_supported", "overreach": 0, "rationale": "as stated"}\n',
    "1234567890 3.14159 2026-12-02T14:22:36Z 0x7f62f2a4aa60",
    "✓ ✗ 🙂 🚀 → ≤ ≥ ± × ÷ ∞ ∑ √ — “quoted” ‘single’ …",
]


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-3.5-turbo"])  # o200k, cl100k
def test_the_prompt_bound_is_never_below_the_tokenizers_count(model: str) -> None:
    from assay.models._hosted import litellm_module

    litellm = litellm_module()
    prompt = PromptRegistry(include_env=False).get("force-aware@1")
    for text in NATURAL:
        for messages in (
            [Message(role="user", content=text * 5)],
            prompt.render({"claim": text, "evidence": text * 3, "question": text}, where="t"),
        ):
            counted = litellm.token_counter(
                model=model, messages=[m.model_dump() for m in messages]
            )
            assert counted <= prompt_token_bound(messages) <= 4 * counted, text


def test_a_stopped_run_says_how_many_it_sent_in_flight_included() -> None:
    """`max_requests` counts requests sent, answered or not: the reason names them all
    (it said "2 sent" when 5 were, 3 of them still in flight)."""
    request = _request()
    budget = Budget(max_requests=3)
    tickets = [budget.admit(PRICED, request) for _ in range(3)]
    budget.settle(tickets[0], _answer(10, 5), 1)
    with pytest.raises(BudgetExhausted):
        budget.admit(PRICED, request)
    assert budget.section().stopped == "max_requests = 3 reached (3 sent, 2 of them in flight)"


def test_a_cost_cap_that_stopped_the_run_records_the_request_it_refused() -> None:
    request = _request()
    budget = Budget(max_cost_usd=0.0)
    with pytest.raises(BudgetExhausted):
        budget.admit(PRICED, request)
    section = budget.section()
    assert section.next_request_usd == pytest.approx(_bound(request))
    assert Budget(max_cost_usd=1.0).section().next_request_usd is None


@pytest.mark.parametrize(
    ("cap", "spent", "refused", "raised"),
    [
        (0.002, 0.0018, 0.0002, 0.004),  # doubled: room for the refused request and more
        (0.0, 0.0, 0.0002, 0.0004),  # a cap of 0 doubled is 0: twice the refused request
        (0.001, 0.0009, 0.05, 0.1018),  # doubled would refuse it again
        (0.5, 0.49, None, 1.0),  # a manifest written before the field: doubled
    ],
)
def test_the_resume_cap_leaves_room_for_the_request_that_was_refused(
    cap: float, spent: float, refused: float | None, raised: float
) -> None:
    from assay.runs.execute._spending import raised_caps

    stopped = f"max_cost_usd = {cap:g}: ..."
    budget = {"max_cost_usd": cap, "spent_usd": spent, "next_request_usd": refused}
    cost, requests, note = raised_caps({**budget, "stopped": stopped})
    assert cost == pytest.approx(raised) and cost > spent + (refused or 0.0)
    assert requests is None and note == ""


def test_an_instructor_call_is_admitted_at_every_ask_it_may_send() -> None:
    """With `max_reasks` R a call may send R + 1 requests, each re-ask's prompt longer by
    the answer before it: it holds all of that, so a cap between one request's worst case
    and the call's refuses it before anything is sent."""
    from pydantic import BaseModel

    class Answer(BaseModel):
        label: str

    config = PRICED.model_copy(update={"structured_output": "instructor", "max_reasks": 2})
    request = _request().model_copy(update={"output_model": Answer})
    prompt, output = request_bound(request)
    assert call_bound(config, request) == (3 * prompt + 3 * output, 3 * output)
    assert call_bound(PRICED, request) == (prompt, output)  # no instructor: one request
    plain = request.model_copy(update={"output_model": None})
    assert call_bound(config, plain) == (prompt, output)  # nothing to re-ask
    budget = Budget(max_cost_usd=_bound(request) * 2)
    with pytest.raises(BudgetExhausted):
        budget.admit(config, request)
    assert budget.run.held_usd == 0


def test_a_components_refusal_says_what_its_next_request_could_cost() -> None:
    """The closing reason of a judge's own cap names the refused worst case, and says
    when that alone is more than the cap (no request of that judge can ever fit)."""
    request = _request()
    worst = _bound(request)
    budget = Budget()
    with spending_as("roomy"):
        roomy = PRICED.model_copy(update={"max_cost_usd": worst * 1.5})
        budget.admit(roomy, request)
        with pytest.raises(BudgetExhausted):
            budget.admit(roomy, request)
    with spending_as("tight"), pytest.raises(BudgetExhausted):
        budget.admit(PRICED.model_copy(update={"max_cost_usd": worst / 2}), request)
    roomy_reason, tight_reason = budget.reasons()
    could = f"its next request could cost up to ${worst:.4f} more"
    assert roomy_reason.startswith("max_cost_usd of roomy = ") and could in roomy_reason
    assert not roomy_reason.endswith("more than the whole cap")
    assert could in tight_reason and tight_reason.endswith(", more than the whole cap")
