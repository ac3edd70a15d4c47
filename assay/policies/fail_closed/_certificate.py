"""One certificate per answer: which policy, thresholds, verifier and inputs decided
each claim's state, the evidence of every VERIFIED claim, and a hash that seals it all.

The certificate's JSON schema is published (`certificate_json_schema()`, committed as
`assay/policies/schemas/fail_closed_certificate.schema.json`). It ties each state to
its reasons, so a line claiming VERIFIED for a claim without evidence, or for a reason
other than `entailed`, does not validate. Evidence is listed only for VERIFIED claims:
a certificate never links a span to a claim it does not verify.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._provenance import VerifierInfo
from assay.policies.fail_closed._config import KIND, VERSION, Caps, FailClosedConfig, Mode
from assay.policies.fail_closed._inputs import FCResponse, text_sha256
from assay.policies.fail_closed._records import (
    Decision,
    EvidenceSpan,
    FailClosedClaimRecord,
    Reason,
    Rendered,
    Triple,
)

CERTIFICATE_VERSION = "1"
_STRICT = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)

UnverifiedReason = Literal[
    "below_tau_entail",
    "entail_not_top_label",
    "no_evidence",
    "cap_exceeded",
    "verification_not_ok",
    "missing_verification",
    "invalid_score",
    "no_entailment_scores",
    "unsupported_by_design",
    "non_atomic",
    "gate_abstained",
    "gate_refused",
]


class RunContext(BaseModel):
    """What a certificate names about the run it came from."""

    model_config = _STRICT

    run_id: str | None = None
    verifier: VerifierInfo = Field(default_factory=VerifierInfo)
    retrieval_config_sha256: str | None = None


class CertificatePolicy(BaseModel):
    model_config = _STRICT

    id: str
    kind: Literal["fail_closed"]
    version: int
    mode: Mode
    tau_entail: str
    tau_contradict: str
    caps: Caps
    mse_max_spans: int


class _ClaimBase(BaseModel):
    model_config = _STRICT

    claim_id: str
    claim_text_sha256: str
    max_entail: float | None
    max_contradict: float | None
    n_pairs_scored: int
    truncated: bool


class VerifiedClaim(_ClaimBase):
    state: Literal["VERIFIED"]
    reason: Literal["entailed"]
    mse_score: Triple
    evidence: list[EvidenceSpan] = Field(min_length=1)


class BlockedClaim(_ClaimBase):
    state: Literal["BLOCKED"]
    reason: Literal["contradiction"]
    mse_score: None
    evidence: list[EvidenceSpan] = Field(max_length=0)


class UnverifiedClaim(_ClaimBase):
    state: Literal["UNVERIFIED"]
    reason: UnverifiedReason
    mse_score: None
    evidence: list[EvidenceSpan] = Field(max_length=0)


CertificateClaim = Annotated[
    VerifiedClaim | BlockedClaim | UnverifiedClaim, Field(discriminator="state")
]


class Certificate(BaseModel):
    """One line of `certificates.jsonl`."""

    model_config = _STRICT

    certificate_version: Literal["1"]
    policy: CertificatePolicy
    policy_sha256: str
    verifier: VerifierInfo
    retrieval_config_sha256: str | None
    run_id: str | None
    dataset: str
    answer_id: str
    question_sha256: str
    inputs_sha256: str
    claims: list[CertificateClaim]
    rendered: Rendered
    outcome: Literal["answer_full", "answer_partial", "abstain", "refuse"]
    certificate_sha256: str


def _claim(record: FailClosedClaimRecord, text: str) -> dict[str, Any]:
    verified = record.reason is Reason.ENTAILED
    return {
        "claim_id": record.claim_id,
        "claim_text_sha256": text_sha256(text),
        "state": record.native.value,
        "reason": record.reason.value,
        "max_entail": record.max_entail,
        "max_contradict": record.max_contradict,
        "n_pairs_scored": record.n_pairs_scored,
        "truncated": record.truncated,
        "mse_score": record.mse_score if verified else None,
        "evidence": record.evidence,
    }


def _policy_block(config: FailClosedConfig) -> CertificatePolicy:
    return CertificatePolicy(
        id=config.name,
        kind=KIND,
        version=VERSION,
        mode=config.mode,
        tau_entail=config.tau_entail,
        tau_contradict=config.tau_contradict,
        caps=config.caps,
        mse_max_spans=config.mse_max_spans,
    )


def build_certificate(
    config: FailClosedConfig,
    response: FCResponse,
    decision: Decision,
    context: RunContext | None = None,
) -> Certificate:
    """The sealed certificate of one decided answer."""
    context = context or RunContext()
    texts = {c.claim_id: c.text for c in response.claims}
    body = {
        "certificate_version": CERTIFICATE_VERSION,
        "policy": _policy_block(config),
        "policy_sha256": config.sha256,
        "verifier": context.verifier,
        "retrieval_config_sha256": context.retrieval_config_sha256,
        "run_id": context.run_id,
        "dataset": response.dataset,
        "answer_id": response.answer_id,
        "question_sha256": text_sha256(response.question),
        "inputs_sha256": response.inputs_sha256(),
        "claims": [_claim(r, texts[r.claim_id]) for r in decision.claims],
        "rendered": decision.response.rendered,
        "outcome": decision.response.outcome.value,
    }
    plain = Certificate.model_validate({**body, "certificate_sha256": ""}).model_dump(mode="json")
    del plain["certificate_sha256"]
    return Certificate.model_validate({**plain, "certificate_sha256": canonical_sha256(plain)})


def certificate_verifies(certificate: dict[str, Any]) -> bool:
    """Whether `certificate_sha256` is the hash of the certificate without it."""
    body = {k: v for k, v in certificate.items() if k != "certificate_sha256"}
    return certificate.get("certificate_sha256") == canonical_sha256(body)


def certificate_json_schema() -> dict[str, Any]:
    """The published JSON schema of a certificate line."""
    schema = Certificate.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = [
    "CERTIFICATE_VERSION",
    "BlockedClaim",
    "Certificate",
    "CertificatePolicy",
    "RunContext",
    "UnverifiedClaim",
    "VerifiedClaim",
    "VerifierInfo",
    "build_certificate",
    "certificate_json_schema",
    "certificate_verifies",
]
