"""Whether a dry run's plan fits the run's spending caps: the worst-case cost of the
requests it would send, counted exactly as the run admits them (the most prompt
tokens + max_tokens at the prices the caps use, batch prices for batch judges), plus
what earlier sessions spent, against `max_cost_usd`; the requests against
`max_requests`. Fits means the caps will not stop the run; retries, which the plan
cannot know, count against `max_requests` too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from assay.models._budget import Budget, call_bound
from assay.models._types import ChatRequest


class ComponentFit(BaseModel):
    """One component with its own cap (`max_cost_usd` in its model block)."""

    id: str
    max_cost_usd: float
    spent_usd: float = Field(description="Spent by earlier sessions.")
    worst_case_usd: float | None = Field(description="Of its requests to send; None: no price.")
    fits: bool | None


class BudgetFit(BaseModel):
    """The plan against the run's caps (None where a cap is not set)."""

    max_cost_usd: float | None
    max_requests: int | None
    spent_usd: float = Field(description="Spent by earlier sessions (the manifest's budget).")
    requests_sent: int = Field(description="Requests earlier sessions sent.")
    to_send: int = Field(description="Requests the plan would send (cache misses).")
    worst_case_usd: float | None = Field(
        description="Worst-case cost of those requests; None: a model has no price."
    )
    fits: bool | None = Field(description="Whether no cap will stop the run; None: unknown.")
    after_decomposition: bool = Field(
        default=False,
        description="Some requests (verifications) are known only after decomposition: "
        "not counted, so the plan cannot be said to fit.",
    )
    components: list[ComponentFit] = Field(default_factory=list)


def worst_case(
    budget: Budget, client: Any, requests: Sequence[ChatRequest], *, batch: bool
) -> float | None:
    """The requests' summed worst case at the caps' prices; None when unpriced."""
    if not requests:
        return 0.0
    prices = budget.prices(client.config, batch=batch)
    if prices is None:
        return None
    return sum(prices.cost(*call_bound(client.config, r)) for r in requests)


def _within(spent: float, worst: float | None, cap: float | None) -> bool | None:
    if cap is None:
        return True
    return None if worst is None else spent + worst <= cap


def budget_fit(budget: Budget, rows: Sequence[Any]) -> BudgetFit | None:
    """The fit of the plan's rows (`PlanRow`s), or None when no cap is set."""
    own = [r for r in rows if r.max_cost_usd is not None]
    if budget.max_cost_usd is None and budget.max_requests is None and not own:
        return None
    priced = [r for r in rows if r.to_send]
    unknown = any(r.worst_case_usd is None for r in priced)
    worst = None if unknown else sum(r.worst_case_usd or 0.0 for r in priced)
    to_send = sum(r.to_send or 0 for r in rows)
    run = budget.run
    components = [
        ComponentFit(
            id=r.id,
            max_cost_usd=r.max_cost_usd,
            spent_usd=budget.components[r.id].spent_usd if r.id in budget.components else 0.0,
            worst_case_usd=r.worst_case_usd,
            fits=None,
        )
        for r in own
    ]
    for c in components:
        c.fits = _within(c.spent_usd, c.worst_case_usd, c.max_cost_usd)
    checks = [_within(run.spent_usd, worst, budget.max_cost_usd)]
    checks += [c.fits for c in components]
    if budget.max_requests is not None:
        checks.append(run.requests + to_send <= budget.max_requests)
    later = any(r.to_send is None and r.model is not None for r in rows)
    if later:
        checks.append(None)
    fits = False if False in checks else (None if None in checks else True)
    return BudgetFit(
        max_cost_usd=budget.max_cost_usd,
        max_requests=budget.max_requests,
        spent_usd=round(run.spent_usd, 8),
        requests_sent=run.requests,
        to_send=to_send,
        worst_case_usd=worst,
        fits=fits,
        after_decomposition=later,
        components=components,
    )


def _usd(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:.4f}"


def fit_lines(fit: BudgetFit) -> list[str]:
    """What `--dry-run` prints about the caps, one line each."""
    verdict = {
        True: "fits",
        False: "does not fit: the run would stop budget_exhausted",
        None: "unknown: "
        + (
            "the verifications are known only after decomposition"
            if fit.after_decomposition
            else "a capped model has no price"
        ),
    }[fit.fits]
    parts = []
    if fit.max_cost_usd is not None:
        parts.append(
            f"worst case {_usd(fit.worst_case_usd)} of {fit.to_send} requests to send + "
            f"{_usd(fit.spent_usd)} spent earlier vs max_cost_usd = {fit.max_cost_usd:g}"
        )
    if fit.max_requests is not None:
        parts.append(
            f"{fit.to_send} requests to send + {fit.requests_sent} sent earlier vs "
            f"max_requests = {fit.max_requests} (retries count too)"
        )
    for c in fit.components:
        parts.append(
            f"{c.id}: worst case {_usd(c.worst_case_usd)} + {_usd(c.spent_usd)} spent vs "
            f"its max_cost_usd = {c.max_cost_usd:g}"
        )
    return [f"budget: {verdict}"] + [f"budget: {p}" for p in parts]


__all__ = ["BudgetFit", "ComponentFit", "budget_fit", "fit_lines", "worst_case"]
