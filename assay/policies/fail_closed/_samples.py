"""Sample strict and mixed renderings of a fail_closed policy, for reports: a few
answers with the text of each claim and where each mode puts it.

The modes are `_fc_render.render`'s, applied to the policy's own `claims.jsonl`; claim
text comes from the run's `claims.jsonl` (the policy records carry ids only). The text
is data: renderers must escape it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from assay.core.rundir import CLAIMS_FILE, iter_jsonl
from assay.policies.engine._results import Sample, SampleClaim
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.fail_closed._config import Mode
from assay.policies.fail_closed._records import FailClosedClaimRecord, RenderState
from assay.policies.fail_closed._render import render

N_SAMPLES = 3


class RunReader(Protocol):
    """The run's records, read once for every policy of a report."""

    def run(self, split: str | None = None) -> RunInputs: ...


def _place(claim_id: str, mode: Mode, claims: list[FailClosedClaimRecord]) -> str:
    view = render(mode, claims)
    if claim_id in view.shown:
        return "shown"
    return "collapsed" if claim_id in view.collapsed else "hidden"


def _by_answer(folder: Path) -> dict[tuple[str, str], list[FailClosedClaimRecord]]:
    grouped: dict[tuple[str, str], list[FailClosedClaimRecord]] = {}
    for claim in iter_jsonl(folder / CLAIMS_FILE, FailClosedClaimRecord):
        grouped.setdefault((claim.dataset, claim.answer_id), []).append(claim)
    return grouped


def _priority(claims: list[FailClosedClaimRecord]) -> int:
    """Answers mixing VERIFIED with other claims first: they show what the modes do."""
    verified = sum(c.native is RenderState.VERIFIED for c in claims)
    return 0 if 0 < verified < len(claims) else 1 if verified else 2


def samples_of(folder: Path, cache: RunReader) -> list[Sample]:
    """Up to N_SAMPLES answers of the fail_closed policy applied in `folder`."""
    grouped = _by_answer(folder)
    chosen = sorted(grouped, key=lambda k: (_priority(grouped[k]), k))[:N_SAMPLES]
    texts = {
        (a.dataset, a.answer_id, c.claim_id): c.claim for a in cache.run().answers for c in a.claims
    }
    out = []
    for key in chosen:
        claims = grouped[key]
        out.append(
            Sample(
                dataset=key[0],
                answer_id=key[1],
                claims=[
                    SampleClaim(
                        claim_id=c.claim_id,
                        text=texts.get((*key, c.claim_id), ""),
                        state=c.native.value,
                        reason=str(c.reason),
                        strict=_place(c.claim_id, Mode.STRICT, claims),
                        mixed=_place(c.claim_id, Mode.MIXED, claims),
                    )
                    for c in claims
                ],
            )
        )
    return out


__all__ = ["N_SAMPLES", "Sample", "SampleClaim", "samples_of"]
