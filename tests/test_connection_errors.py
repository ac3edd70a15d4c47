"""A server that is not there: classified, reported against the spec field, and a run
that stops in seconds instead of spending every retry; `assay validate SPEC --ping`."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from _cli import invoke_as_process

from assay.judges import JudgeItem, LLMJudge, Status
from assay.models import ModelConfig, RetryPolicy, make_client
from assay.models._retry import CONNECTION_ERROR, connection_failure, describe_error
from assay.prompts import PromptRegistry
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer

GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def write_spec(tmp: Path, *blocks: str, name: str = "conn", defaults: str = "") -> Path:
    spec = tmp / f"{name}.toml"
    judges = "".join(
        f'[[judges]]\nmodels = ["{model}"]\nprompts = ["generic-support@1"]\n'
        + (f'api_base = "{base}"\n' if base else "")
        for model, base in (b.split(" ", 1) if " " in b else (b, "") for b in blocks)
    )
    spec.write_text(
        f'name = "{name}"\nbootstrap = 0\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
        f"[defaults]\n{defaults}\n{judges}",
        encoding="utf-8",
    )
    return spec


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`assay ARGS` in-process (tests/_cli.py): these tests read its output and exit status,
    which a separate interpreter would only make ~4 s slower."""
    return invoke_as_process(list(args), env=dict(os.environ), cwd=Path.cwd())


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_refused_connection_is_its_own_error_naming_host_and_port(transport: str) -> None:
    port = closed_port()
    config = ModelConfig(
        model="openai/fake",
        api_base=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_attempts=1),
        transport=transport,
    )
    judge = LLMJudge(make_client(config, None), PromptRegistry().get("generic-support@1"))
    judgment = asyncio.run(judge(JudgeItem(claim="c", evidence="e")))
    assert judgment.status is Status.API_ERROR
    # litellm says "InternalServerError 500 ... Connection error."; assay says what happened
    assert (
        judgment.error
        == f"{CONNECTION_ERROR}: cannot connect to 127.0.0.1:{port}: connection refused"
    )


def test_dns_failure_and_unreachable_host_are_classified() -> None:
    try:
        raise socket.gaierror(-2, "Name or service not known")
    except socket.gaierror as inner:
        try:
            raise RuntimeError("Connection error.") from inner
        except RuntimeError as outer:
            exc = outer
    failure = connection_failure(exc, "http://nowhere.invalid:8000/v1")
    assert failure is not None and failure.reason == "host not found"
    assert failure.where() == "nowhere.invalid:8000"
    assert describe_error(exc, "https://nowhere.invalid/v1")["message"] == (
        "cannot connect to nowhere.invalid:443: host not found"
    )
    assert connection_failure(RuntimeError("500 from the server")) is None


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_run_against_a_closed_port_stops_in_seconds(tmp_path: Path, transport: str) -> None:
    port = closed_port()
    base = f"http://127.0.0.1:{port}/v1"
    # one request at a time with the default retry budget (6 attempts, 1 s doubling
    # waits): before, every request burned ~40 s of retries
    defaults = f'max_concurrency = 1\ntransport = "{transport}"'
    spec = write_spec(tmp_path, f"openai/fake {base}", defaults=defaults)
    runner = Runner(load_spec(spec), RunOptions(output_dir=str(tmp_path / "out"), progress=False))
    started = time.monotonic()
    outcome = runner.run()
    took = time.monotonic() - started
    assert took < 15, f"took {took:.1f} s"
    assert outcome.status == "failed" and outcome.recorded == 0
    assert outcome.message == (
        f"cannot connect to 127.0.0.1:{port} (judges[0].api_base): connection refused "
        "— is the server running?"
    )
    manifest = read_json(tmp_path / "out" / "manifest.json")
    assert manifest["status"] == "failed" and manifest["recorded_judgments"] == 0
    assert list(iter_records(tmp_path / "out" / "judgments.jsonl")) == []

    # resumable: once the server is there, the same command completes the run
    with FakeOpenAIServer(port=port):
        again = Runner(
            load_spec(spec), RunOptions(output_dir=str(tmp_path / "out"), progress=False)
        )
        done = again.run()
    assert done.status == "complete" and done.recorded == 120


def test_cli_reports_one_line_and_exits_1(tmp_path: Path) -> None:
    port = closed_port()
    spec = write_spec(tmp_path, f"openai/fake http://127.0.0.1:{port}/v1")
    done = cli("run", str(spec), "--output-dir", str(tmp_path / "out"), "--no-progress")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    line = f"cannot connect to 127.0.0.1:{port} (judges[0].api_base): connection refused"
    assert [x for x in done.stderr.splitlines() if line in x] != []


@pytest.mark.parametrize(
    ("block", "field", "says"),
    [
        ("openai/fake localhost:8000/v1", "judges[0].api_base", "'http://localhost:8000/v1'"),
        ("openai/fake ftp://example.org/v1", "judges[0].api_base", "http:// or https://"),
    ],
)
def test_api_base_without_http_scheme_is_refused_before_any_request(
    tmp_path: Path, block: str, field: str, says: str
) -> None:
    spec = write_spec(tmp_path, block)
    done = cli("run", str(spec), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    located = re.match(
        rf"error: {re.escape(str(spec))}:\d+: field '{re.escape(field)}': ", lines[0]
    )
    assert len(lines) == 1 and located, lines
    assert says in lines[0]
    assert not (tmp_path / "out").exists()


def test_unknown_provider_is_refused_naming_the_model_field(tmp_path: Path) -> None:
    spec = tmp_path / "prov.toml"
    spec.write_text(
        'bootstrap = 0\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
        '[[judges]]\nmodels = ["openai/fake", "foo/bar"]\nprompts = ["generic-support@1"]\n'
        'api_base = "http://127.0.0.1:1/v1"\n',
        encoding="utf-8",
    )
    done = cli("run", str(spec), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"error: {spec}:5: field 'judges[0].models[1]': unknown provider 'foo'"
    )
    assert not (tmp_path / "out").exists()


def test_validate_ping_reports_each_target(tmp_path: Path) -> None:
    port = closed_port()
    with FakeOpenAIServer() as srv:
        spec = write_spec(
            tmp_path, f"openai/good {srv.base_url}", f"openai/down http://127.0.0.1:{port}/v1"
        )
        done = cli("validate", str(spec), "--ping")
        assert srv.stats.total == 1  # one request to the live target, nothing else
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    assert f"{spec}: spec ok" in out
    assert any(x.startswith("prompt ok: openai/good::generic-support@1 renders") for x in out)
    ok = [x for x in out if x.startswith("ok   openai/good @ ")]
    assert len(ok) == 1 and "model returned" in ok[0]
    fail = [x for x in out if x.startswith("FAIL openai/down @ ")]
    assert len(fail) == 1
    assert fail[0].endswith(f"cannot connect to 127.0.0.1:{port}: connection refused")


def test_validate_spec_without_ping_sends_nothing(tmp_path: Path) -> None:
    with FakeOpenAIServer() as srv:
        spec = write_spec(tmp_path, f"openai/good {srv.base_url}")
        done = cli("validate", str(spec))
        assert srv.stats.total == 0
    assert done.returncode == 0, done.stderr
    assert f"{spec}: spec ok" in done.stdout.splitlines()
