"""Ctrl-C during `assay run`: what was saved, the command that resumes, exit 130; the
resumed run neither loses nor duplicates a judgment."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from _cli import invoke

from assay.runs import iter_records, read_json
from assay.testing import FakeOpenAIServer, reply

GOOD = json.dumps({"label": "fully_supported", "confidence": 0.9, "rationale": "r"})


def _wait_for_lines(path: Path, n: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return path.read_bytes().count(b"\n")
        time.sleep(0.02)
    return -1


def demo_spec(
    tmp: Path, base_url: str, *, name: str = "slow", bootstrap: int = 0, max_concurrency: int = 2
) -> Path:
    """The bundled ForceBench demo judged by one fake-server judge (also test_batched_writes)."""
    spec = tmp / f"{name}.toml"
    spec.write_text(
        f"""
name = "{name}"
bootstrap = {bootstrap}
[[datasets]]
path = "builtin:forcebench-demo"
[defaults]
max_concurrency = {max_concurrency}
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{base_url}"
""",
        encoding="utf-8",
    )
    return spec


def test_ctrl_c_says_what_was_saved_and_how_to_resume(tmp_path: Path) -> None:
    with FakeOpenAIServer(default=reply(GOOD), latency_s=0.05) as srv:
        spec = demo_spec(tmp_path, srv.base_url)
        out = tmp_path / "run"
        cache = tmp_path / "my-cache"
        cmd = [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", str(out)]
        cmd += ["--cache-dir", str(cache), "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert _wait_for_lines(out / "judgments.jsonl", 10, timeout=90) > 0
        finally:
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr and "never awaited" not in stderr
        saved = {r.key for r in iter_records(out / "judgments.jsonl")}
        assert 0 < len(saved) < 120
        manifest = read_json(out / "manifest.json")
        assert manifest["status"] == "interrupted"
        assert manifest["recorded_judgments"] == len(saved)
        found = re.search(
            rf"^interrupted: (\d+)/120 judgments saved in {re.escape(str(out))}; "
            r"resume with: (.+)$",
            stderr,
            re.M,
        )
        assert found, stderr
        assert int(found.group(1)) == len(saved)
        resume = shlex.split(found.group(2))
        assert resume == ["assay", "run", str(spec), "--output-dir", str(out)] + [
            "--cache-dir",
            str(cache),
        ]

        sent_before = srv.stats.total
        srv.latency_s = 0.0  # the slow replies only had to keep the first run in flight
        # the printed command, through the console script's `main()` in this process
        code, _, resume_err = invoke([*resume[1:], "--no-progress"])
        assert code == 0, resume_err
        # only what was not saved is sent again
        assert srv.stats.total - sent_before <= 120 - len(saved)
    keys = [r.key for r in iter_records(out / "judgments.jsonl")]
    assert len(keys) == len(set(keys)) == 120
    assert read_json(out / "manifest.json")["status"] == "complete"
