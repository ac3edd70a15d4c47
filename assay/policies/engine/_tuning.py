"""The tuning engine every policy kind shares: enumerate a grid of thresholds,
evaluate the pure policy on each candidate, keep the feasible ones, rank them.

Candidates are enumerated in a fixed order (parameters by name, values as listed), each
metric is compared as an exact fraction, a null objective ranks last, a null constraint
metric is infeasible, and ties on every objective fall to the ordered tie-break, then to
the enumeration order: the same inputs always select the same candidate.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from assay._limits import MAX_GRID_POINTS
from assay.errors import SpecError
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._numbers import Ratio

Op = Literal["==", "<=", ">=", "<", ">"]
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_WHERE = re.compile(
    r"^\s*([A-Za-z_][\w.]*|[0-9.]+)\s*(<=|>=|==|<|>)\s*([A-Za-z_][\w.]*|[0-9.]+)\s*$"
)


class Constraint(BaseModel):
    """`metric op value`, e.g. uccr_cert == 0."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str
    op: Op
    value: str

    def holds(self, metric: Ratio | None) -> bool:
        exact = metric.fraction if metric is not None else None
        return exact is not None and _OPS[self.op](exact, Fraction(Decimal(self.value)))

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value}"


class Objective(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str
    direction: Literal["max", "min"] = "max"


class TieBreak(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    param: str
    order: Literal["asc", "desc"] = "asc"


class TuningSpec(BaseModel):
    """A grid (parameter -> decimal strings), `where` relations between parameters,
    constraints on metrics, ordered objectives and an ordered tie-break."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grid: dict[str, list[str]]
    where: list[str] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    objectives: list[Objective] = Field(min_length=1)
    tie_break: list[TieBreak] = Field(default_factory=list)

    def grid_sha256(self) -> str:
        return canonical_sha256({"grid": self.grid, "where": self.where})

    @field_validator("grid")
    @classmethod
    def _bounded(cls, grid: dict[str, list[str]]) -> dict[str, list[str]]:
        """Every candidate is evaluated over the whole run: the product is bounded."""
        candidates = math.prod(len(values) for values in grid.values())
        if candidates > MAX_GRID_POINTS:
            sizes = " x ".join(str(len(v)) for v in grid.values())
            raise ValueError(
                f"{sizes} = {candidates} candidates; a tuning grid has at most {MAX_GRID_POINTS}"
            )
        return grid

    @model_validator(mode="after")
    def _not_empty(self) -> TuningSpec:
        """An empty grid, or a parameter with no value, has no candidate to choose from
        (checked after the fields, so a missing key is named first)."""
        if not self.grid:
            raise PydanticCustomError("empty_grid", "the grid is empty: give each parameter values")
        for param, values in self.grid.items():
            if not values:
                raise PydanticCustomError(
                    "empty_grid", "grid.{param} has no value: give at least one", {"param": param}
                )
        return self


class Candidate(BaseModel):
    """One evaluated point: its parameters, metrics, feasibility and rank (1 = chosen)."""

    index: int
    params: dict[str, str]
    metrics: dict[str, Ratio]
    feasible: bool
    failed: list[str] = Field(default_factory=list, description="Constraints not met.")
    rank: int | None = None


class TuneResult(BaseModel):
    candidates: list[Candidate]
    selected: dict[str, str] | None
    n_feasible: int
    grid_sha256: str
    best_infeasible: str | None = Field(
        default=None, description="With nothing feasible: the first constraint's best value."
    )


def _side(token: str, params: Mapping[str, str]) -> Decimal:
    if token in params:
        return Decimal(params[token])
    try:
        return Decimal(token)
    except ArithmeticError:
        raise SpecError(f"where: {token!r} is neither a grid parameter nor a number") from None


def satisfies(where: list[str], params: Mapping[str, str]) -> bool:
    """Whether `params` meet every `a <= b`-style relation of `where`."""
    for relation in where:
        match = _WHERE.match(relation)
        if match is None:
            raise SpecError(
                f"where: cannot read {relation!r}; write e.g. 'condition_limited <= support'"
            )
        left, op, right = match.groups()
        if not _OPS[op](_side(left, params), _side(right, params)):
            return False
    return True


def enumerate_grid(spec: TuningSpec) -> list[dict[str, str]]:
    """Every grid point meeting `where`, parameters by name, values in listed order."""
    names = sorted(spec.grid)
    points = (
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(spec.grid[n] for n in names))
    )
    return [p for p in points if satisfies(spec.where, p)]


def _objective_key(candidate: Candidate, spec: TuningSpec) -> tuple[Any, ...]:
    key: list[Any] = []
    for objective in spec.objectives:
        exact = (
            candidate.metrics[objective.metric].fraction
            if objective.metric in candidate.metrics
            else None
        )
        if exact is None:
            key.append((1, Fraction(0)))  # a null objective ranks last
        else:
            key.append((0, -exact if objective.direction == "max" else exact))
    for tie in spec.tie_break:
        value = Decimal(candidate.params[tie.param])
        key.append(-value if tie.order == "desc" else value)
    key.append(candidate.index)
    return tuple(key)


def _best_infeasible(candidates: list[Candidate], spec: TuningSpec) -> str | None:
    if not spec.constraints or not candidates:
        return None
    first = spec.constraints[0]
    scored = [
        c
        for c in candidates
        if first.metric in c.metrics and c.metrics[first.metric].fraction is not None
    ]
    if not scored:
        return f"{first}: {first.metric} is null for every candidate"
    lowest = first.op in ("==", "<=", "<")
    best = min(
        scored, key=lambda c: (c.metrics[first.metric].fraction or 0) * (1 if lowest else -1)
    )
    value = best.metrics[first.metric].value
    shown = ", ".join(f"{k}={v}" for k, v in best.params.items())
    return f"no candidate meets {first}; best {first.metric} = {value:.4f} at {shown}"


def tune(spec: TuningSpec, evaluate: Callable[[dict[str, str]], Mapping[str, Ratio]]) -> TuneResult:
    """Evaluate every candidate and select the best feasible one (None if none is)."""
    candidates = []
    for index, params in enumerate(enumerate_grid(spec)):
        metrics = dict(evaluate(params))
        failed = [str(c) for c in spec.constraints if not c.holds(metrics.get(c.metric))]
        candidates.append(
            Candidate(
                index=index, params=params, metrics=metrics, feasible=not failed, failed=failed
            )
        )
    feasible = sorted((c for c in candidates if c.feasible), key=lambda c: _objective_key(c, spec))
    for rank, candidate in enumerate(feasible, start=1):
        candidate.rank = rank
    return TuneResult(
        candidates=candidates,
        selected=dict(feasible[0].params) if feasible else None,
        n_feasible=len(feasible),
        grid_sha256=spec.grid_sha256(),
        best_infeasible=None if feasible else _best_infeasible(candidates, spec),
    )


__all__ = [
    "Candidate",
    "Constraint",
    "Objective",
    "TieBreak",
    "TuneResult",
    "TuningSpec",
    "enumerate_grid",
    "satisfies",
    "tune",
]
