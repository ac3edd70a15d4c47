"""Runs end to end: manifest contents, resume after kill -9, failure policy, reparse."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import Behavior, FakeOpenAIServer, http_error, reply

SECRET = "sk-live-DO-NOT-LEAK-0042"


def verdict_for(body: dict[str, Any]) -> Behavior:
    """Deterministic, claim-dependent verdicts so metrics are non-trivial."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    digest = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    labels = [
        "fully_supported",
        "partially_supported",
        "unsupported",
        "force_calibrated",
        "force_gap",
    ]
    wanted = [lab for lab in labels if lab in text] or ["fully_supported"]
    label = wanted[digest % len(wanted)]
    return reply(json.dumps({"label": label, "confidence": 0.8, "rationale": "r"}))


def write_spec(tmp: Path, base_url: str, *, extra: str = "", name: str = "t") -> Path:
    spec = tmp / f"{name}.toml"
    spec.write_text(
        f"""
name = "{name}"
bootstrap = 200
[[datasets]]
name = "demo"
path = "builtin:forcebench-demo"
[defaults]
max_attempts = 3
initial_wait_s = 0.01
max_wait_s = 0.5
timeout_s = 5
max_concurrency = 4
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
api_key_env = "FAKE_JUDGE_KEY"
[[baselines]]
name = "token-overlap"
{extra}
""",
        encoding="utf-8",
    )
    return spec


def run(spec: Path, out: Path, **opts: Any) -> Any:
    options = RunOptions(output_dir=str(out), progress=False, **opts)
    return Runner(load_spec(spec), options).run()


@pytest.fixture(autouse=True)
def _judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", SECRET)


@pytest.fixture
def smart_server() -> Any:
    with FakeOpenAIServer(responder=verdict_for) as srv:
        yield srv


def test_run_writes_records_metrics_and_a_complete_manifest(
    smart_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", SECRET)
    spec = write_spec(tmp_path, smart_server.base_url)
    out = tmp_path / "run"
    outcome = run(spec, out)
    assert outcome.status == "complete"
    assert outcome.planned == outcome.recorded == 60 * 2 * 3
    records = list(iter_records(out / "judgments.jsonl"))
    assert len(records) == 360
    assert len({r.key for r in records}) == 360
    assert smart_server.stats.total == 240  # 2 LLM judges x 120 members, nothing cached yet

    m = read_json(out / "manifest.json")
    assert m["status"] == "complete"
    assert m["planned_judgments"] == m["recorded_judgments"] == 360
    assert m["environment"]["assay_version"]
    assert m["environment"]["packages"]["litellm"] == "1.106.2"
    assert m["datasets"][0]["rows"] == 60 and len(m["datasets"][0]["sha256"]) == 64
    assert m["spec_sha256"] == hashlib.sha256(spec.read_bytes()).hexdigest()
    llm = [j for j in m["judges"] if j["kind"] == "llm"]
    assert {j["prompt"]["id"] for j in llm} == {"generic-support", "force-aware"}
    for j in llm:
        assert j["client"]["api_base"] == smart_server.base_url
        assert j["client"]["model"] == "openai/fake-judge"
        assert len(j["prompt"]["sha256"]) == 64 and j["prompt"]["version"] == 1
        assert j["prompt"]["file"].endswith(".prompt")
        assert j["decoding"]["temperature"] == 0.0 and j["output_cap_tokens"] == 1024
        assert j["parser_version"] == m["parser_version"]
        assert j["stats"]["requests_sent"] == 120 and j["stats"]["retries"] == 0
        assert j["stats"]["by_status"]["ok"] == 120
        assert j["stats"]["model_returned"] == ["openai/fake-judge"] or j["stats"]["model_returned"]
        assert j["stats"]["tokens"]["total"] > 0
    assert m["outputs"]["judgments"] == "judgments.jsonl"
    for path in out.iterdir():
        assert SECRET not in path.read_text(encoding="utf-8")
    metrics = read_json(out / "metrics.json")
    judges = {r["judge_id"] for r in metrics["forcebench"]["rows"]}
    assert judges == {
        "openai/fake-judge::generic-support@1",
        "openai/fake-judge::force-aware@1",
        "baseline:token-overlap",
    }


def test_second_run_into_same_dir_does_nothing_and_new_dir_hits_cache(
    smart_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    spec = write_spec(tmp_path, smart_server.base_url)
    run(spec, tmp_path / "a")
    first_requests = smart_server.stats.total
    again = run(spec, tmp_path / "a")
    assert again.status == "complete" and again.written_this_session == 0
    fresh = run(spec, tmp_path / "b")
    assert fresh.status == "complete"
    assert smart_server.stats.total == first_requests  # all from cache
    m = read_json(tmp_path / "b" / "manifest.json")
    llm = [j for j in m["judges"] if j["kind"] == "llm"]
    assert all(j["stats"]["cache_hits"] == 120 and j["stats"]["requests_sent"] == 0 for j in llm)
    a = read_json(tmp_path / "a" / "metrics.json")
    b = read_json(tmp_path / "b" / "metrics.json")
    assert a.pop("records_sha256") != b.pop("records_sha256")  # records differ in recorded_at
    assert a == b


def test_no_cache_sends_every_request(smart_server: FakeOpenAIServer, tmp_path: Path) -> None:
    spec = write_spec(tmp_path, smart_server.base_url)
    run(spec, tmp_path / "a")
    run(spec, tmp_path / "b", use_cache=False)
    assert smart_server.stats.total == 480


def test_resume_refuses_a_different_spec(smart_server: FakeOpenAIServer, tmp_path: Path) -> None:
    from assay.errors import RunError

    spec = write_spec(tmp_path, smart_server.base_url)
    run(spec, tmp_path / "a")
    # only a result-relevant change refuses (a renamed run or edited comment resumes:
    # tests/test_resume_spec.py); the error lists what changed
    more = "[[baselines]]\nname = 'entity-overlap'"
    other = write_spec(tmp_path, smart_server.base_url, name="other", extra=more)
    with pytest.raises(RunError, match=r"different spec \(baselines: "):
        run(other, tmp_path / "a")


def test_failure_policy_marks_run_failed_and_retry_errors_recovers(
    smart_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # The first 30 requests are rejected (401 is final, never retried).
    smart_server.script(None, [http_error(401)] * 30)
    spec = write_spec(
        tmp_path, smart_server.base_url, extra="[failure]\nmax_failed_fraction = 0.05\n"
    )
    out = tmp_path / "run"
    outcome = run(spec, out)
    assert outcome.status == "failed"
    limit = int(0.05 * 360)
    # The run stops early once the limit is crossed; in-flight calls still get recorded.
    assert limit < outcome.failed <= limit + 4 + 1
    assert outcome.recorded < 360
    m = read_json(out / "manifest.json")
    assert m["status"] == "failed" and "failure limit" in m["message"]
    # The failed judgments are on disk, nothing was lost.
    statuses = [r.status.value for r in iter_records(out / "judgments.jsonl")]
    assert statuses.count("api_error") == outcome.failed
    # A plain resume keeps the errors; --retry-errors redoes them.
    smart_server.reset()  # the outage is over: no more scripted 401s
    assert run(spec, out).status == "failed"
    fixed = run(spec, out, retry_errors=True)
    assert fixed.status == "complete" and fixed.failed == 0


def test_reparse_uses_raw_outputs_without_calls(
    smart_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    smart_server.script("generic-support-never-matches", [])
    spec = write_spec(tmp_path, smart_server.base_url)
    out = tmp_path / "run"
    run(spec, out)
    before = smart_server.stats.total
    # Corrupt one record's status as an old buggy parser might have, then reparse.
    path = out / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["status"], rec["label"], rec["score"] = "parse_error", None, None
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from assay.runs.rebuild._reparse import reparse_run

    changes = reparse_run(out)
    assert changes.get("parse_error->ok", 0) == (
        1 if rec["judge_id"] != "baseline:token-overlap" else 0
    )
    assert smart_server.stats.total == before
    backup = out / "judgments.jsonl.before-reparse"
    assert backup.read_text(encoding="utf-8") == "\n".join(lines) + "\n"
    assert read_json(out / "manifest.json")["reparses"]
    reparse_run(out)  # again (or after an interrupted reparse): the first backup stays
    assert backup.read_text(encoding="utf-8") == "\n".join(lines) + "\n"
    assert len(read_json(out / "manifest.json")["reparses"]) == 2


def _wait_for_lines(path: Path, n: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            count = path.read_bytes().count(b"\n")
            if count >= n:
                return count
        time.sleep(0.02)
    return -1


def test_resume_after_kill_9_loses_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Latency only while the run that gets killed is in flight (so that it is mid-run).
    with FakeOpenAIServer(responder=verdict_for) as srv:
        spec = write_spec(tmp_path, srv.base_url)
        reference = run(spec, tmp_path / "ref", use_cache=False)
        assert reference.status == "complete"
        srv.latency_s = 0.03

        out = tmp_path / "killed"
        env = dict(os.environ, ASSAY_CACHE_DIR=str(tmp_path / "cache-killed"))
        cmd = [
            sys.executable,
            "-m",
            "assay",
            "run",
            str(spec),
            "--output-dir",
            str(out),
            "--no-progress",
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            seen = _wait_for_lines(out / "judgments.jsonl", 80, timeout=60)
            assert seen > 0, "run produced no judgments in time"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        killed_manifest = read_json(out / "manifest.json")
        assert killed_manifest["status"] == "running"  # a crash never claims completeness
        partial = list(iter_records(out / "judgments.jsonl"))
        assert 0 < len(partial) < 360

        # The resume needs no separate process: `main()` in-process, as the script calls it.
        srv.latency_s = 0.0
        monkeypatch.setenv("ASSAY_CACHE_DIR", env["ASSAY_CACHE_DIR"])
        code, _, stderr = invoke(cmd[3:])
        assert code == 0, stderr
        records = list(iter_records(out / "judgments.jsonl"))
        keys = [r.key for r in records]
        assert len(keys) == len(set(keys)) == 360
        m = read_json(out / "manifest.json")
        assert m["status"] == "complete" and len(m["sessions"]) == 2
        assert m["sessions"][1]["resumed"] is True
        ref_metrics = read_json(tmp_path / "ref" / "metrics.json")
        ref_metrics.pop("records_sha256")  # other records (order, recorded_at), same metrics
        metrics = read_json(out / "metrics.json")
        assert metrics.pop("records_sha256") and metrics == ref_metrics


def test_sigterm_marks_the_run_interrupted(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=verdict_for, latency_s=0.05) as srv:
        spec = write_spec(tmp_path, srv.base_url)
        out = tmp_path / "run"
        cmd = [
            sys.executable,
            "-m",
            "assay",
            "run",
            str(spec),
            "--output-dir",
            str(out),
            "--no-progress",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert _wait_for_lines(out / "judgments.jsonl", 20, timeout=60) > 0
        finally:
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=20)
        assert rc == 130
        assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
        m = read_json(out / "manifest.json")
        assert m["status"] == "interrupted"
        assert m["recorded_judgments"] == len(
            {r.key for r in iter_records(out / "judgments.jsonl")}
        )


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_manifest_counts_retries_requests_and_statuses(tmp_path: Path, transport: str) -> None:
    """The fault storm (429 + Retry-After, 5xx, refusal, truncation) through each transport."""
    from assay.testing import refusal, truncated

    with FakeOpenAIServer(responder=verdict_for) as srv:
        pairs = [json.loads(line) for line in _demo_lines()[:3]]
        data = tmp_path / "three.jsonl"
        data.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
        spec = tmp_path / "s.toml"
        spec.write_text(
            f"""
name = "counts"
bootstrap = 100
[[datasets]]
path = "three.jsonl"
[defaults]
max_attempts = 3
initial_wait_s = 0.01
max_wait_s = 0.2
transport = "{transport}"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{srv.base_url}"
[failure]
max_failed_fraction = 1.0
""",
            encoding="utf-8",
        )
        c0, c1, c2 = (p["calibrated_claim"] for p in pairs)
        r0 = pairs[0]["raised_claim"]
        srv.script(c0, [http_error(429, retry_after=0.05), http_error(500), reply(GOOD_JSON)])
        srv.script(c1, [http_error(500)] * 3)  # exhausts 3 attempts -> api_error
        srv.script(c2, [refusal()])
        srv.script(r0, [truncated('{"label": "fully')])
        outcome = run(spec, tmp_path / "run")
    assert outcome.status == "complete"  # the policy allows any failures here
    judge = read_json(tmp_path / "run" / "manifest.json")["judges"][0]
    stats = judge["stats"]
    # 6 judgments: c0 took 3 attempts, c1 3 (all failed), c2/r0/r1/r2 one each
    assert stats["requests_sent"] == 3 + 3 + 1 + 1 + 1 + 1
    assert stats["retries"] == 2 + 2
    assert stats["by_status"] == {
        "ok": 3,
        "parse_error": 0,
        "refusal": 1,
        "truncated": 1,
        "api_error": 1,
    }
    assert stats["failures"] == 3 and stats["cache_hits"] == 0
    metrics = read_json(tmp_path / "run" / "metrics.json")
    overall = next(r for r in metrics["forcebench"]["rows"] if r["group_by"] == "overall")
    # pairs 0 (truncated raised), 1 (api_error), 2 (refusal) all failed: violations, margin 0
    assert overall["n"] == 3 and overall["n_failed"] == 3 and overall["mvr"] == 1.0
    assert overall["fs"] == 0.0


GOOD_JSON = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'


def _demo_lines() -> list[str]:
    from assay.datasets import resolve_dataset_path

    return resolve_dataset_path("builtin:forcebench-demo").read_text().splitlines()
