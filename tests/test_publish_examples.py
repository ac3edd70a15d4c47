"""Every example run survives publishing: run → pack → unpack elsewhere → verify passes.

The examples are what a newcomer runs first and what a reader is most likely to be sent;
each must pack (no secret in it), unpack with every checksum holding, and verify with
every check passing from the unpacked copy alone. The hosted example runs against the
loopback OpenAI-compatible server, as the README's test does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.testing import Behavior, FakeOpenAIServer, reply

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SPECS = ["demo", "forcebench-demo", "compare-items", "policies", "hosted"]


def _answers_like_a_model(body: dict[str, Any]) -> Behavior | None:
    """A decomposition request gets its target sentence back as its one claim; the rest
    get the server's default verdict."""
    text = str(body["messages"][-1].get("content") or "")
    _, marker, sentence = text.rpartition("Target sentence:")
    if not marker or not sentence.strip():
        return None
    return reply(json.dumps({"claims": [sentence.strip().splitlines()[0]]}))


def _run(name: str, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["run", str(EXAMPLES / f"{name}.toml"), "--output-dir", str(out), "--no-progress"]
    if name != "hosted":
        code, _, err = invoke(argv)
        assert code == 0, err
        return
    with FakeOpenAIServer(responder=_answers_like_a_model) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000000000")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, _, err = invoke(argv)
        assert code == 0, err
        assert server.stats.total > 0


@pytest.mark.parametrize("name", SPECS)
def test_an_example_run_packs_unpacks_and_verifies(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "author" / name
    _run(name, run, monkeypatch)
    archive = tmp_path / f"{name}.tar.gz"
    code, _, err = invoke(["pack", str(run), "-o", str(archive)])
    assert code == 0, err
    shutil.rmtree(tmp_path / "author")  # the reader has the archive, not the author's folder
    unpacked = tmp_path / "reader" / name
    unpacked.parent.mkdir()
    code, out, err = invoke(["unpack", str(archive), "-o", str(unpacked)])
    assert code == 0, err
    code, out, err = invoke(["verify", str(unpacked), "--format", "json"])
    assert code == 0, out + err
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    for name_ in ("records", "metrics", "datasets", "prompts", "requests"):
        assert checks[name_]["result"] == "pass", checks[name_]
    if name == "hosted":  # its model calls: every request re-rendered, every prompt checked
        assert checks["requests"]["checked"] > 0 and checks["prompts"]["checked"] > 0
