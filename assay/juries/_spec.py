"""The `[[juries]]` block of a run spec: a jury over existing judges (Verga et al. 2024).

A jury's `name` becomes a judge id; its verdicts are computed from its members' item
judgments, so it costs no request. Its checks against the run's judges (members exist,
the name is free) happen when the run is assembled, where judge ids are known.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    model_validator,
)

Vote = Literal["majority", "mean", "weighted"]


class JurySpec(BaseModel):
    """A `[[juries]]` block: members, how they vote, and (weighted) their weights."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[^#]+$", description="The jury's judge id (no `#`).")
    members: list[str] = Field(
        min_length=2, description="Judge ids of the items run whose judgments vote."
    )
    vote: Vote = Field(
        default="majority",
        description="majority: the most frequent label (pairwise: preference); mean: the "
        "mean of the members' scores; weighted: a weighted vote (labels) and weighted mean "
        "(scores), weights from `weights` or fitted on the `fit_on` split.",
    )
    fit_on: str | None = Field(
        default=None,
        description="weighted: fit the weights on the items of this split (the dataset's "
        "`split_column`); the jury is judged on the other items only.",
    )
    weights: dict[str, float] | None = Field(
        default=None, description="weighted: each member's weight (>= 0), instead of fit_on."
    )
    min_members: int | None = Field(
        default=None,
        ge=1,
        description="Members with a verdict an item needs for a jury verdict; default: a "
        "majority of the members (len(members) // 2 + 1).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if len(set(self.members)) != len(self.members):
            raise ValueError("members: a judge is listed twice")
        if self.name in self.members:
            raise ValueError(f"jury {self.name!r} cannot be one of its own members")
        if self.min_members is not None and self.min_members > len(self.members):
            raise ValueError(
                f"min_members ({self.min_members}) exceeds the {len(self.members)} members"
            )
        if self.vote != "weighted":
            if self.fit_on is not None or self.weights is not None:
                raise ValueError('fit_on and weights apply to vote = "weighted" only')
            return self
        if (self.fit_on is None) == (self.weights is None):
            raise ValueError('vote = "weighted" needs exactly one of fit_on or weights')
        if self.weights is not None:
            _check_weights(self.weights, self.members)
        return self

    @property
    def quorum(self) -> int:
        """Members with a verdict an item needs: `min_members`, else a majority."""
        return self.min_members or len(self.members) // 2 + 1


def _check_weights(weights: dict[str, float], members: list[str]) -> None:
    if set(weights) != set(members):
        missing = sorted(set(members) - set(weights))
        extra = sorted(set(weights) - set(members))
        raise ValueError(f"weights must name every member once: missing {missing}, extra {extra}")
    if any(w < 0 for w in weights.values()) or not any(w > 0 for w in weights.values()):
        raise ValueError("weights must be >= 0, and at least one > 0")


def juries_need_items(juries: list[JurySpec], info: ValidationInfo) -> list[JurySpec]:
    """`RunSpec.juries`' field validator: juries vote on items datasets, names unique."""
    names = [j.name for j in juries]
    if len(set(names)) != len(names):
        raise ValueError("two juries share a name")
    datasets: list[Any] = info.data.get("datasets") or []
    if juries and not any(getattr(d, "kind", None) == "items" for d in datasets):
        raise ValueError('[[juries]] vote on items datasets: add a [[datasets]] kind = "items"')
    return juries


JuryBlocks = Annotated[list[JurySpec], AfterValidator(juries_need_items)]
