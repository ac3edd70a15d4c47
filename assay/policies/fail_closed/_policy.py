"""The `fail_closed` policy kind (the CertiRAG design): a claim is shown as verified
only on verifier entailment over its minimal sufficient evidence, with no contradiction
anywhere in its scored spans; everything else is withheld or blocked, and every answer
gets a certificate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from assay.core.registry import POLICIES
from assay.policies.engine._apply_common import Chain, Outputs, Settings
from assay.policies.engine._kind import Links, PolicyKind
from assay.policies.engine._results import Axes, MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuningSpec
from assay.policies.fail_closed import _jobs
from assay.policies.fail_closed._config import KIND, VERSION, FailClosedConfig, load_config
from assay.policies.fail_closed._decide import decide_response
from assay.policies.fail_closed._inputs import FCResponse
from assay.policies.fail_closed._records import Decision
from assay.policies.fail_closed._samples import RunReader, Sample, samples_of


@POLICIES.register(
    KIND, description="Fail-closed rendering: VERIFIED only on entailment, with certificates"
)
class FailClosedPolicy(PolicyKind):
    """A pure decision function; it stores no results on itself."""

    kind = KIND
    version = VERSION
    empty_note = "no responses to evaluate: every metric is null"
    sweep_ranges = _jobs.RANGES
    tuned_keys = ("tau_entail", "tau_contradict", "tuned")
    curve_axes = Axes(
        x="vc", y="vcp", x_label="verified coverage (VC)", y_label="1 − VCP",
        y_complement=True,
    )  # fmt: skip
    compares = True
    audits = True
    config: FailClosedConfig
    REPORT_KEYS = ("tau_entail", "tau_contradict", "mode")

    def __init__(self, config: FailClosedConfig | None = None) -> None:
        self.config = config or FailClosedConfig()

    @classmethod
    def from_spec(cls, block: dict[str, Any], *, file: str | None = None) -> FailClosedPolicy:
        """From a `[[policies]]` block; a bad key or value is one line."""
        return cls(load_config(block, file=file))

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def sha256(self) -> str:
        return self.config.sha256

    def describe(self) -> dict[str, Any]:
        """The resolved configuration, every default written out."""
        return self.config.describe()

    def decide(self, inputs: FCResponse) -> Decision:
        """One answer's claim states, outcome and renderings."""
        return decide_response(self.config, inputs)

    def decide_all(self, responses: Iterable[FCResponse]) -> list[Decision]:
        """Every answer, ordered by (dataset, answer_id)."""
        ordered = sorted(responses, key=lambda r: (r.dataset, r.answer_id))
        return [decide_response(self.config, r) for r in ordered]

    def with_thresholds(self, **values: str) -> FailClosedPolicy:
        return FailClosedPolicy(self.config.with_thresholds(**values))

    # -- over a run directory (the `PolicyKind` hooks) ------------------------------------
    @classmethod
    def from_block(cls, block: Mapping[str, Any], file: str) -> Self:
        return cls(load_config(dict(block), file=file))

    def apply(self, run: RunInputs, settings: Settings, chain: Chain | None, file: str) -> Outputs:
        return _jobs.apply(self, run, settings, chain, file)

    def tune(
        self, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
    ) -> TuneRun:
        return _jobs.tune(self, run, chain, grid, file)

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

    def audit_records(
        self, run: RunInputs, inputs: dict[str, Any], links: Links | None
    ) -> list[dict[str, Any]]:
        return _jobs.audit_records(self, run, inputs, links)

    @classmethod
    def report_thresholds(cls, config: Mapping[str, Any]) -> dict[str, str]:
        return {k: str(config[k]) for k in cls.REPORT_KEYS if config.get(k) is not None}

    @classmethod
    def sample_renderings(cls, folder: Path, answers: RunReader) -> list[Sample]:
        return samples_of(folder, answers)


__all__ = ["FailClosedPolicy"]
