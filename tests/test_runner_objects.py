"""The runner takes judge and verifier objects; its plan serialises; manifests are typed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.judging import JudgeItem, Judgment
from assay.core.manifest import Manifest
from assay.core.outcomes import Status
from assay.core.verification import ClaimToVerify, Verdict, VerdictLabel
from assay.errors import SpecError
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.runs.plan._plan import Plan, redo_statuses

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
SPEC = """
name = "objects"
bootstrap = 0
[[datasets]]
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
[factuality]
datasets = [{ path = "builtin:factuality-demo" }]
decomposer = { kind = "sentence" }
verifiers = [{ kind = "overlap" }]
"""


class LengthJudge:
    """Supports a claim no longer than its evidence: a plain-Python judge."""

    id = "py:length"

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "rule": "len(claim) <= len(evidence)"}

    async def __call__(self, item: JudgeItem) -> Judgment:
        ok = len(item.claim) <= len(item.evidence)
        return Judgment(status=Status.OK, label="supported" if ok else "unsupported", score=1.0)


class AlwaysVerifier:
    id = "py:always"

    def describe(self) -> dict[str, Any]:
        return {"kind": "python"}

    async def verify(self, item: ClaimToVerify) -> Verdict:
        return Verdict(status=Status.OK, label=VerdictLabel.SUPPORTED, score=1.0)


def _loaded(tmp_path: Path) -> Any:
    spec = tmp_path / "objects.toml"
    spec.write_text(SPEC, encoding="utf-8")
    return load_spec(spec)


def test_judge_and_verifier_objects_run_after_the_specs_own(tmp_path: Path) -> None:
    out = tmp_path / "run"
    options = RunOptions(output_dir=str(out), progress=False, use_cache=False)
    runner = Runner(
        _loaded(tmp_path), options, judges=[LengthJudge()], verifiers=[AlwaysVerifier()]
    )
    assert [j.id for j in runner.judges] == ["baseline:token-overlap", "py:length"]
    outcome = runner.run()
    assert outcome.status == "complete" and outcome.planned == 240
    mine = [r for r in iter_records(out / "judgments.jsonl") if r.judge_id == "py:length"]
    assert len(mine) == 120 and {r.label for r in mine} <= {"supported", "unsupported"}
    manifest = read_json(out / "manifest.json")
    described = {j["id"]: j for j in manifest["judges"]}
    assert described["py:length"]["rule"] == "len(claim) <= len(evidence)"
    assert described["py:length"]["stats"]["recorded"] == 120
    verifiers = {v["id"]: v for v in manifest["factuality"]["verifiers"]}
    assert verifiers["py:always"]["kind"] == "python"
    lines = (out / "verifications.jsonl").read_text(encoding="utf-8").splitlines()
    verdicts = [json.loads(line) for line in lines]
    always = [v for v in verdicts if v["verifier_id"] == "py:always"]
    assert always and all(v["label"] == "supported" for v in always)
    assert outcome.verifications_recorded == len(verdicts) == outcome.verifications_planned

    again = Runner(_loaded(tmp_path), options, judges=[LengthJudge()], verifiers=[AlwaysVerifier()])
    assert again.run().written_this_session == 0  # resumed: nothing left to do


def test_a_judge_id_shared_with_the_spec_is_refused(tmp_path: Path) -> None:
    class Clash(LengthJudge):
        id = "baseline:token-overlap"

    options = RunOptions(output_dir=str(tmp_path / "run"), progress=False)
    with pytest.raises(SpecError, match="two judges share the id 'baseline:token-overlap'"):
        Runner(_loaded(tmp_path), options, judges=[Clash()])


def test_the_plan_is_json_and_resume_is_planning_against_records(tmp_path: Path) -> None:
    options = RunOptions(output_dir=str(tmp_path / "run"), progress=False)
    runner = Runner(_loaded(tmp_path), options, judges=[LengthJudge()])
    planned = runner.plan()
    wire = Plan(items=planned).model_dump_json()
    assert Plan.model_validate_json(wire).items == planned
    assert runner.pending(planned, {}) == planned
    records = {w.key: type("R", (), {"status": Status.API_ERROR})() for w in planned[:3]}
    assert runner.pending(planned, records) == planned[3:]
    assert Status.API_ERROR in redo_statuses(True) and not redo_statuses(False)


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_manifests_written_by_0_1_load_and_dump_unchanged(run: str) -> None:
    raw = json.loads((FIXTURES / run / "manifest.json").read_text(encoding="utf-8"))
    manifest = Manifest.model_validate(raw)
    assert manifest.factuality is not None and manifest.sessions[0].status == "complete"
    assert manifest.dump() == raw
