"""Sample strict and mixed renderings of a fail_closed policy, for reports (spec §4.6,
§5.10): a few answers with the text of each claim and where each mode puts it.

The modes are `_fc_render.render`'s, applied to the policy's own `claims.jsonl`; claim
text comes from the run's `claims.jsonl` (the policy records carry ids only). The text
is data: renderers must escape it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from assay.core.rundir import CLAIMS_FILE, iter_jsonl
from assay.policies.fail_closed._config import Mode
from assay.policies.fail_closed._records import ClaimRecord, RenderState
from assay.policies.fail_closed._render import render

if TYPE_CHECKING:
    from assay.policies.report._curves import RunCache

N_SAMPLES = 3


class SampleClaim(BaseModel):
    """One claim of a sample answer: its text, state and place in each mode."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    text: str
    state: str  # VERIFIED | UNVERIFIED | BLOCKED
    reason: str
    strict: str  # shown | hidden
    mixed: str  # shown | collapsed | hidden


class Sample(BaseModel):
    model_config = ConfigDict(frozen=True)

    dataset: str
    answer_id: str
    claims: list[SampleClaim]


def _place(claim_id: str, mode: Mode, claims: list[ClaimRecord]) -> str:
    view = render(mode, claims)
    if claim_id in view.shown:
        return "shown"
    return "collapsed" if claim_id in view.collapsed else "hidden"


def _by_answer(folder: Path) -> dict[tuple[str, str], list[ClaimRecord]]:
    grouped: dict[tuple[str, str], list[ClaimRecord]] = {}
    for claim in iter_jsonl(folder / CLAIMS_FILE, ClaimRecord):
        grouped.setdefault((claim.dataset, claim.answer_id), []).append(claim)
    return grouped


def _priority(claims: list[ClaimRecord]) -> int:
    """Answers mixing VERIFIED with other claims first: they show what the modes do."""
    verified = sum(c.native is RenderState.VERIFIED for c in claims)
    return 0 if 0 < verified < len(claims) else 1 if verified else 2


def samples_of(folder: Path, manifest: dict[str, Any], cache: RunCache) -> list[Sample]:
    """Up to N_SAMPLES answers of a fail_closed policy; [] for the other kinds."""
    if (manifest.get("policy") or {}).get("kind") != "fail_closed":
        return []
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
