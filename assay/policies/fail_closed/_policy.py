"""The `fail_closed` policy kind (§4, the CertiRAG design): a claim is shown as verified
only on verifier entailment over its minimal sufficient evidence, with no contradiction
anywhere in its scored spans; everything else is withheld or blocked, and every answer
gets a certificate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.core.registry import POLICIES
from assay.policies.fail_closed._config import KIND, VERSION, FailClosedConfig, load_config
from assay.policies.fail_closed._decide import decide_response
from assay.policies.fail_closed._inputs import FCResponse
from assay.policies.fail_closed._records import Decision


@POLICIES.register(
    KIND, description="Fail-closed rendering: VERIFIED only on entailment, with certificates"
)
class FailClosedPolicy:
    """A pure decision function; it stores no results on itself."""

    kind = KIND
    version = VERSION

    def __init__(self, config: FailClosedConfig | None = None) -> None:
        self.config = config or FailClosedConfig()

    @classmethod
    def from_spec(cls, block: dict[str, Any], *, file: str | None = None) -> FailClosedPolicy:
        """From a `[[policies]]` block; a bad key or value is one line (FC-7)."""
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
        """Every answer, ordered by (dataset, answer_id) (§5.8)."""
        ordered = sorted(responses, key=lambda r: (r.dataset, r.answer_id))
        return [decide_response(self.config, r) for r in ordered]

    def with_thresholds(self, **values: str) -> FailClosedPolicy:
        return FailClosedPolicy(self.config.with_thresholds(**values))


__all__ = ["FailClosedPolicy"]
