"""The `claim_selective` policy kind: claim statuses certified / condition_limited / conflicting /
omitted from pooled relation scores, and a response action full / partial / conflict / abstain
(refuse when every verification failed). Definitions: docs/reference/policies/claim-selective.md."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

from assay.core.registry import POLICIES
from assay.policies.claim_selective import _jobs
from assay.policies.claim_selective._config import ClaimSelectiveConfig, parse_config
from assay.policies.claim_selective._decide import decide
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import ClaimSelectiveMetrics, evaluate
from assay.policies.claim_selective._records import Decisions, PolicyStamp
from assay.policies.engine._apply_common import Chain, Outputs, Settings
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._kind import Links, PolicyKind
from assay.policies.engine._results import Axes, MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuningSpec

KIND = "claim_selective"


@POLICIES.register(
    KIND,
    description="claim statuses and a response action from pooled support/conflict/limitation "
    "scores (claim-selective certification)",
)
class ClaimSelectivePolicy(PolicyKind):
    """A claim-selective policy from its resolved configuration; stores no results."""

    kind: ClassVar[str] = KIND
    version: ClassVar[int] = 1  # bump whenever decision semantics change
    empty_note = "no responses to evaluate: every metric is null but the UCCR variants (0.0)"
    sweep_ranges = _jobs.RANGES
    takes_ties = True
    tuned_keys = ("thresholds", "families", "tuned")
    curve_axes = Axes(
        x="critical_coverage", y="critical_risk", x_label="critical coverage",
        y_label="critical risk",
    )  # fmt: skip
    compares = True
    config: ClaimSelectiveConfig

    def __init__(
        self,
        config: ClaimSelectiveConfig | Mapping[str, Any] | None = None,
        *,
        file: str | Path | None = None,
    ) -> None:
        if isinstance(config, ClaimSelectiveConfig):
            self.config = config
        else:
            self.config = parse_config(config or {}, file=file)

    @property
    def name(self) -> str:
        return self.config.name

    def describe(self) -> dict[str, Any]:
        """The resolved configuration, every default written out (it builds the same
        policy again: `ClaimSelectivePolicy(policy.describe())`)."""
        return self.config.model_dump(mode="json")

    @property
    def sha256(self) -> str:
        """`policy_sha256`: the hash of the kind version and the resolved configuration."""
        return canonical_sha256({"kind": KIND, "version": self.version, "config": self.describe()})

    def stamp(self) -> PolicyStamp:
        return PolicyStamp(
            policy_id=self.name, kind=KIND, policy_version=self.version, policy_sha256=self.sha256
        )

    def decide(self, inputs: Iterable[ResponseInput]) -> Decisions:
        """Claim, response and certificate records for `inputs`, in (dataset, answer_id)
        order; a repeated response key keeps its last record."""
        return decide(self.config, self.stamp(), inputs)

    def metrics(
        self,
        decisions: Decisions,
        *,
        resamples: int = 1000,
        random_state: int = 0,
        confidence: float = 0.95,
    ) -> ClaimSelectiveMetrics:
        """The metrics (docs/reference/policies/claim-selective.md#metrics) over these decisions
        under this policy's certificate standard, with bootstrap intervals (`resamples=0`: point
        values and Wilson intervals only)."""
        return evaluate(
            decisions,
            standard=self.config.certificate_standard,
            resamples=resamples,
            random_state=random_state,
            confidence=confidence,
        )

    # -- over a run directory (the `PolicyKind` hooks) ------------------------------------
    @classmethod
    def from_block(cls, block: Mapping[str, Any], file: str) -> Self:
        return cls(block, file=file)

    def apply(self, run: RunInputs, settings: Settings, chain: Chain | None, file: str) -> Outputs:
        return _jobs.apply(self, run, settings, chain, file)

    def tune(
        self, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
    ) -> TuneRun:
        return _jobs.tune(self, run, chain, grid, file)

    @classmethod
    def sweep_base(cls, param: str) -> str:
        return _jobs.sweep_base(param)

    @classmethod
    def default_ties(cls, param: str) -> tuple[str, ...]:
        return (_jobs.DEFAULT_TIE,) if param == "support" else ()

    def sweep(
        self, run: RunInputs, chain: Chain | None, resolved: Resolved, file: str
    ) -> SweepResult:
        return _jobs.sweep_points(self, run, chain, resolved, file)

    def default_curve(
        self, run: RunInputs, inputs: dict[str, Any], links: Links | None
    ) -> list[dict[str, Any]]:
        return _jobs.default_curve(self, run, inputs, links)

    def paired_deltas(
        self,
        other: Self,
        run: RunInputs,
        sides: Sequence[tuple[dict[str, Any], Links | None]],
        metrics: Sequence[str] | None,
        bootstrap: dict[str, int],
    ) -> list[MetricDelta]:
        return _jobs.deltas(self, other, run, sides, metrics, bootstrap)

    @classmethod
    def report_thresholds(cls, config: Mapping[str, Any]) -> dict[str, str]:
        return _jobs.report_thresholds(dict(config))


__all__ = ["KIND", "ClaimSelectivePolicy"]
