"""The decompose-then-verify pipeline end to end, against the loopback server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.testing import Behavior, FakeOpenAIServer, http_error, reply

ROOT = Path(__file__).resolve().parents[1]

ANSWERS = [
    {
        "id": "a1",
        "question": "q1",
        "answer": "Aspirin thins the blood. Thank you for asking! Aspirin cures colds.",
        "evidence": [{"id": "p1", "text": "Aspirin thins the blood."}],
    },
    {
        "id": "a2",
        "question": "q2",
        "answer": "Water boils at 100 C at sea level. Ice is hot.",
        "evidence": [{"id": "p2", "text": "At sea level water boils at 100 C."}],
    },
    {"id": "a3", "question": "q3", "answer": "Hello there!", "evidence": []},
]

# What the fake model says. Decomposition: pleasantries have no claim; "Ice is hot."
# yields two claims. Verification: by claim text; "cures colds" gets an unparsable
# answer, which must be excluded from the score (not counted as supported).
VERIFY = {
    "Aspirin thins the blood.": "The passage says so.\nAnswer: True",
    "Aspirin cures colds.": "I think it might be",
    "Water boils at 100 C at sea level.": "Answer: True",
    "Ice is hot.": "Answer: False",
    "Ice is cold.": "Answer: False",
}


def responder(body: dict[str, Any]) -> Behavior:
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    target = re.search(r'Target sentence:\n"""\n(.*?)\n"""', text, re.S)
    if target:
        sentence = target.group(1)
        if sentence in ("Thank you for asking!", "Hello there!"):
            return reply("No verifiable claim")
        if sentence == "Ice is hot.":
            return reply("- Ice is hot.\n- Ice is cold.")
        return reply(f"- {sentence}")
    statement = re.search(r'Statement:\n"""\n(.*?)\n"""', text, re.S)
    assert statement, text
    return reply(VERIFY[statement.group(1)])


def write_spec(tmp: Path, base_url: str, *, parser: str = "strict", extra: str = "") -> Path:
    data = tmp / "answers.jsonl"
    data.write_text("".join(json.dumps(a) + "\n" for a in ANSWERS), encoding="utf-8")
    spec = tmp / f"fact-{parser}.toml"
    spec.write_text(
        f"""
name = "fact"
bootstrap = 100
[defaults]
max_attempts = 3
initial_wait_s = 0.01
max_wait_s = 0.2
[factuality]
datasets = [{{ path = "answers.jsonl", format = "jsonl" }}]
[factuality.decomposer]
kind = "llm"
model = "openai/fake-decomposer"
prompt = "decompose-conditional@1"
api_base = "{base_url}"
[[factuality.verifiers]]
kind = "context"
model = "openai/fake-verifier"
api_base = "{base_url}"
parser = "{parser}"
[[factuality.verifiers]]
kind = "overlap"
{extra}
""",
        encoding="utf-8",
    )
    return spec


def run(spec: Path, out: Path, **opts: Any) -> Any:
    return Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False, **opts)).run()


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    rows = read_json(out / "metrics.json")["factuality"]["scores"]["rows"]
    return {r["verifier_id"]: r for r in rows}


def test_pipeline_records_claims_verdicts_and_scores(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        out = tmp_path / "run"
        outcome = run(write_spec(tmp_path, srv.base_url), out)
        requests = srv.stats.total
    assert outcome.status == "complete"
    sentences = [json.loads(x) for x in (out / "sentences.jsonl").read_text().splitlines()]
    assert len(sentences) == 6  # 3 + 2 + 1 sentences
    claims = [json.loads(x) for x in (out / "claims.jsonl").read_text().splitlines()]
    assert [c["claim"] for c in claims] == [
        "Aspirin thins the blood.",
        "Aspirin cures colds.",
        "Water boils at 100 C at sea level.",
        "Ice is hot.",
        "Ice is cold.",
    ]
    assert all(c["prompt_id"] == "decompose-conditional" and c["model"] for c in claims)
    assert requests == 6 + 5  # 6 sentences decomposed, 5 claims verified by the LLM
    rows = _rows(out)
    llm = rows["context:openai/fake-verifier::verify-context@1"]
    # a1: 1 supported of 1 scored (the hedged answer is a parse_error, unscored) -> 1.0
    # a2: 1 supported of 3 scored -> 1/3; a3: no claims (0-claim response)
    assert llm["n_claims"] == 5 and llm["n_scored"] == 4 and llm["n_parse_error"] == 1
    assert llm["macro"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert llm["micro"] == pytest.approx(2 / 4)
    assert llm["n_zero_claim"] == 1 and llm["zero_claim_rate"] == pytest.approx(1 / 3)
    m = read_json(out / "manifest.json")
    fact = m["factuality"]
    assert fact["decomposer"]["prompt"]["id"] == "decompose-conditional"
    assert fact["decomposer"]["stats"]["requests_sent"] == 6
    assert fact["planned_verifications"] == fact["recorded_verifications"] == 10
    verifier = next(v for v in fact["verifiers"] if v["kind"] == "llm-context")
    assert verifier["stats"]["by_status"]["parse_error"] == 1
    assert verifier["parser_version"] == "assay-verify/1"
    assert m["outputs"]["claims"] == "claims.jsonl"


def test_legacy_parser_reproduces_the_published_quirk(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        out = tmp_path / "run"
        run(write_spec(tmp_path, srv.base_url, parser="legacy"), out)
    llm = _rows(out)["context:openai/fake-verifier::verify-context@1+legacy"]
    # Legacy: the hedged "I think it might be" has no true/false and none of the
    # negative keywords, so it counts as SUPPORTED: a1 2/2, a2 1/3.
    assert llm["n_scored"] == 5 and llm["n_parse_error"] == 0
    assert llm["micro"] == pytest.approx(3 / 5)


def test_resume_and_recompute_change_nothing(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        spec = write_spec(tmp_path, srv.base_url)
        out = tmp_path / "run"
        run(spec, out)
        before = srv.stats.total
        metrics = read_json(out / "metrics.json")
        again = run(spec, out)
        assert again.status == "complete" and srv.stats.total == before
    assert read_json(out / "metrics.json") == metrics
    done = subprocess.run(
        [sys.executable, "-m", "assay", "recompute", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert read_json(out / "metrics.json") == metrics


def test_failed_verifications_are_unscored_and_retry_errors_redoes_them(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        srv.script('Statement:\n"""\nIce is hot.', [http_error(400)])
        spec = write_spec(tmp_path, srv.base_url, extra="[failure]\nmax_failed_fraction = 1.0")
        out = tmp_path / "run"
        assert run(spec, out).status == "complete"
        llm = _rows(out)["context:openai/fake-verifier::verify-context@1"]
        assert llm["n_api_error"] == 1 and llm["n_scored"] == 3
        fixed = run(spec, out, retry_errors=True)
        assert fixed.status == "complete"
        llm = _rows(out)["context:openai/fake-verifier::verify-context@1"]
        assert llm["n_api_error"] == 0 and llm["n_scored"] == 4


def test_demo_spec_runs_without_key_or_network(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    outcome = run(ROOT / "examples" / "demo.toml", out)
    assert outcome.status == "complete"
    metrics = read_json(out / "metrics.json")
    assert metrics["forcebench"]["rows"] and metrics["factuality"]["scores"]["rows"]
    row = metrics["factuality"]["scores"]["rows"][0]
    assert row["verifier_id"] == "baseline:overlap" and row["n_responses"] == 8


SHARED = ROOT.parent / "shared" / "data"


@pytest.mark.skipif(not (SHARED / "expertqa").is_dir(), reason="../shared/data/expertqa absent")
def test_expertqa_given_claims_end_to_end(tmp_path: Path) -> None:
    spec = tmp_path / "eqa.toml"
    spec.write_text(
        f"""
name = "eqa"
bootstrap = 200
[factuality]
datasets = [{{ path = "{SHARED / "expertqa"}", format = "expertqa" }}]
decomposer = {{ kind = "given" }}
verifiers = [{{ kind = "overlap", threshold = 0.5 }}]
""",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    assert run(spec, out).status == "complete"
    fact = read_json(out / "metrics.json")["factuality"]
    row = fact["scores"]["rows"][0]
    assert row["n_responses"] == 49 and row["n_claims"] == 301 and row["n_unscored"] == 0
    gold = fact["gold"]["rows"][0]
    assert gold["n"] == 301  # every claim has an expert label
    assert 0.0 <= gold["balanced_accuracy"] <= 1.0
    assert fact["correlation"]["rows"][0]["n"] == 49
