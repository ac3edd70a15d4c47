"""A run directory holds what a reader needs to audit and re-run it: each LLM record's
request key (the response-cache key of the request sent), the bytes of every prompt file
that is not a built-in, the spec as the run used it, and (with `bundle_data`) the data."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from pydantic import BaseModel
from test_factuality_run import ANSWERS, responder

from assay.core.manifest import Manifest
from assay.errors import RunError
from assay.models import ResponseCache
from assay.models._types import RawResponse
from assay.prompts._prompt import load_prompt_file
from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.runs.store._snapshot import RunSnapshot
from assay.testing import FakeOpenAIServer, reply

BUILTIN = Path(__file__).resolve().parents[1] / "assay" / "prompts" / "builtin"
SECRET = "sk-snapshot-test-0123456789abcdef"
GOOD = json.dumps({"label": "fully_supported", "confidence": 0.9, "rationale": "r"})


def _own_prompt(folder: Path, builtin: str, new_id: str) -> Path:
    """A copy of a built-in prompt under another id: a prompt file of the user's own."""
    text = (BUILTIN / f"{builtin}.v1.prompt").read_text(encoding="utf-8")
    path = folder / f"{new_id}.v1.prompt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(f'id = "{builtin}"', f'id = "{new_id}"', 1), encoding="utf-8")
    return path


def _spec(tmp: Path, base_url: str, *, extra: str = "", name: str = "snap") -> Path:
    """Pairs judged by a judge with an own and a built-in prompt and by a baseline;
    answers decomposed and verified with own prompts; a secret in a judge's extra_body."""
    _own_prompt(tmp / "prompts", "generic-support", "my-support")
    _own_prompt(tmp / "prompts", "decompose-conditional", "my-decompose")
    _own_prompt(tmp / "prompts", "verify-context", "my-verify")
    (tmp / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    spec = tmp / f"{name}.toml"
    spec.write_text(
        f"""
name = "{name}"
bootstrap = 0
prompt_dirs = ["prompts"]
{extra}
[defaults]
max_tokens = 300
max_attempts = 2
initial_wait_s = 0.01
[[datasets]]
path = "builtin:forcebench-demo"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["my-support@1", "generic-support@1"]
api_base = "{base_url}"
temperature = 0.5
seed = 7
extra_body = {{ api_key = "{SECRET}" }}
[[baselines]]
name = "token-overlap"
[factuality]
datasets = [{{ path = "answers.jsonl", format = "jsonl" }}]
[factuality.decomposer]
kind = "llm"
model = "openai/fake-decomposer"
prompt = "my-decompose@1"
api_base = "{base_url}"
[[factuality.verifiers]]
kind = "context"
model = "openai/fake-verifier"
prompt = "my-verify@1"
api_base = "{base_url}"
""",
        encoding="utf-8",
    )
    return spec


def _answer(body: dict[str, Any]) -> Any:
    """The factuality test's answers for decompose/verify requests; a verdict otherwise."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    if 'Target sentence:\n"""' in text or 'Statement:\n"""' in text:
        return responder(body)
    return reply(GOOD)


def _run(spec: Path, out: Path, **opts: Any) -> None:
    options = RunOptions(output_dir=str(out), progress=False, **opts)
    assert Runner(load_spec(spec), options).run().status == "complete"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def _llm_records(out: Path) -> list[dict[str, Any]]:
    files = ("judgments.jsonl", "sentences.jsonl", "verifications.jsonl")
    return [r for f in files for r in _lines(out / f) if r.get("model")]


def test_every_llm_record_names_the_key_its_response_is_cached_under(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    with FakeOpenAIServer(responder=_answer) as srv:
        spec = _spec(tmp_path, srv.base_url)
        _run(spec, tmp_path / "run", cache_dir=str(cache_dir))
        _run(spec, tmp_path / "nocache", use_cache=False)
    records = _llm_records(tmp_path / "run")
    kinds = {("judge_id" in r, "verifier_id" in r, "decomposer_id" in r) for r in records}
    assert len(kinds) == 3 and len(records) == 240 + 6 + 5  # judgments, sentences, verdicts
    cache = ResponseCache(cache_dir)
    try:
        for record in records:
            stored = cache.get(record["request_key"], RawResponse)
            assert stored is not None, record
            assert stored.content == record["raw_output"]
    finally:
        cache.close()
    baselines = [r for r in _lines(tmp_path / "run" / "judgments.jsonl") if not r["model"]]
    assert len(baselines) == 120 and all("request_key" not in r for r in baselines)
    # --no-cache sends the same requests: the same keys, though nothing was cached
    assert _keys(_llm_records(tmp_path / "nocache")) == _keys(records)


def _keys(records: list[dict[str, Any]]) -> dict[tuple[Any, ...], str]:
    """Each record's request key by what the record is about (files are in any order)."""
    about = ("judge_id", "pair_id", "member", "answer_id", "sentence_id", "claim_id")
    out = {(*(r.get(f) for f in about), r.get("verifier_id")): r["request_key"] for r in records}
    assert len(out) == len(records)
    return out


def _prompt_entries(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    fact = manifest["factuality"]
    entries = [j["prompt"] for j in manifest["judges"] if "prompt" in j]
    return [*entries, fact["decomposer"]["prompt"], *(v["prompt"] for v in fact["verifiers"])]


def test_own_prompts_are_snapshotted_byte_for_byte_and_built_ins_are_not(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answer) as srv:
        _run(_spec(tmp_path, srv.base_url), tmp_path / "run")
    out = tmp_path / "run"
    prompts = _prompt_entries(read_json(out / "manifest.json"))
    own = [p for p in prompts if not p["builtin"]]
    assert sorted(p["id"] for p in own) == ["my-decompose", "my-support", "my-verify"]
    for p in own:
        data = Path(p["file"]).read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        assert p["snapshot"] == f"snapshot/prompts/{sha[:16]}-{Path(p['file']).name}"
        assert (out / p["snapshot"]).read_bytes() == data
        assert p["sha256"] == p["file_sha256"] == sha
    builtin = [p for p in prompts if p["builtin"]]
    assert [p["id"] for p in builtin] == ["generic-support"]
    assert "snapshot" not in builtin[0]
    assert len(list((out / "snapshot" / "prompts").iterdir())) == 3
    assert not (out / "snapshot" / "data").exists()  # bundle_data is off by default


class Graded(BaseModel):
    label: str
    confidence: float


def test_a_custom_output_model_snapshots_the_file_and_records_its_own_hash(
    tmp_path: Path,
) -> None:
    path = _own_prompt(tmp_path / "prompts", "generic-support", "my-graded")
    prompt = load_prompt_file(path).with_output_model(Graded)
    file_sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert prompt.sha256 != file_sha  # derived: the file's and the schema's
    manifest = Manifest(judges=[{"id": "j", "prompt": prompt.identity()}])
    RunSnapshot(tmp_path / "run").annotate(manifest)
    entry = manifest.judges[0]["prompt"]
    assert entry["sha256"] == prompt.sha256 and entry["file_sha256"] == file_sha
    assert (tmp_path / "run" / entry["snapshot"]).read_bytes() == path.read_bytes()
    path.write_text(path.read_text() + "\n", encoding="utf-8")  # changed after loading
    with pytest.raises(RunError, match="prompt file changed since the run loaded it"):
        RunSnapshot(tmp_path / "other").annotate(
            Manifest(judges=[{"id": "j", "prompt": prompt.identity()}])
        )
    assert not (tmp_path / "other").exists()  # nothing copied


def test_bundle_data_copies_each_dataset_file(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answer) as srv:
        _run(_spec(tmp_path, srv.base_url, extra="bundle_data = true"), tmp_path / "run")
    out = tmp_path / "run"
    manifest = read_json(out / "manifest.json")
    infos = [*manifest["datasets"], *manifest["factuality"]["datasets"]]
    assert len(infos) == 2
    for info in infos:
        data = Path(info["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"]
        assert info["snapshot"] == f"snapshot/data/{info['sha256'][:16]}-{Path(info['path']).name}"
        assert (out / info["snapshot"]).read_bytes() == data


def test_spec_resolved_holds_the_settings_used_with_secrets_redacted(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answer) as srv:
        _run(_spec(tmp_path, srv.base_url), tmp_path / "run")
    text = (tmp_path / "run" / "manifest.json").read_text(encoding="utf-8")
    assert SECRET not in text
    manifest = json.loads(text)
    judge = manifest["spec_resolved"]["judges"][0]
    assert judge["temperature"] == 0.5 and judge["seed"] == 7  # the block's own
    assert judge["max_tokens"] == 300 and judge["max_attempts"] == 2  # from [defaults]
    assert judge["structured_output"] == "auto" and judge["timeout_s"] == 60.0  # assay's
    assert judge["extra_body"]["api_key"] == "<redacted>"
    decomposer = manifest["spec_resolved"]["factuality"]["decomposer"]
    assert decomposer["max_tokens"] == 300 and decomposer["temperature"] == 0.0
    assert manifest["spec_resolved"]["bootstrap"] == 0
    written = {"max_tokens": 300, "max_attempts": 2, "initial_wait_s": 0.01}
    assert manifest["spec"]["defaults"] == written
    assert "max_tokens" not in manifest["spec"]["judges"][0]  # `spec` stays as written


def _cli_run(spec: Path, out: Path) -> list[str]:
    run = [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", str(out)]
    return [*run, "--no-cache", "--no-progress"]


def _kill_after(cmd: list[str], path: Path, lines: int) -> None:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and len(path.read_bytes().splitlines()) >= lines:
                break
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)


def test_a_killed_run_resumes_with_its_snapshots_and_refuses_a_changed_prompt(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=_answer, latency_s=0.05) as srv:
        spec = _spec(tmp_path, srv.base_url, extra="bundle_data = true")
        out = tmp_path / "run"
        _kill_after(_cli_run(spec, out), out / "judgments.jsonl", 20)
        assert read_json(out / "manifest.json")["status"] == "running"  # killed mid-run
        before = sorted(p.name for p in (out / "snapshot").rglob("*") if p.is_file())
        assert len(before) == 5  # 3 prompts, 2 datasets: taken when the run started
        resumed = subprocess.run(_cli_run(spec, out), capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "complete"
    assert sorted(p.name for p in (out / "snapshot").rglob("*") if p.is_file()) == before
    for p in _prompt_entries(manifest):
        assert p["builtin"] or (out / p["snapshot"]).read_bytes() == Path(p["file"]).read_bytes()
    judgments = _lines(out / "judgments.jsonl")
    assert all(r["request_key"] for r in judgments if r["model"])
    prompt = tmp_path / "prompts" / "my-support.v1.prompt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nOne more line.\n")
    code, _, err = invoke(["run", str(spec), "--output-dir", str(out), "--no-cache"])
    assert code == 2 and "prompt my-support@1 of openai/fake-judge::my-support@1" in err, err
    assert "changed since this run started" in err and "Traceback" not in err
