"""A custom judge in plain Python, run on the bundled ForceBench demo (no key, no network).

A ForceBench pair holds two claims about the same evidence: a calibrated one and one
whose force is raised (a causal verb for a correlation, "all" for "some", a dropped
hedge). A judge should score the first above the second. This one scores how much of
the claim the evidence says, minus a penalty for force-raising words the evidence never
uses:

    python examples/custom_judge.py [OUTPUT_DIR]

It prints MVR (how often the raised claim scored at least as high; lower is better) and
FS (the mean score margin; higher is better) beside the built-in token-overlap baseline.
Re-running resumes: nothing is judged twice.
"""

from __future__ import annotations

import re
import sys

import assay
from assay import JudgeItem, Judgment, Status

# Words that raise a claim's force, by the axis they raise it on.
FORCE_WORDS = {
    "relation": "caused causes led drove brought resulted because made reduced increased raised",
    "modality": "definitely undoubtedly certain prove proves show shows will",
    "scope": "all every most always humans everyone",
    "temporal": "permanently indefinitely perpetuity lasting since",
    "numeric": "exactly least over more",
}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


async def force_words(item: JudgeItem) -> Judgment:
    """How much of the claim the evidence says, minus 0.3 for each axis on which the
    claim uses a force-raising word its evidence never uses."""
    claim, evidence = words(item.claim), words(item.evidence)
    raised = [axis for axis, cues in FORCE_WORDS.items() if (claim & set(cues.split())) - evidence]
    shared = len(claim & evidence) / len(claim) if claim else 0.0
    score = max(0.0, shared - 0.3 * len(raised))
    return Judgment(
        status=Status.OK,
        label="unsupported" if raised else "supported",
        score=round(score, 6),
        parsed={"raised": raised, "shared": round(shared, 6)},
    )


def main(output_dir: str) -> None:
    spec = {
        "name": "custom-judge",
        "bootstrap": 0,
        "datasets": [{"path": "builtin:forcebench-demo"}],
        "baselines": [{"name": "token-overlap"}],
    }
    result = assay.run(spec, judges=[force_words], output_dir=output_dir)
    metrics = result.metrics()
    overall = metrics[(metrics.group_by == "overall") & metrics.metric.isin(["mvr", "fs"])]
    table = overall.pivot(index="judge_or_verifier", columns="metric", values="value")
    print(f"{result.status}: {result.run_dir}")
    print(table.to_string(float_format="{:.3f}".format))
    flagged = result.judgments().query("judge_id == 'force_words' and label == 'unsupported'")
    print(f"force_words flagged {len(flagged)} of 120 claims")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/custom-judge")
