"""Provider batch jobs (`mode = "batch"`) against the loopback server's
files and batches endpoints: the same records and cache entries as an online run, a
re-run fully cached, an expired batch's rest sent online, error lines as error records,
upload/create failures retried, a run killed while polling resumed without resubmitting,
and no key in any file the run writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_openai_transport import write_mini_pairs

from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer, http_error

TIMING_FIELDS = ("latency_s", "recorded_at")
SECRET = "sk-batch-test-0123456789abcdef"
PLANNED = 16  # 4 pairs x 2 members x 2 prompts


def _spec(tmp: Path, base_url: str, *, mode: str = "batch", model: str = "gpt-4o-mini") -> Path:
    write_mini_pairs(tmp)
    spec = tmp / f"{mode}.toml"
    spec.write_text(
        f"""
name = "batch-test"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[failure]
max_failed_fraction = 0.5
[defaults]
max_attempts = 3
initial_wait_s = 0.01
max_wait_s = 0.05
timeout_s = 5
transport = "openai"
[[judges]]
models = ["openai/{model}"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
api_key_env = "ASSAY_BATCH_TEST_KEY"
mode = "{mode}"
batch_poll_s = 0.02
""",
        encoding="utf-8",
    )
    return spec


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_BATCH_TEST_KEY", SECRET)


def _run(spec: Path, out: Path, cache: Path) -> list[dict[str, Any]]:
    options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    outcome = Runner(load_spec(spec), options).run()
    assert outcome.status == "complete", outcome.message
    return _records(out)


def _records(out: Path) -> list[dict[str, Any]]:
    records = [r.model_dump(mode="json") for r in iter_records(out / "judgments.jsonl")]
    for record in records:
        for name in TIMING_FIELDS:
            record.pop(name, None)
    return sorted(records, key=lambda r: (r["judge_id"], r["pair_id"], r["member"]))


def _without_cost(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "usage": {**r["usage"], "cost_usd": None}} for r in records]


def test_batch_records_match_an_online_run_and_a_rerun_is_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        online = _run(
            _spec(tmp_path, server.base_url, mode="online"), tmp_path / "on", tmp_path / "c1"
        )
        online_bodies = sorted(server.requests, key=lambda b: json.dumps(b, sort_keys=True))
        chat_before = server.stats.total
        batch_spec = _spec(tmp_path, server.base_url)
        batched = _run(batch_spec, tmp_path / "b", tmp_path / "c2")
        assert server.stats.total == chat_before  # not one online chat request
        assert server.batches.created == 1 and server.batches.uploads == 1
        batch_bodies = sorted(server.batches.bodies, key=lambda b: json.dumps(b, sort_keys=True))
        again = _run(batch_spec, tmp_path / "again", tmp_path / "c2")
        assert server.batches.created == 1 and server.stats.total == chat_before
    assert batch_bodies == online_bodies  # the same requests, rendered once
    assert len(batched) == PLANNED and _without_cost(batched) == _without_cost(online)
    for on, b in zip(online, batched, strict=True):  # gpt-4o-mini's batch price is half
        assert b["usage"]["cost_usd"] == pytest.approx(on["usage"]["cost_usd"] / 2)
    assert all(r["cache_hit"] for r in again) and len(again) == PLANNED
    judge = read_json(tmp_path / "b" / "manifest.json")["judges"][0]
    state = read_json(tmp_path / "b" / "batches.json")["jobs"]
    assert judge["mode"] == "batch" and [j["batch_id"] for j in judge["batches"]] == [
        state[0]["batch_id"]
    ]
    assert state[0]["answered"] == PLANNED and state[0]["collected"]


def test_expired_batch_sends_the_unanswered_rest_online(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.batches.expire_after = 5
        records = _run(_spec(tmp_path, server.base_url), tmp_path / "run", tmp_path / "cache")
        assert len(server.batches.bodies) == 5 and server.stats.total == PLANNED - 5
    keys = {(r["judge_id"], r["pair_id"], r["member"]) for r in records}
    assert len(records) == PLANNED and len(keys) == PLANNED  # none lost, none twice
    assert not [r for r in records if r["status"] == "api_error"]
    job = read_json(tmp_path / "run" / "batches.json")["jobs"][0]
    assert job["status"] == "expired" and job["sent_online"] == PLANNED - 5


def test_error_lines_are_the_error_records_an_online_run_makes(tmp_path: Path) -> None:
    runs = {}
    for mode in ("online", "batch"):
        with FakeOpenAIServer() as server:
            server.script("proton pump", [http_error(400)] * 4)
            spec = _spec(tmp_path, server.base_url, mode=mode, model="fake-judge")
            runs[mode] = _run(spec, tmp_path / mode, tmp_path / f"cache-{mode}")
    errors = {m: [r for r in runs[m] if r["status"] == "api_error"] for m in runs}
    # each mode asked its own server: the (redacted) api_base, hence the key, differs
    keys = {m: [r.pop("request_key") for r in errors[m]] for m in errors}
    assert all(keys["online"]) and all(keys["batch"])
    assert errors["online"] and errors["batch"] == errors["online"]
    assert all(r["usage"]["cost_usd"] is None for r in runs["batch"])  # no batch price known
    job = read_json(tmp_path / "batch" / "batches.json")["jobs"][0]
    assert job["errors"] == len(errors["batch"]) and "no batch price" in job["cost_note"]


def test_upload_and_create_failures_are_retried(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.batches.fail("upload", [http_error(429, retry_after=0), http_error(500)])
        server.batches.fail("create", [http_error(503)])
        server.batches.fail("retrieve", [http_error(502)])
        records = _run(_spec(tmp_path, server.base_url), tmp_path / "run", tmp_path / "cache")
        assert server.batches.uploads == 1 and server.batches.created == 1
    assert len(records) == PLANNED and not [r for r in records if r["status"] == "api_error"]


def _cli_run(spec: Path, tmp: Path) -> tuple[int, str, str]:
    """`assay run SPEC` into tmp/run with its cache in tmp/cache (again: it resumes)."""
    return invoke(
        ["run", str(spec), "--output-dir", str(tmp / "run"), "--cache-dir", str(tmp / "cache")]
    )


def test_a_final_create_failure_is_one_line_and_resumable(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.batches.fail("create", [http_error(400)])
        spec = _spec(tmp_path, server.base_url)
        code, _, err = _cli_run(spec, tmp_path)
        lines = err.strip().splitlines()
        assert code == 2 and lines[-1].startswith("error: batch POST "), err
        assert "BadRequestError 400" in lines[-1] and "Traceback" not in err
        code, _, err = _cli_run(spec, tmp_path)
        assert code == 0, err
        assert server.batches.created == 1
    assert len(_records(tmp_path / "run")) == PLANNED


def test_spec_checks_mode_and_provider(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "http://127.0.0.1:9/v1")
    code, out, err = invoke(["run", str(spec), "--dry-run"])
    assert code == 0, err
    text = spec.read_text().replace('transport = "openai"', 'transport = "litellm"')
    spec.write_text(text.replace('"openai/gpt-4o-mini"', '"anthropic/claude-x"'))
    code, _, err = invoke(["run", str(spec), "--dry-run"])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert f"{spec}:15: field 'judges[0]': mode = \"batch\" needs an openai/<model> id" in lines[0]
    spec.write_text(text.replace("batch_poll_s", 'structured_output = "instructor"\nbatch_poll_s'))
    code, _, err = invoke(["run", str(spec), "--dry-run"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "field 'judges[0]'" in err and 'mode = "batch" cannot re-ask through instructor' in err
    spec.write_text(spec.read_text().replace('mode = "batch"', 'mode = "later"'))
    code, _, err = invoke(["run", str(spec), "--dry-run"])
    assert code == 2 and "judges[0]" in err and "mode" in err and len(err.splitlines()) == 1


def _wait_for(check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _kill_while_polling(server: FakeOpenAIServer, spec: Path, out: Path, cache: Path) -> bytes:
    """Run `spec` in a child process, SIGKILL it once it has polled its held batch twice
    (the batch recorded in batches.json and the manifest by then); its stderr."""
    server.batches.hold = True  # batches stay in progress until released
    argv = ["run", str(spec), "--output-dir", str(out), "--cache-dir", str(cache)]
    child = subprocess.Popen(
        [sys.executable, "-m", "assay", *argv],
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(lambda: server.batches.polls >= 2)
        state = read_json(out / "batches.json")["jobs"]
        manifest = read_json(out / "manifest.json")
        assert manifest["judges"][0]["batches"][0]["batch_id"] == state[0]["batch_id"]
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(10)
    server.batches.hold = False
    assert child.stderr is not None
    return child.stderr.read()


def test_killed_while_polling_resumes_the_same_batch(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, server.base_url)
        out, cache = tmp_path / "run", tmp_path / "cache"
        assert b"polls this batch" in _kill_while_polling(server, spec, out, cache)
        state = read_json(out / "batches.json")["jobs"]
        records = _run(spec, out, cache)
        assert server.batches.created == 1 and server.batches.uploads == 1
        assert server.stats.total == 0  # nothing sent online
    assert len(records) == PLANNED and not [r for r in records if r["status"] == "api_error"]
    assert read_json(out / "batches.json")["jobs"][0]["batch_id"] == state[0]["batch_id"]


def test_no_key_in_any_file_the_run_writes(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        _run(_spec(tmp_path, server.base_url), tmp_path / "run", tmp_path / "cache")
    batch_files = list((tmp_path / "run" / "batches").glob("*.jsonl"))
    assert len(batch_files) == 1
    first = json.loads(batch_files[0].read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"custom_id", "method", "url", "body"}
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path


def test_a_run_stopped_in_batch_mode_can_resume_online(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.batches.fail("upload", [http_error(401)])
        spec = _spec(tmp_path, server.base_url)
        code, _, err = _cli_run(spec, tmp_path)
        assert code == 2 and "AuthenticationError 401" in err, err
        text = spec.read_text().replace('mode = "batch"', 'mode = "online"')
        spec.write_text(text.replace("batch_poll_s = 0.02", "batch_poll_s = 5"))
        code, _, err = _cli_run(spec, tmp_path)
        assert code == 0, err
        assert server.batches.created == 0 and server.stats.total == PLANNED
    assert len(_records(tmp_path / "run")) == PLANNED


def test_requests_beyond_one_batch_s_limit_go_in_several(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("assay.runs.stages._batch.MAX_BATCH_REQUESTS", 5)
    with FakeOpenAIServer() as server:
        records = _run(_spec(tmp_path, server.base_url), tmp_path / "run", tmp_path / "cache")
        assert server.batches.created == 4 and server.stats.total == 0
    jobs = read_json(tmp_path / "run" / "batches.json")["jobs"]
    assert [j["requests"] for j in jobs] == [5, 5, 5, 1]
    assert len({(r["judge_id"], r["pair_id"], r["member"]) for r in records}) == PLANNED
    assert sum(j["answered"] for j in jobs) == PLANNED


def test_ctrl_c_while_polling_says_how_to_resume(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.batches.hold = True
        spec = _spec(tmp_path, server.base_url)

        def interrupt() -> None:
            _wait_for(lambda: server.batches.polls >= 1)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, delivered to the main thread

        threading.Thread(target=interrupt, daemon=True).start()
        code, _, err = _cli_run(spec, tmp_path)
        batch_id = read_json(tmp_path / "run" / "batches.json")["jobs"][0]["batch_id"]
        assert code == 130 and f"batch {batch_id} keeps running at the provider" in err, err
        assert "resume with: assay run" in err
        server.batches.hold = False
        code, _, err = _cli_run(spec, tmp_path)
        assert code == 0 and server.batches.created == 1, err


def test_online_judges_do_not_wait_for_the_batch(tmp_path: Path) -> None:
    spec = tmp_path / "mixed.toml"
    with FakeOpenAIServer() as server:
        server.batches.hold = True
        text = _spec(tmp_path, server.base_url).read_text()
        online = text.split("[[judges]]")[1].replace('mode = "batch"', 'mode = "online"')
        online = online.replace('"generic-support@1", ', "") + 'name = "online"\n'
        spec.write_text(text + "[[judges]]" + online, encoding="utf-8")
        answered_online_first: list[bool] = []

        def release() -> None:  # the batch is held until the online judge is done
            deadline = time.monotonic() + 20
            while server.stats.total < PLANNED // 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            answered_online_first.append(server.stats.total == PLANNED // 2)
            server.batches.hold = False

        threading.Thread(target=release, daemon=True).start()
        records = _run(spec, tmp_path / "run", tmp_path / "cache")
    assert answered_online_first == [True]
    assert len(records) == PLANNED + PLANNED // 2
    assert server.batches.created == 1 and len(server.batches.bodies) == PLANNED


def test_a_broken_state_file_or_result_line_is_one_line(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, server.base_url)
        out, cache = tmp_path / "run", str(tmp_path / "cache")
        argv = ["run", str(spec), "--output-dir", str(out), "--cache-dir", cache]
        argv.append("--no-progress")  # the bars' final lines go to stderr too
        server.batches.fail("create", [http_error(400)])
        assert invoke(argv)[0] == 2  # a run directory, no batch yet
        (out / "batches.json").write_text('{"jobs": [{"model": 3}]}', encoding="utf-8")
        code, _, err = invoke(argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{out / 'batches.json'}: field 'jobs.0." in err
        (out / "batches.json").unlink()
        server.batches.fail("content", [http_error(200, body={"not": "a line"})])
        code, _, err = invoke(argv)
        lines = err.strip().splitlines()
        assert code == 2 and lines[-1].startswith("error: batch-fake"), err
        assert ":1: field 'custom_id': not a batch result line" in lines[-1]


def test_killed_between_creating_and_recording_adopts_the_created_batch(tmp_path: Path) -> None:
    """A kill after the provider made the batch but before its id was recorded leaves a
    job with no batch id: resuming finds the batch by its input file, and creates none."""
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, server.base_url)
        out, cache = tmp_path / "run", tmp_path / "cache"
        _kill_while_polling(server, spec, out, cache)
        state = read_json(out / "batches.json")
        created = state["jobs"][0]["batch_id"]
        state["jobs"][0].update(batch_id=None, status="creating")  # the id never recorded
        (out / "batches.json").write_text(json.dumps(state), encoding="utf-8")
        records = _run(spec, out, cache)
        assert server.batches.created == 1 and server.batches.uploads == 1  # adopted
        assert server.stats.total == 0
    assert len(records) == PLANNED and not [r for r in records if r["status"] == "api_error"]
    assert read_json(out / "batches.json")["jobs"][0]["batch_id"] == created


def test_a_recorded_job_without_a_batch_creates_one_when_none_was_made(tmp_path: Path) -> None:
    """Killed after recording the job and before the provider made the batch: resuming
    finds no batch from that file (the provider lists others) and creates it once."""
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, server.base_url)
        out, cache = tmp_path / "run", tmp_path / "cache"
        server.batches.fail("create", [http_error(500)] * 3)  # every attempt of session 1
        options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
        with pytest.raises(Exception, match="batch POST"):
            Runner(load_spec(spec), options).run()
        assert read_json(out / "batches.json")["jobs"][0]["batch_id"] is None
        assert server.batches.created == 0 and server.batches.uploads == 1
        records = _run(spec, out, cache)
        assert server.batches.created == 1 and server.batches.uploads == 1
    assert len(records) == PLANNED and not [r for r in records if r["status"] == "api_error"]


def test_a_server_that_cannot_list_batches_gets_the_batch_created(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, server.base_url)
        out, cache = tmp_path / "run", tmp_path / "cache"
        server.batches.fail("create", [http_error(500)] * 3)
        options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
        with pytest.raises(Exception, match="batch POST"):
            Runner(load_spec(spec), options).run()
        server.batches.fail("list", [http_error(404)] * 3)  # no GET /batches on this server
        records = _run(spec, out, cache)
        assert server.batches.created == 1 and server.batches.uploads == 1
    assert len(records) == PLANNED
