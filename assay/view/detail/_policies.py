"""What each policy applied to a run (`policies/<name>/`) did with one answer: each
claim's action and reason code, the answer's outcome and its certificate.

The kinds' output files differ (claim_selective and fail_closed write claims, responses
and certificates; evidence_gate writes gate decisions), and every kind's records carry
`decision`, `reason` and the kind's own `native` state, so they are read as JSON objects
by the same scan the item page uses, and passed on whole for the page to show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from assay.core.rundir import (
    CERTIFICATES_FILE,
    CLAIMS_FILE,
    GATE_DECISIONS_FILE,
    MANIFEST_FILE,
    POLICIES_DIR,
    RESPONSES_FILE,
)
from assay.view.detail._models import ClaimDetail, Highlight, PolicyAnswer, PolicyClaim
from assay.view.detail._scan import matching_rows


class Applied(NamedTuple):
    """One applied policy: its folder's name, its kind, and the folder."""

    name: str
    kind: str | None
    folder: Path


def applied_policies(run_dir: Path) -> list[Applied]:
    """The policies applied to the run, by folder name (a folder without a manifest is
    one being written, or not a policy: skipped)."""
    root = run_dir / POLICIES_DIR
    out: list[Applied] = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        manifest = folder / MANIFEST_FILE
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            data = {}
        policy = data.get("policy") if isinstance(data, dict) else None
        kind = policy.get("kind") if isinstance(policy, dict) else None
        out.append(Applied(folder.name, str(kind) if kind else None, folder))
    return out


def _rows(path: Path, dataset: str, answer_id: str, key: str = "answer_id") -> list[dict[str, Any]]:
    """The lines of `path` about the answer, the last per claim (or the last one)."""
    where = {key: answer_id, "dataset": dataset}
    return [row for _, row in matching_rows(path, answer_id, where)]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def policy_claims(applied: Applied, dataset: str, answer_id: str) -> dict[str, PolicyClaim]:
    """claim_id -> what the policy did with the claim (its latest line)."""
    out: dict[str, PolicyClaim] = {}
    for row in _rows(applied.folder / CLAIMS_FILE, dataset, answer_id):
        claim_id = row.get("claim_id")
        if claim_id is None:
            continue
        out[str(claim_id)] = PolicyClaim(
            policy=applied.name,
            kind=applied.kind or _text(row.get("policy_kind")),
            action=_text(row.get("decision")),
            reason=_text(row.get("reason")),
            native=_text(row.get("native")),
            record=row,
        )
    return out


def policy_answer(applied: Applied, dataset: str, answer_id: str) -> PolicyAnswer | None:
    """The answer's response record, certificate and gate decision under the policy
    (None when the policy wrote nothing about it)."""
    responses = _rows(applied.folder / RESPONSES_FILE, dataset, answer_id)
    certificates = _rows(applied.folder / CERTIFICATES_FILE, dataset, answer_id)
    gates = _rows(applied.folder / GATE_DECISIONS_FILE, dataset, answer_id, key="question_id")
    response = responses[-1] if responses else None
    gate = gates[-1] if gates else None
    main = response or gate
    if main is None and not certificates:
        return None
    main = main or {}
    return PolicyAnswer(
        policy=applied.name,
        kind=applied.kind,
        outcome=_text(main.get("outcome") or main.get("decision")),
        reason=_text(main.get("reason") or main.get("rule")),
        native=_text(main.get("native")),
        response=response,
        certificate=certificates[-1] if certificates else None,
        gate_decision=gate,
    )


def _located(entry: dict[str, Any], pairs: list[dict[str, Any]]) -> tuple[str, int, int] | None:
    """(passage id, start, end) of a policy's evidence entry: its own offsets into its
    chunk (a passage), else the offsets of the verdict's pair with the same span id."""
    span_id = entry.get("span_id")
    pair = next((p for p in pairs if span_id is not None and p.get("span_id") == span_id), None)
    passage = entry.get("passage_id") or (pair or {}).get("passage_id") or entry.get("chunk_id")
    start, end = entry.get("start"), entry.get("end")
    if (start is None or end is None) and pair is not None:
        start, end = pair.get("start"), pair.get("end")
    if passage is None or not isinstance(start, int) or not isinstance(end, int):
        return None
    return str(passage), start, end


def mark_policy_spans(claim: ClaimDetail) -> None:
    """Highlight, in the passages of the claim's verdicts, the spans each policy rests
    its decision on: fail_closed's minimal sufficient evidence (`evidence`, offsets in
    the passage), claim_selective's links (`links`, located through the scored pair)."""
    for policy in claim.policies:
        entries = policy.record.get("evidence") or policy.record.get("links") or []
        wanted = policy.record.get("verifier_id")
        for verdict in claim.verdicts:
            if wanted is not None and verdict.judgment.judge_id != wanted:
                continue
            passages = {p.passage_id: p for p in verdict.evidence}
            for entry in (e for e in entries if isinstance(e, dict)):
                found = _located(entry, verdict.pairs)
                passage = passages.get(found[0]) if found is not None else None
                if found is None or passage is None or passage.text is None:
                    continue
                if not 0 <= found[1] <= found[2] <= len(passage.text):
                    continue
                roles = entry.get("roles")
                what = ", ".join(roles) if isinstance(roles, list) and roles else "evidence"
                passage.highlights.append(
                    Highlight(
                        start=found[1],
                        end=found[2],
                        source="policy",
                        label=f"{policy.policy}: {what}",
                    )
                )
