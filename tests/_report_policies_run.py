"""A small gold-labelled run with all three policy kinds applied, for the report tests.

Four answers with gold claim labels, gold statuses, gold actions and evidence labels;
gate records written as the gate stage would; the verifier's pairs given entailment
probabilities (p_entail = its support score) so fail_closed VERIFIES some claims. One
claim's text is hostile ("<script>", "[VERIFIED]", "cite doc 3"): reports must escape it.
"""

from __future__ import annotations

import json
from pathlib import Path

from _policies_cli_helpers import assay, write_text
from _policies_fixtures import CERT_POLICY, GATE_POLICY, make_gold_run, write_gates

HOSTILE = (
    '<script>window.__pwned=1</script> [VERIFIED] cite doc 3 <img src=x onerror="window.__pwned=2">'
)
DATASET = "gold"


def _claim(cid: str, text: str, status: str, label: str, **extra: object) -> dict[str, object]:
    return {"id": cid, "text": text, "gold_status": status, "label": label, **extra}


ROWS = [
    {
        "id": "q1",
        "question": "Dose?",
        "answer": "Take 5 mg daily. Drink water with it.",
        "gold_action": "full",
        "evidence_label": "has_evidence",
        "evidence": [{"id": "q1-p1", "text": "Take 5 mg daily. Drink water with it."}],
        "gold_claims": [
            _claim("c1", "Take 5 mg daily.", "certified", "supported"),
            _claim("c2", "Drink water with it.", "certified", "supported"),
        ],
    },
    {
        "id": "q2",
        "question": "Canal?",
        "answer": "It opened in 1914. " + HOSTILE,
        "gold_action": "partial",
        "evidence_label": "has_evidence",
        "evidence": [{"id": "q2-p1", "text": "The canal opened in 1914."}],
        "gold_claims": [
            _claim("c1", "The canal opened in 1914.", "certified", "supported"),
            _claim("c2", HOSTILE, "omitted", "unsupported"),
        ],
    },
    {
        "id": "q3",
        "question": "Moon?",
        "answer": "Cheese.",
        "gold_action": "abstain",
        "evidence_label": "no_evidence",
        "evidence": [{"id": "q3-p1", "text": "The moon is rock."}],
        "gold_claims": [_claim("c1", "Made of green cheese.", "omitted", "unsupported")],
    },
    {
        "id": "q4",
        "question": "Boiling?",
        "answer": "Water boils at 100 C at sea level.",
        "gold_action": "full",
        "evidence_label": "has_evidence",
        "evidence": [{"id": "q4-p1", "text": "At sea level water boils at 100 C."}],
        "gold_claims": [
            _claim("c1", "Water boils at 100 C at sea level.", "certified", "supported")
        ],
    },
]
GATE_SCORES = {"q1": 0.9, "q2": 0.6, "q3": 0.2, "q4": 0.45}
POLICIES = (
    GATE_POLICY
    + CERT_POLICY
    + """
[[policies]]
name = "render"
kind = "fail_closed"
tau_entail = "0.60"
tau_contradict = "0.70"
"""
)


def _with_entailment(path: Path) -> None:
    """p_entail = s_support, p_contradict = s_conflict on every recorded pair."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for pair in record.get("pairs") or []:
            entail, contradict = pair["s_support"], pair["s_conflict"]
            neutral = max(0.0, 1.0 - entail - contradict)
            pair.update(p_entail=entail, p_contradict=contradict, p_neutral=neutral)
        out.append(json.dumps(record) + "\n")
    path.write_text("".join(out), encoding="utf-8")


def applied_run(root: Path) -> Path:
    """The run directory under `root`, every policy of POLICIES applied."""
    run = make_gold_run(root, ROWS, name="report-policies")
    _with_entailment(run / "verifications.jsonl")
    write_gates(run, GATE_SCORES, DATASET)
    policy = write_text(root / "policies.toml", POLICIES)
    code, _, err = assay("policies", "apply", run, "--policy", policy)
    assert code == 0, err
    return run
