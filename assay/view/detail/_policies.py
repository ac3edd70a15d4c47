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
from assay.view.detail._models import PolicyAnswer, PolicyClaim
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
