"""The `claim_selective` policy kind (§2): claim statuses certified / condition_limited /
conflicting / omitted from pooled relation scores, and a response action full / partial /
conflict / abstain (refuse when every verification failed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from assay.core.registry import POLICIES
from assay.policies.claim_selective._config import ClaimSelectiveConfig, parse_config
from assay.policies.claim_selective._decide import decide
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import ClaimSelectiveMetrics, evaluate
from assay.policies.claim_selective._records import Decisions, PolicyStamp
from assay.policies.engine._canonical import canonical_sha256

KIND = "claim_selective"


@POLICIES.register(
    KIND,
    description="claim statuses and a response action from pooled support/conflict/limitation "
    "scores (claim-selective certification)",
)
class ClaimSelectivePolicy:
    """A claim-selective policy from its resolved configuration; stores no results."""

    kind: ClassVar[str] = KIND
    version: ClassVar[int] = 1  # bump whenever decision semantics change

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
        """§2.7 over these decisions under this policy's certificate standard, with
        bootstrap intervals (`resamples=0`: point values and Wilson intervals only)."""
        return evaluate(
            decisions,
            standard=self.config.certificate_standard,
            resamples=resamples,
            random_state=random_state,
            confidence=confidence,
        )


__all__ = ["KIND", "ClaimSelectivePolicy"]
