"""The Python API: `import assay` surface, `assay.run` with Python judges and verifiers,
and `RunResult` tables read from the run directory."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import assay
from assay import ClaimToVerify, JudgeItem, Judgment, Status, Verdict, VerdictLabel
from assay.api._spec import SpecLike
from assay.core.pairs import Member
from assay.datasets import load_pairs
from assay.errors import SpecError

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
HEAVY = ("litellm", "torch", "transformers", "pandas", "jinja2", "numpy")
RAISING = ("caused", "causes", "reduced", "reduces", "increased", "increases", "raised")


def _forcebench(**extra: Any) -> dict[str, Any]:
    return {
        "name": "api",
        "bootstrap": 0,
        "datasets": [{"path": "builtin:forcebench-demo"}],
        "baselines": [{"name": "token-overlap"}],
        **extra,
    }


def _hedge_label(claim: str) -> str:
    return "unsupported" if any(w in claim.lower().split() for w in RAISING) else "supported"


async def hedge(item: JudgeItem) -> Judgment:
    """Causal verbs are unsupported by an observational study (a toy judge)."""
    label = _hedge_label(item.claim)
    return Judgment(status=Status.OK, label=label, score=float(label == "supported"))


def test_import_assay_is_cheap_and_names_resolve() -> None:
    code = (
        "import sys, assay\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
        "assay.JudgeItem, assay.Verdict, assay.register_judge\n"
        "print([m for m in ('litellm', 'torch', 'pandas') if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ["[]", "[]"]


def test_public_surface_is_small_documented_and_complete() -> None:
    assert 15 <= len(assay.__all__) <= 30
    for name in assay.__all__:
        value = getattr(assay, name)
        assert name in dir(assay)
        assert name.startswith("__") or inspect.getdoc(value), f"assay.{name} has no docstring"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        assay.nope  # noqa: B018


def test_run_a_function_judge_beside_a_spec_baseline(tmp_path: Path) -> None:
    result = assay.run(_forcebench(), judges=[hedge], output_dir=tmp_path / "run")
    assert result.status == "complete" and result.message is None
    frame = result.judgments()
    mine = frame[frame.judge_id == "hedge"]
    pairs = load_pairs("builtin:forcebench-demo").pairs
    assert len(mine) == 2 * len(pairs)
    assert set(frame.judge_id) == {"hedge", "baseline:token-overlap"}
    expected = {(p.id, m.value): _hedge_label(p.claim(m)) for p in pairs for m in Member}
    assert {(r.pair_id, r.member): r.label for r in mine.itertuples()} == expected
    described = next(j for j in result.manifest["judges"] if j["id"] == "hedge")
    source = inspect.getsource(hedge).encode("utf-8")
    assert described["module"] == __name__ and described["qualname"] == "hedge"
    assert described["source_sha256"] == hashlib.sha256(source).hexdigest()
    metrics = result.metrics()
    assert {"hedge", "baseline:token-overlap"} <= set(metrics.judge_or_verifier)
    assert list(frame.columns[:4]) == ["dataset", "pair_id", "member", "judge_id"]
    assert {"usage_prompt_tokens", "usage_cost_usd"} <= set(frame.columns)


def test_path_runspec_and_dict_give_the_same_records(tmp_path: Path) -> None:
    spec = _forcebench()
    toml = tmp_path / "spec.toml"
    toml.write_text(
        'name = "api"\nbootstrap = 0\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
        '[[baselines]]\nname = "token-overlap"\n',
        encoding="utf-8",
    )
    tables = []
    forms: list[SpecLike] = [toml, assay.RunSpec.model_validate(spec), spec]
    for i, form in enumerate(forms):
        result = assay.run(form, output_dir=tmp_path / f"r{i}")
        tables.append(result.judgments()[["pair_id", "member", "judge_id", "label", "score"]])
    assert len(tables[0]) == 120
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other)


def test_a_dict_spec_resumes_and_a_changed_one_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assay.run(_forcebench(), judges=[hedge], output_dir=out)
    lines = (out / "judgments.jsonl").read_text(encoding="utf-8").count("\n")
    again = assay.run(_forcebench(), judges=[hedge], output_dir=out)
    assert again.status == "complete"
    assert (out / "judgments.jsonl").read_text(encoding="utf-8").count("\n") == lines
    with pytest.raises(assay.AssayError, match="spec"):
        assay.run(_forcebench(seed=7), judges=[hedge], output_dir=out)


class KeywordJudge:
    """A judge object: passed through as is, its own describe() in the manifest."""

    id = "keyword"

    def describe(self) -> dict[str, Any]:
        return {"kind": "keyword", "words": list(RAISING)}

    async def __call__(self, item: JudgeItem) -> Judgment:
        return await hedge(item)


def sync_hedge(item: JudgeItem) -> Judgment:
    label = _hedge_label(item.claim)
    return Judgment(status=Status.OK, label=label, score=float(label == "supported"))


def test_judge_objects_and_sync_functions(tmp_path: Path) -> None:
    obj = KeywordJudge()
    assert assay.api.as_judge(obj) is obj
    result = assay.run(_forcebench(), judges=[obj, sync_hedge], output_dir=tmp_path / "r")
    frame = result.judgments()
    by_judge = {j: frame[frame.judge_id == j].label.tolist() for j in ("keyword", "sync_hedge")}
    assert by_judge["keyword"] == by_judge["sync_hedge"] and len(by_judge["keyword"]) == 120
    described = {j["id"]: j for j in result.manifest["judges"]}
    assert described["keyword"]["words"] == list(RAISING)


def test_bad_judges_fail_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(assay.AssayError, match="lambda"):
        assay.run(_forcebench(), judges=[lambda item: sync_hedge(item)], output_dir=out)
    with pytest.raises(assay.AssayError, match="neither a judge"):
        assay.run(_forcebench(), judges=["hedge"], output_dir=out)  # type: ignore[list-item]
    with pytest.raises(assay.AssayError, match="not a decomposer"):
        assay.run(_forcebench(), decomposer=hedge, output_dir=out)  # type: ignore[arg-type]
    assert not out.exists()


def test_a_function_returning_the_wrong_type_is_named(tmp_path: Path) -> None:
    async def sloppy(item: JudgeItem) -> str:
        return "supported"

    with pytest.raises(TypeError, match=r"judge '.*sloppy' returned str; .*assay\.Judgment"):
        assay.run(_forcebench(), judges=[sloppy], output_dir=tmp_path / "r")  # type: ignore[list-item]


def test_spec_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"<python spec>: field 'datasets\[0\].pth'"):
        assay.run({"datasets": [{"pth": "x"}], "baselines": [{"name": "token-overlap"}]})
    with pytest.raises(SpecError, match="expected a TOML path, a RunSpec or a dict"):
        assay.run(42)  # type: ignore[arg-type]


async def overlap_words(claim: ClaimToVerify) -> Verdict:
    """Supported when every long word of the claim occurs in the evidence."""
    evidence = " ".join(p.text for p in claim.evidence).lower()
    words = [w for w in claim.claim.lower().split() if len(w) > 6]
    ok = all(w in evidence for w in words)
    label = VerdictLabel.SUPPORTED if ok else VerdictLabel.UNSUPPORTED
    return Verdict(status=Status.OK, label=label, score=float(ok))


def test_a_function_verifier_in_the_factuality_stage(tmp_path: Path) -> None:
    spec = {
        "name": "fact",
        "bootstrap": 0,
        "factuality": {
            "datasets": [{"path": "builtin:factuality-demo"}],
            "verifiers": [{"kind": "overlap", "threshold": 0.7}],
        },
    }
    result = assay.run(spec, verifiers=[overlap_words], output_dir=tmp_path / "r")
    assert result.status == "complete"
    claims, verdicts = result.claims(), result.verifications()
    mine = verdicts[verdicts.verifier_id == "overlap_words"]
    assert len(claims) > 0 and len(mine) == len(claims)
    assert set(mine.label) <= {"supported", "unsupported"} and mine.status.eq("ok").all()
    assert "overlap_words" in set(result.metrics().judge_or_verifier)
    assert result.judgments().empty and "judge_id" in result.judgments().columns


async def test_run_inside_an_event_loop_points_to_run_async(tmp_path: Path) -> None:
    with pytest.raises(assay.AssayError, match=r"await assay\.run_async"):
        assay.run(_forcebench(), output_dir=tmp_path / "r")
    result = await assay.run_async(_forcebench(), judges=[hedge], output_dir=tmp_path / "r")
    assert result.status == "complete" and "hedge" in set(result.judgments().judge_id)


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_open_run_reads_a_v0_1_run_directory(run: str, tmp_path: Path) -> None:
    run_dir = shutil.copytree(FIXTURES / run, tmp_path / run)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    result = assay.open_run(run_dir)
    assert result.status == json.loads((run_dir / "manifest.json").read_text())["status"]
    expected = (FIXTURES / "expected" / f"{run}.report.csv").read_text(encoding="utf-8")
    assert result.metrics().to_csv(index=False, lineterminator="\n") == expected
    lines = (run_dir / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    keys = {(r["pair_id"], r["member"], r["judge_id"]) for r in map(json.loads, lines)}
    assert len(result.judgments()) == len(keys)
    claims = (run_dir / "claims.jsonl").read_text().splitlines()
    assert len(result.claims()) == len(claims) and len(result.sentences()) > 0
    assert set(result.verifications().claim_id) <= set(result.claims().claim_id)
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before  # read only


def test_open_run_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(assay.AssayError, match="not a run directory"):
        assay.open_run(tmp_path)


def test_a_spec_needs_no_judge_or_verifier_of_its_own_when_given_objects(
    tmp_path: Path,
) -> None:
    data_only: dict[str, Any] = {"bootstrap": 0, "datasets": [{"path": "builtin:forcebench-demo"}]}
    with pytest.raises(SpecError, match=r"needs at least one \[\[judges\]\]"):
        assay.run(data_only, output_dir=tmp_path / "none")
    result = assay.run(data_only, judges=[hedge], output_dir=tmp_path / "j")
    assert set(result.judgments().judge_id) == {"hedge"}
    toml = tmp_path / "data.toml"
    toml.write_text('bootstrap = 0\n[[datasets]]\npath = "builtin:forcebench-demo"\n', "utf-8")
    assert assay.run(toml, judges=[hedge], output_dir=tmp_path / "t").status == "complete"
    answers: dict[str, Any] = {"datasets": [{"path": "builtin:factuality-demo"}]}
    with pytest.raises(SpecError, match=r"factuality\.verifiers.*at least one"):
        assay.run({"factuality": answers}, output_dir=tmp_path / "none")
    fact = assay.run({"factuality": answers}, verifiers=[overlap_words], output_dir=tmp_path / "v")
    assert set(fact.verifications().verifier_id) == {"overlap_words"}
    assert not (tmp_path / "none").exists()


def test_the_custom_judge_example_runs_without_a_key(tmp_path: Path) -> None:
    example = Path(__file__).parents[1] / "examples" / "custom_judge.py"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run(
        [sys.executable, str(example), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"complete: {tmp_path / 'run'}\n")
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()[3:5]}
    mvr = {judge: float(values[1]) for judge, values in rows.items()}
    assert set(mvr) == {"force_words", "baseline:token-overlap"}
    assert mvr["force_words"] < mvr["baseline:token-overlap"]
    result = assay.open_run(tmp_path / "run")
    raised = result.judgments().query("judge_id == 'force_words'").parsed.map(len)
    assert (raised == 2).all()  # every record keeps its evidence: raised axes and overlap
