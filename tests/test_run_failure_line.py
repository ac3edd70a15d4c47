"""A run that ends without completing says so on stderr in one `error:` line:
docs/reference/errors.md promises that every failure ends in a line starting `error:`,
but a failed run printed only its reason ("cannot connect to ..."), which `grep ^error:`
misses. The stdout status line (`failed: 0/120 judgments ...`) stays as it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._cli import invoke

SPEC = """name = "rf"
[[datasets]]
path = "builtin:forcebench-demo"
[failure]
max_failed_fraction = {fraction}
[[judges]]
models = ["openai/x"]
prompts = ["generic-support@1"]
api_base = "{base}"
max_attempts = 1
"""


def _stderr_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]


def test_unreachable_server_ends_in_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(fraction=0.05, base="http://127.0.0.1:9/v1"), encoding="utf-8")
    code, out, err = invoke(
        ["run", str(spec), "--output-dir", str(tmp_path / "o"), "--no-progress"]
    )
    assert code == 1
    assert re.match(r"failed: \d+/120 judgments \(\d+ new\) → ", out.splitlines()[-1])
    lines = _stderr_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("error: run failed: cannot connect to 127.0.0.1:9"), lines
    assert "judges[0].api_base" in lines[0]


def test_failure_budget_exceeded_ends_in_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: object
) -> None:
    from assay.testing import FakeOpenAIServer, http_error

    assert isinstance(server, FakeOpenAIServer)
    server.default = http_error(400, body={"error": {"message": "bad request"}})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(fraction=0.05, base=server.base_url), encoding="utf-8")
    code, out, err = invoke(
        ["run", str(spec), "--output-dir", str(tmp_path / "o"), "--no-progress"]
    )
    assert code == 1 and out.splitlines()[-1].startswith("failed: ")
    lines = _stderr_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: run failed: "), err
    assert "failure limit" in lines[0] and "--retry-errors" in lines[0]
