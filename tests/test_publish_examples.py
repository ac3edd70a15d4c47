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
SPECS = sorted(p.stem for p in EXAMPLES.glob("*.toml"))  # every example, as it is added


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


def test_the_hosted_example_reruns_from_its_unpacked_archive_with_no_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hosted example (judges, decomposer and verifier on a model) published, then
    re-run by a reader from the unpacked archive against the same deterministic server:
    the metrics are the same numbers and the drift report finds no drift."""
    with FakeOpenAIServer(responder=_answers_like_a_model) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000000000")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        run = tmp_path / "author" / "hosted"
        argv = ["run", str(EXAMPLES / "hosted.toml"), "--output-dir", str(run), "--no-progress"]
        assert invoke(argv)[0] == 0
        archive = tmp_path / "hosted.tar.gz"
        assert invoke(["pack", str(run), "-o", str(archive)])[0] == 0
        unpacked = tmp_path / "reader" / "hosted"
        unpacked.parent.mkdir()
        assert invoke(["unpack", str(archive), "-o", str(unpacked)])[0] == 0
        sent = server.stats.total
        new = tmp_path / "reader" / "rerun"
        code, out, err = invoke(
            ["rerun", str(unpacked), "-o", str(new), "--no-progress", "-f", "json"]
        )
        assert code == 0, out + err
        assert server.stats.total > sent  # sent again, not read from a cache
    assert json.loads(out)["drift_free"] is True

    def metrics(path: Path) -> dict[str, Any]:
        data = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
        return {k: v for k, v in data.items() if k != "records_sha256"}

    assert metrics(new) == metrics(unpacked)
