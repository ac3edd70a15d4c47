"""Spending caps: a run's (and each component's) cost and request budget, checked before
every request against the request's worst-case cost.

The worst case is the most prompt tokens the request can be billed for
(`assay.models._tokens.prompt_token_bound`) plus its whole `max_tokens`, at the model's
prices: what the provider could bill at most (for natural text and code; random strings
can tokenise denser, see `prompt_token_bound`). Requests in flight hold their worst case
until their answer's real usage replaces it, so a run never sends a request that could
take it over its cap, however many are in flight. One refusal stops the run's sending
for good (a component's cap stops only that component): what was not sent stays
unrecorded, and a resumed run with a higher cap sends it, counting the spend earlier
sessions recorded in the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.core.manifest import BudgetSection, SpendInfo
from assay.errors import AssayError
from assay.models._config import ModelConfig
from assay.models._cost_map import openai_model_info, uses_local_map
from assay.models._layers import usage_of
from assay.models._tokens import prompt_token_bound
from assay.models._types import ChatRequest

SPENDER: ContextVar[str | None] = ContextVar("assay_spender", default=None)
"""The component (judge, decomposer, verifier id) whose request is being sent."""


@contextmanager
def spending_as(component_id: str) -> Iterator[None]:
    """Requests made inside are counted against `component_id`'s spend and cap."""
    token = SPENDER.set(component_id)
    try:
        yield
    finally:
        SPENDER.reset(token)


class BudgetExhausted(AssayError):
    """A request was not sent: it could take the run (`whole_run`) or its component over
    a cap. Never a recorded error: the work stays pending for a resumed run."""

    def __init__(self, message: str, *, whole_run: bool) -> None:
        self.whole_run = whole_run
        super().__init__(message)


@dataclass(frozen=True)
class Prices:
    """USD per prompt and per output token, and where they came from."""

    input: float
    output: float
    source: str  # "model settings" | "cost map" | "cost map (batch)"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return self.input * prompt_tokens + self.output * completion_tokens


def _map_rates(model: str, batch: bool) -> tuple[float, float] | None:
    """Per-token rates from litellm's cost map: the bundled file for OpenAI models (no
    litellm import), else litellm's own lookup; None when the map has no price."""
    suffix = "_batches" if batch else ""
    info: dict[str, Any] | None = None
    if not batch and uses_local_map() and model.startswith("openai/"):
        info = openai_model_info(model)
    else:
        from assay.models._hosted import litellm_module

        try:
            info = dict(litellm_module().get_model_info(model=model))
        except Exception:  # litellm raises a bare Exception for a model it does not know
            info = None
    if not info:
        return None
    prompt, completion = (
        info.get(f"input_cost_per_token{suffix}"),
        info.get(f"output_cost_per_token{suffix}"),
    )
    if prompt is None or completion is None:
        return None
    return float(prompt), float(completion)


def prices_of(config: ModelConfig, *, batch: bool = False) -> Prices | None:
    """The model's prices: the user's (`input/output_cost_per_token`, also for batches),
    else the cost map's (batch prices for a batch; the online price where the map has
    no batch price: never less than the batch would cost); None when unknown."""
    if config.input_cost_per_token is not None and config.output_cost_per_token is not None:
        return Prices(config.input_cost_per_token, config.output_cost_per_token, "model settings")
    if batch and (rates := _map_rates(config.model, True)) is not None:
        return Prices(rates[0], rates[1], "cost map (batch)")
    rates = _map_rates(config.model, False)
    return None if rates is None else Prices(rates[0], rates[1], "cost map")


@dataclass
class Spend:
    """What one scope (the run, or one component) spent and holds in flight."""

    spent_usd: float = 0.0
    requests: int = 0
    held_usd: float = 0.0
    held_requests: int = 0
    exhausted: bool = False
    refused_usd: float | None = None  # the worst case of the request its cap refused


@dataclass(frozen=True)
class Ticket:
    """An admitted request: who sends it, what it holds, at which prices."""

    spender: str
    bound_usd: float
    prices: Prices | None


def request_bound(request: ChatRequest) -> tuple[int, int]:
    """The most prompt and output tokens a request can be billed for (its worst case)."""
    return prompt_token_bound(request.messages), request.decoding.max_tokens


def call_bound(config: ModelConfig, request: ChatRequest) -> tuple[int, int]:
    """The most prompt and output tokens one call can be billed for: its request's, or,
    asked through instructor with `max_reasks` R, R + 1 requests, each re-ask's prompt
    longer by the answer before it (its `max_tokens`; instructor's validation message
    beside it is not counted)."""
    prompt, output = request_bound(request)
    asks = 1
    if config.structured_output == "instructor" and request.output_model is not None:
        asks += config.max_reasks
    return asks * prompt + output * asks * (asks - 1) // 2, asks * output


def _usd(value: float) -> str:
    return f"${value:.4f}"


class Budget:
    """A run's spending caps and spend (earlier sessions' included), shared by every
    model client of the run. Single-threaded: admission and settling never await."""

    def __init__(
        self,
        max_cost_usd: float | None = None,
        max_requests: int | None = None,
        earlier: BudgetSection | None = None,
    ) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_requests = max_requests
        self.run = Spend()
        self.components: dict[str, Spend] = {}
        self.caps: dict[str, float] = {}
        self.stopped: str | None = None
        self._prices: dict[tuple[str, float | None, float | None, bool], Prices | None] = {}
        if earlier is not None:
            self.run.spent_usd, self.run.requests = earlier.spent_usd, earlier.requests
            for name, info in earlier.components.items():
                self.components[name] = Spend(spent_usd=info.spent_usd, requests=info.requests)

    def prices(self, config: ModelConfig, *, batch: bool = False) -> Prices | None:
        key = (config.model, config.input_cost_per_token, config.output_cost_per_token, batch)
        if key not in self._prices:
            self._prices[key] = prices_of(config, batch=batch)
        return self._prices[key]

    def capped(self, config: ModelConfig) -> bool:
        """Whether a cost cap applies to this model's requests."""
        return self.max_cost_usd is not None or config.max_cost_usd is not None

    def admit(self, config: ModelConfig, request: Any, *, batch: bool = False) -> Ticket:
        """Hold the request's worst case, or raise `BudgetExhausted` (nothing held)."""
        if self.stopped is not None:
            raise BudgetExhausted(self.stopped, whole_run=True)
        spender = SPENDER.get() or config.model
        prices = self.prices(config, batch=batch) if self._priced(config) else None
        bound = 0.0
        if prices is not None and self.capped(config) and isinstance(request, ChatRequest):
            bound = prices.cost(*call_bound(config, request))
        self._check_run(bound)
        mine = self.components.setdefault(spender, Spend())
        cap = config.max_cost_usd
        if cap is not None:
            self.caps[spender] = cap
            if mine.exhausted or mine.spent_usd + mine.held_usd + bound > cap:
                if not mine.exhausted:
                    mine.exhausted, mine.refused_usd = True, bound
                raise BudgetExhausted(self._over(spender, cap, mine, bound), whole_run=False)
        for scope in (self.run, mine):
            scope.held_usd += bound
            scope.held_requests += 1
        return Ticket(spender, bound, prices)

    def _priced(self, config: ModelConfig) -> bool:
        return self.capped(config) or config.input_cost_per_token is not None

    def _check_run(self, bound: float) -> None:
        run = self.run
        sent = run.requests + run.held_requests
        if self.max_requests is not None and sent >= self.max_requests:
            flying = f", {run.held_requests} of them in flight" if run.held_requests else ""
            self._stop(f"max_requests = {self.max_requests} reached ({sent} sent{flying})")
        cap = self.max_cost_usd
        if cap is not None and run.spent_usd + run.held_usd + bound > cap:
            run.refused_usd = bound
            self._stop(self._over("the run", cap, run, bound))

    def _over(self, who: str, cap: float, spend: Spend, bound: float) -> str:
        scope = "max_cost_usd" if who == "the run" else f"max_cost_usd of {who}"
        held = f", {_usd(spend.held_usd)} in flight" if spend.held_usd > 0 else ""
        return (
            f"{scope} = {cap:g}: {_usd(spend.spent_usd)} spent{held}, and the next request "
            f"could cost up to {_usd(bound)} more"
        )

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        raise BudgetExhausted(reason, whole_run=True)

    def settle(self, ticket: Ticket, response: BaseModel | None, attempts: int) -> None:
        """Replace the held worst case by what the answer cost (`response` None: a failed
        request, billed nothing). Prices the user gave become the recorded cost."""
        usage = usage_of(response)
        cost = 0.0
        if usage is not None:
            if ticket.prices is not None:
                cost = ticket.prices.cost(usage.prompt_tokens, usage.completion_tokens)
                if ticket.prices.source == "model settings":
                    usage.cost_usd = cost
            else:
                cost = usage.cost_usd or 0.0
        self._release(ticket, cost, max(attempts, 1))

    def cancelled(self, ticket: Ticket) -> None:
        """A request cut off in flight may still be billed: it counts at its worst case."""
        self._release(ticket, ticket.bound_usd, 1)

    def _release(self, ticket: Ticket, cost: float, requests: int) -> None:
        for scope in (self.run, self.components[ticket.spender]):
            scope.held_usd -= ticket.bound_usd
            scope.held_requests -= 1
            scope.spent_usd += cost
            scope.requests += requests

    @property
    def exhausted(self) -> bool:
        """Whether any cap refused a request this session."""
        return self.stopped is not None or any(s.exhausted for s in self.components.values())

    def reasons(self) -> list[str]:
        """Why requests were refused: the run's cap, then each component's."""
        out = [self.stopped] if self.stopped is not None else []
        out += [
            self._component_reason(name, spend)
            for name, spend in sorted(self.components.items())
            if spend.exhausted and self.stopped is None
        ]
        return out

    def _component_reason(self, name: str, spend: Spend) -> str:
        cap, refused = self.caps[name], spend.refused_usd or 0.0
        beyond = ", more than the whole cap" if refused > cap else ""
        return (
            f"max_cost_usd of {name} = {cap:g}: {_usd(spend.spent_usd)} spent, "
            f"and its next request could cost up to {_usd(refused)} more{beyond}"
        )

    def section(self) -> BudgetSection:
        """The manifest's `budget`: caps and spend over every session so far."""
        refused = self.run.refused_usd
        return BudgetSection(
            max_cost_usd=self.max_cost_usd,
            max_requests=self.max_requests,
            spent_usd=round(self.run.spent_usd, 8),
            requests=self.run.requests,
            stopped=self.stopped,
            next_request_usd=None if refused is None else round(refused, 8),
            components={
                name: SpendInfo(
                    max_cost_usd=self.caps.get(name),
                    spent_usd=round(spend.spent_usd, 8),
                    requests=spend.requests,
                    exhausted=spend.exhausted,
                )
                for name, spend in sorted(self.components.items())
            },
        )


def hold(client: Any, spender: str, request: Any, *, batch: bool = False) -> Ticket | None:
    """`client`'s run budget admits `request` for `spender` (None: the client has no
    budget); raises `BudgetExhausted`. For requests sent outside `Model.complete`
    (provider batches)."""
    budget: Budget | None = getattr(client, "budget", None)
    if budget is None:
        return None
    with spending_as(spender):
        return budget.admit(client.config, request, batch=batch)


def settle(client: Any, ticket: Ticket | None, response: BaseModel | None) -> None:
    """What a request `hold` admitted cost (`response` None: a failed one)."""
    budget: Budget | None = getattr(client, "budget", None)
    if ticket is not None and budget is not None:
        budget.settle(ticket, response, 1)


__all__ = [
    "SPENDER",
    "Budget",
    "BudgetExhausted",
    "Prices",
    "Spend",
    "Ticket",
    "call_bound",
    "hold",
    "prices_of",
    "request_bound",
    "settle",
    "spending_as",
]
