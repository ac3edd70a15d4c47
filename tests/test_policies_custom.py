"""A user-written policy kind (`@policy`) applied like the built-in ones: config validated
from its block with one-line errors, the fail-closed guard enforced whatever the user
code returns, canonical outputs and manifest, `after =` chaining, --split / --by, the
report, `assay policies list`, and a plugin's policy found through its entry point.

Metrics are checked against counts recomputed from the written records and the demo's
gold labels (sklearn for accuracy/precision/recall), never against pinned numbers."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay, lines, write_text
from pydantic import Field
from sklearn.metrics import accuracy_score, precision_score, recall_score

from assay.core import registry
from assay.core.registry import POLICIES, load_plugins
from assay.policies import (
    ClaimDecision,
    ClaimInput,
    ClaimPolicy,
    ClaimPolicyDecisions,
    ClaimPolicyInputs,
    ClaimVerdict,
    PolicyConfig,
    ResponseInput,
    ResponseOutcome,
    best_support,
    policy,
)
from assay.policies.custom._guard import default_outcome, guard_claim

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "policies.toml"
ACTION = {"answer_full": "full", "answer_partial": "partial", "conflict": "conflict"}
ACTION |= {"abstain": "abstain", "refuse": "refuse"}
USABLE = {"certified", "condition_limited"}


class MinSupportConfig(PolicyConfig):
    min_support: float = Field(default=0.6, ge=0, le=1)


class MinSupport(ClaimPolicy[MinSupportConfig]):
    """Assert a claim whose best support reaches min_support (test kind)."""

    def decide_claim(self, claim: ClaimInput, response: ResponseInput) -> ClaimVerdict:
        best = best_support(claim)
        if best is not None and best >= self.config.min_support:
            return ClaimVerdict(decision=ClaimDecision.ASSERT, reason="supported")
        return ClaimVerdict(decision=ClaimDecision.WITHHOLD, reason="below_min_support")


class AssertAll(ClaimPolicy[PolicyConfig]):
    """Asserts every claim and answers every response in full, failed or not."""

    def decide(self, inputs: ClaimPolicyInputs) -> ClaimPolicyDecisions:
        verdict = ClaimVerdict(decision=ClaimDecision.ASSERT, reason="trust_me")
        return ClaimPolicyDecisions(
            claims={
                (r.dataset, r.answer_id, c.claim_id): verdict for r in inputs for c in r.claims
            },
            outcomes={(r.dataset, r.answer_id): ResponseOutcome.ANSWER_FULL for r in inputs},
        )


class Broken(ClaimPolicy[PolicyConfig]):
    def decide(self, inputs: ClaimPolicyInputs) -> ClaimPolicyDecisions:
        raise ZeroDivisionError("oops")


@pytest.fixture(autouse=True)
def kinds() -> Iterator[None]:
    """The test kinds, registered for one test only."""
    with POLICIES.scoped():
        policy("min-support", version=1)(MinSupport)
        policy("assert-all", version=2)(AssertAll)
        policy("broken", version=1)(Broken)
        yield


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        code, _, err = assay("run", EXAMPLE)
    assert code == 0, err
    return root / "runs" / "policies-demo"


@pytest.fixture
def run_dir(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "run", ignore=shutil.ignore_patterns("policies")))


DEMO_GATE = """
[[policies]]
name = "gate"
kind = "evidence_gate"
gate = "baseline:overlap"
tau = "0.40"
tau_min = "0.20"
"""  # the demo's gate, ahead of the policies chained after it
POLICY = (
    DEMO_GATE
    + """
[[policies]]
name = "mine"
kind = "min-support"
min_support = 0.7

[[policies]]
name = "chained"
kind = "min-support"
after = "gate"

[[policies]]
name = "all"
kind = "assert-all"
"""
)


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    return write_text(tmp_path / "p.toml", POLICY)


def _apply(run_dir: Path, policy_file: Path, *args: str) -> tuple[int, str, str]:
    return assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", "0", *args)


def test_user_kind_writes_records_metrics_and_manifest(run_dir: Path, policy_file: Path) -> None:
    code, out, err = _apply(run_dir, policy_file, "--name", "mine")
    assert code == 0, err
    assert "mine (min-support v1) · 24 responses" in out
    folder = run_dir / "policies" / "mine"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["policy"]["kind"] == "min-support" and manifest["policy"]["version"] == 1
    assert manifest["policy"]["config"] == {
        "name": "mine", "verifier": None, "after": None, "min_support": 0.7
    }  # fmt: skip
    assert set(manifest["outputs"]) == {"claims.jsonl", "responses.jsonl", "metrics.json"}
    claims = lines(folder / "claims.jsonl")
    verifications = {
        (r["answer_id"], r["claim_id"]): r for r in lines(run_dir / "verifications.jsonl")
    }
    for c in claims:  # the decision follows the recorded scores
        pairs: Any = verifications[(c["answer_id"], c["claim_id"])].get("pairs") or []
        best = max((p["s_support"] for p in pairs if p["s_support"] is not None), default=None)
        assert (c["decision"] == "assert") == (best is not None and best >= 0.7), c
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "run_info.json"}
    assert _apply(run_dir, policy_file, "--name", "mine")[0] == 0
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "run_info.json"}
    assert before == after


def test_common_metrics_agree_with_the_records_and_gold(run_dir: Path, policy_file: Path) -> None:
    assert _apply(run_dir, policy_file, "--name", "mine")[0] == 0
    folder = run_dir / "policies" / "mine"
    metrics = json.loads((folder / "metrics.json").read_text())
    claims, responses = lines(folder / "claims.jsonl"), lines(folder / "responses.jsonl")
    m = metrics["metrics"]
    gold = [r["gold_action"] for r in responses]
    predicted = [ACTION[str(r["outcome"])] for r in responses]
    assert m["action_accuracy"]["value"] == pytest.approx(accuracy_score(gold, predicted))
    graded = [c for c in claims if c["gold_status"] is not None]
    usable = [c["gold_status"] in USABLE for c in graded]
    expressed = [c["decision"] in ("assert", "qualify") for c in graded]
    assert m["expressed_precision"]["value"] == pytest.approx(precision_score(usable, expressed))
    assert m["usable_recall"]["value"] == pytest.approx(recall_score(usable, expressed))
    assert m["coverage"]["numerator"] == sum(c["decision"] == "assert" for c in claims)
    assert metrics["decision_mix"]["assert"] == m["coverage"]["numerator"]
    assert sum(metrics["outcome_mix"].values()) == len(responses) == 24
    assert m["coverage"]["ci_method"] == "wilson"


def test_no_gold_fields_give_null_metrics_with_a_reason(run_dir: Path, policy_file: Path) -> None:
    path = run_dir / "claims.jsonl"
    stripped = [{**r, "gold_status": None, "gold_usable": None} for r in lines(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in stripped))
    assert _apply(run_dir, policy_file, "--name", "mine")[0] == 0
    m = json.loads((run_dir / "policies/mine/metrics.json").read_text())["metrics"]
    for name in ("assert_precision", "expressed_precision", "usable_recall"):
        assert m[name]["value"] is None and m[name]["null_reason"] == "no_gold", name
    assert m["coverage"]["value"] is not None


def _fail(run_dir: Path, answer: str, status: str = "api_error") -> None:
    path = run_dir / "verifications.jsonl"
    rows = [{**r, "status": status} if r["answer_id"] == answer else r for r in lines(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_guard_withholds_failed_verifications_whatever_the_policy_says(
    run_dir: Path, policy_file: Path
) -> None:
    _fail(run_dir, "fd-01")
    code, _, err = _apply(run_dir, policy_file, "--name", "all")
    assert code == 0, err
    assert "withheld" in err and "fail closed" in err
    folder = run_dir / "policies" / "all"
    claims = lines(folder / "claims.jsonl")
    failed = [c for c in claims if c["answer_id"] == "fd-01"]
    assert failed and all(c["decision"] == "withhold" for c in failed)
    assert {c["reason"] for c in failed} == {"verification_api_error"}
    assert all(c["overridden"] == "assert" for c in failed)
    assert all(c["decision"] == "assert" for c in claims if c["answer_id"] != "fd-01")
    responses = {r["answer_id"]: r for r in lines(folder / "responses.jsonl")}
    assert responses["fd-01"]["outcome"] == "refuse"  # the policy said answer_full
    assert responses["fd-02"]["outcome"] == "answer_full"
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["n_refused"] == 1 and metrics["n_guarded"] == len(failed)


def test_guard_and_default_rule_in_python() -> None:
    ok = {"verifier_id": "v", "status": "ok", "pairs": []}
    claim = ClaimInput.model_validate({"claim_id": "c1", "verification": ok})
    missing = ClaimInput(claim_id="c2")
    said = ClaimVerdict(decision=ClaimDecision.QUALIFY, reason="mine")
    assert guard_claim(missing, said, None).decision == ClaimDecision.WITHHOLD
    assert guard_claim(missing, said, None).reason == "verification_missing"
    assert guard_claim(claim, None, None).reason == "not_decided"
    kept = guard_claim(claim, said, None)
    disputed = guard_claim(claim, ClaimVerdict(decision=ClaimDecision.DISPUTE, reason="x"), None)
    assert default_outcome([kept]) == (ResponseOutcome.ANSWER_PARTIAL, "some_claims_expressed")
    assert default_outcome([kept, disputed])[0] == ResponseOutcome.CONFLICT
    assert default_outcome([guard_claim(missing, said, None)])[0] == ResponseOutcome.REFUSE
    assert default_outcome([])[0] == ResponseOutcome.ABSTAIN


def test_after_gate_withholds_where_the_gate_did_not_pass(run_dir: Path, policy_file: Path) -> None:
    code, _, err = _apply(run_dir, policy_file, "--name", "chained")
    assert code == 0, err
    folder = run_dir / "policies" / "chained"
    assert (
        json.loads((folder / "manifest.json").read_text())["inputs"]["gate_policy"]["name"]
        == "gate"
    )
    assert _apply(run_dir, policy_file, "--name", "gate")[0] == 0
    gate = {
        d["question_id"]: d["outcome"]
        for d in lines(run_dir / "policies/gate/gate_decisions.jsonl")
    }
    blocked = {q for q, o in gate.items() if o != "pass"}
    assert blocked
    responses = {r["answer_id"]: r for r in lines(folder / "responses.jsonl")}
    for c in lines(folder / "claims.jsonl"):
        if c["answer_id"] in blocked:
            assert c["decision"] == "withhold" and c["reason"] == f"gate_{gate[c['answer_id']]}"
    assert all(responses[q]["outcome"] in ("abstain", "refuse") for q in blocked)


def test_split_and_by(run_dir: Path, policy_file: Path) -> None:
    code, out, err = _apply(
        run_dir, policy_file, "--name", "mine", "--split", "test", "--by", "intent"
    )
    assert code == 0, err
    metrics = json.loads((run_dir / "policies/mine/metrics.json").read_text())
    assert metrics["n_responses"] == 12 and metrics["in_sample"] is False
    slices = metrics["slices"]["intent"]
    assert sum(s["n_responses"] for s in slices) == 12
    assert {r["split"] for r in lines(run_dir / "policies/mine/responses.jsonl")} == {"test"}
    code, _, err = _apply(run_dir, policy_file, "--name", "mine", "--by", "colour")
    assert code == 2 and "--by" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("block", "field"),
    [("min_support = 1.5", "min_support"), ("min_suport = 0.5", "min_suport")],
)
def test_bad_config_is_one_line_naming_file_and_field(
    run_dir: Path, tmp_path: Path, block: str, field: str
) -> None:
    path = write_text(
        tmp_path / "bad.toml", f'[[policies]]\nname = "x"\nkind = "min-support"\n{block}\n'
    )
    code, _, err = _apply(run_dir, path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and str(path) in err and field in err, err
    assert not (run_dir / "policies").exists()


def test_unknown_kind_lists_user_kinds(run_dir: Path, tmp_path: Path) -> None:
    path = write_text(tmp_path / "bad.toml", '[[policies]]\nname = "x"\nkind = "nope"\n')
    code, _, err = _apply(run_dir, path)
    assert code == 2 and "min-support" in err and "claim_selective" in err


def test_a_failing_decide_is_one_line_and_writes_nothing(run_dir: Path, tmp_path: Path) -> None:
    path = write_text(tmp_path / "b.toml", '[[policies]]\nname = "b"\nkind = "broken"\n')
    code, _, err = _apply(run_dir, path)
    assert code == 2 and "policy 'b' (kind broken): decide failed: ZeroDivisionError: oops" in err
    assert len(err.strip().splitlines()) == 1
    assert not (run_dir / "policies" / "b").exists()


def test_list_and_report_show_the_user_kind(run_dir: Path, policy_file: Path) -> None:
    from assay.policies.report._data import policy_reports

    code, out, _ = assay("policies", "list")
    assert code == 0
    assert any(line.split()[:2] == ["min-support", "1"] for line in out.splitlines())
    assert _apply(run_dir, policy_file, "--name", "mine")[0] == 0
    (report,) = policy_reports(run_dir)
    assert report.kind == "min-support" and report.version == 1 and not report.warnings
    assert {r.name for r in report.metrics} >= {"coverage", "action_accuracy"}
    assert {m.of for m in report.mix} == {"response outcome", "claim decision"}
    assert report.curve is None and "min-support" in str(report.curve_note)
    code, out, err = assay("report", run_dir, "--format", "markdown")
    assert code == 0 and "min-support" in out, err


PLUGIN_MODULE = '''
from assay.policies import ClaimDecision, ClaimPolicy, ClaimVerdict, PolicyConfig, policy


@policy("plugin-withhold", version=3)
class WithholdAll(ClaimPolicy[PolicyConfig]):
    """Withholds every claim (a plugin's policy)."""

    def decide_claim(self, claim, response):
        return ClaimVerdict(decision=ClaimDecision.WITHHOLD, reason="plugin")
'''


def _plugin_site(root: Path) -> Path:
    """An installed distribution as importlib.metadata sees one: a dist-info folder with
    an `assay.plugins` entry point beside its module."""
    site = root / "site"
    info = site / "demo_policy_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: demo-policy-plugin\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text("[assay.plugins]\ndemo = demo_policy_plugin\n")
    (info / "top_level.txt").write_text("demo_policy_plugin\n")
    (site / "demo_policy_plugin.py").write_text(PLUGIN_MODULE)
    return site


def test_a_plugin_policy_is_found_through_its_entry_point(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(_plugin_site(tmp_path)))
    monkeypatch.delitem(sys.modules, "demo_policy_plugin", raising=False)
    registry._distributions.cache_clear()  # read once per process: the site is new
    try:
        assert "demo" in load_plugins(reload=True)
        assert POLICIES.info("plugin-withhold").package == "demo-policy-plugin"
        path = write_text(
            tmp_path / "p.toml", '[[policies]]\nname = "w"\nkind = "plugin-withhold"\n'
        )
        code, _, err = _apply(run_dir, path)
        assert code == 0, err
        claims: list[dict[str, Any]] = lines(run_dir / "policies/w/claims.jsonl")
        ok = [c for c in claims if c["verification_status"] == "ok"]
        assert ok and {c["reason"] for c in ok} == {"plugin"}
    finally:
        sys.modules.pop("demo_policy_plugin", None)
        registry._distributions.cache_clear()


# --- tune --write-policy for every tunable kind; export --what audit honours --split ---

DEMO_GATE_RENDER = (
    DEMO_GATE
    + """
[[policies]]
name = "render"
kind = "fail_closed"
after = "gate"
verifier = "baseline:overlap"
tau_entail = "0.70"
tau_contradict = "0.50"
"""
)


def test_write_policy_for_gate_and_fail_closed_marks_in_sample(
    run_dir: Path, tmp_path: Path
) -> None:
    source = write_text(tmp_path / "demo.toml", DEMO_GATE_RENDER)
    written = []
    for name in ("gate", "render"):
        out = tmp_path / f"{name}-tuned.toml"
        args = ("--name", name, "--split", "dev", "--write-policy", out)
        code, _, err = assay("policies", "tune", run_dir, "--policy", source, *args)
        assert code == 0, err
        result = json.loads((run_dir / f"policies/{name}/tune/result.json").read_text())
        text = out.read_text()
        assert "[policies.tuned]" in text and 'split = "dev"' in text
        written.append(text)
    both = write_text(tmp_path / "tuned.toml", "\n".join(written))
    for split, in_sample in (("dev", True), ("test", False)):
        code, _, err = _apply(run_dir, both, "--split", split)
        assert code == 0, err
        assert ("in-sample" in err) is in_sample
        for name in ("gate", "render"):
            folder = run_dir / "policies" / name
            assert json.loads((folder / "metrics.json").read_text())["in_sample"] is in_sample
            config = json.loads((folder / "manifest.json").read_text())["policy"]["config"]
            assert config["tuned"]["split"] == "dev"
    assert result["selected"] == config["tuned"]["selected"]  # render's, last tuned


def test_untuned_configs_hash_as_before_the_tuned_block() -> None:
    from assay.policies.evidence_gate._config import EvidenceGateConfig
    from assay.policies.fail_closed._config import load_config

    fc = load_config({"name": "r"})
    gate = EvidenceGateConfig.parse({"name": "g"})
    assert "tuned" not in fc.describe() and "tuned" not in gate.model_dump()
    tuned = fc.model_copy(update={"tuned": {"split": "dev"}})
    assert tuned.describe()["tuned"] == {"split": "dev"} and tuned.sha256 != fc.sha256


def test_export_audit_follows_the_applied_split(run_dir: Path, tmp_path: Path) -> None:
    source = write_text(tmp_path / "demo.toml", DEMO_GATE_RENDER)
    audits = {}
    for split in ("test", None):
        extra = ("--split", split) if split else ()
        assert _apply(run_dir, source, "--name", "render", *extra)[0] == 0
        code, out, err = assay("policies", "export", run_dir, "--name", "render", "--what", "audit")
        assert code == 0, err
        audits[split] = [json.loads(line) for line in out.splitlines()]
        responses = lines(run_dir / "policies/render/responses.jsonl")
        assert [a["answer_id"] for a in audits[split]] == [r["answer_id"] for r in responses]
    assert len(audits["test"]) == 12 and len(audits[None]) == 24
    whole = {a["answer_id"]: a for a in audits[None]}
    assert all(a == whole[a["answer_id"]] for a in audits["test"])


def test_tune_sweep_and_compare_of_a_user_kind_are_one_line(
    run_dir: Path, policy_file: Path
) -> None:
    for command in ("tune", "sweep"):
        code, _, err = assay(
            "policies", command, run_dir, "--policy", policy_file, "--name", "mine"
        )
        assert code == 2 and "'mine' is a min-support" in err, err
        assert len(err.strip().splitlines()) == 1
    assert _apply(run_dir, policy_file, "--name", "mine")[0] == 0
    assert _apply(run_dir, policy_file, "--name", "all")[0] == 0
    code, _, err = assay("policies", "compare", run_dir, "--a", "mine", "--b", "all")
    assert code == 2 and "comparisons are built for" in err and len(err.strip().splitlines()) == 1


def test_the_policy_sees_only_pairs_inside_the_evidence_pool_and_gate_evidence() -> None:
    from assay.policies.custom._guard import within_evidence

    def pair(pid: str) -> dict[str, Any]:
        return {"passage_id": pid, "s_support": 0.9, "relation_source": "nli"}

    verification = {"status": "ok", "pairs": [pair("p1"), pair("p2"), pair("p3")]}
    row = {
        "answer_id": "a1",
        "evidence_pool": ["p1", "p2"],
        "claims": [{"claim_id": "c1", "verification": verification}],
    }
    seen = within_evidence(ResponseInput.model_validate(row))
    assert [p.passage_id for p in seen.claims[0].verification.pairs] == ["p1", "p2"]  # type: ignore[union-attr]
    gated = {**row, "gate": {"outcome": "pass", "evidence": ["p2"]}}
    seen = within_evidence(ResponseInput.model_validate(gated))
    assert [p.passage_id for p in seen.claims[0].verification.pairs] == ["p2"]  # type: ignore[union-attr]


def test_policy_refuses_what_it_cannot_register() -> None:
    with pytest.raises(ValueError, match="built-in kind"):
        policy("fail_closed", version=1)(MinSupport)
    with pytest.raises(ValueError, match="version"):
        policy("v0", version=0)(MinSupport)
    with pytest.raises(TypeError, match="ClaimPolicy subclass"):
        policy("plain", version=1)(dict)  # type: ignore[type-var]
