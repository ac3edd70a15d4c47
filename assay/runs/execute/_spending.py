"""A run's spending caps: the budget every model client of the run shares, the prices it
needs (checked before any request), and the status and closing line of a run a cap
stopped (`budget_exhausted`, resumable like `interrupted`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.core.manifest import Manifest
from assay.errors import SpecError
from assay.models import is_local
from assay.models._budget import Budget
from assay.runs.spec._options import RunOptions
from assay.runs.spec._spec import RunSpec
from assay.runs.store._spend import spend_so_far

BUDGET_EXHAUSTED = "budget_exhausted"


def run_budget(
    spec: RunSpec, options: RunOptions, existing: Manifest | None, run_dir: Path
) -> Budget:
    """The caps in force (a flag over the spec's key), starting from the spend earlier
    sessions recorded (a killed session's: what its records show, `spend_so_far`)."""
    cost, requests = options.max_cost_usd, options.max_requests
    return Budget(
        max_cost_usd=spec.max_cost_usd if cost is None else cost,
        max_requests=spec.max_requests if requests is None else requests,
        earlier=spend_so_far(existing, run_dir),
    )


def hosted_clients(clients: Iterable[Any]) -> list[Any]:
    """Each distinct model client that sends requests a provider bills (not local models)."""
    seen: dict[int, Any] = {}
    for client in clients:
        config = getattr(client, "config", None)
        if client is None or config is None or not hasattr(client, "budget"):
            continue
        if not is_local(getattr(config, "model", None)):
            seen.setdefault(id(client), client)
    return list(seen.values())


def attach_budget(
    budget: Budget, clients: Sequence[Any], spec_path: str, options: RunOptions
) -> None:
    """Give every client the budget, once each capped model's price is known: a model no
    price is known for refuses a cost cap (one line naming the spec and the field)."""
    for client in clients:
        config = client.config
        if budget.capped(config) and budget.prices(config) is None:
            flag = options.max_cost_usd is not None and config.max_cost_usd is None
            field = "max_cost_usd" + (" (--max-cost-usd)" if flag else "")
            raise SpecError(
                f"no price is known for {config.model!r} (litellm's cost map has none), so "
                "a spending cap cannot bound its cost: give input_cost_per_token and "
                "output_cost_per_token (USD per token) in its model block or [defaults]",
                file=spec_path,
                field=field,
            )
        client.budget = budget


def budget_status(
    budget: Budget | None, status: str, message: str | None
) -> tuple[str, str | None]:
    """`budget_exhausted` for a run that stopped short because a cap refused a request
    (a run over its failure limit stays `failed`; one that recorded everything,
    `complete`)."""
    if budget is None or not budget.exhausted or status != "interrupted":
        return status, message
    return BUDGET_EXHAUSTED, "; ".join(budget.reasons())


def raised_caps(budget: dict[str, Any]) -> tuple[float | None, int | None, str]:
    """The run caps a resume may give (the one that stopped the run doubled, the other
    as it was), and a note for a component's own cap, which the spec sets."""
    cost, requests = budget.get("max_cost_usd"), budget.get("max_requests")
    stopped = str(budget.get("stopped") or "")
    if stopped.startswith("max_requests") and requests is not None:
        requests = int(requests) * 2
    elif stopped.startswith("max_cost_usd") and cost is not None:
        cost = _raised_cost(float(cost), budget)
    components = budget.get("components") or {}
    capped = sorted(k for k, v in components.items() if isinstance(v, dict) and v.get("exhausted"))
    note = (
        f" (after raising max_cost_usd of {', '.join(capped)} in the spec)"
        if capped and not stopped
        else ""
    )
    return cost, requests, note


def _raised_cost(cap: float, budget: dict[str, Any]) -> float:
    """The cap doubled; where that would refuse the same request again (a cap of 0, or
    one far below the request's worst case), twice what was spent plus that worst case."""
    spent = float(budget.get("spent_usd") or 0.0)
    needed = spent + float(budget.get("next_request_usd") or 0.0)
    raised = cap * 2 if cap * 2 > needed else needed * 2
    return float(f"{raised:.6g}")


__all__ = [
    "BUDGET_EXHAUSTED",
    "attach_budget",
    "budget_status",
    "hosted_clients",
    "raised_caps",
    "run_budget",
]
