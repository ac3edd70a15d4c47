"""`assay rerun`: a run re-executed from its directory alone (the ForceBench demo's
baselines, an items run on the loopback server), its drift report (zero against a
deterministic server, the right agreement against one that changes its answers), and
the refusals: changed data, a missing prompt snapshot, a changed built-in, an output
inside the original. The original directory is never written (hashed before/after)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from sklearn.metrics import cohen_kappa_score
from test_items_run import KEY_ENV, SINGLE, _says_supported, _single_csv, _spec

from assay.compare._drift import drift_report
from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer, reply

DEMO_SPEC = """
name = "demo"
bootstrap = 200
[[datasets]]
name = "forcebench-demo"
path = "builtin:forcebench-demo"
[[baselines]]
name = "citation-presence"
[[baselines]]
name = "token-overlap"
[factuality]
datasets = [{ name = "factuality-demo", path = "builtin:factuality-demo" }]
decomposer = { kind = "sentence" }
verifiers = [{ kind = "overlap", threshold = 0.7 }]
"""
JUDGE = "openai/items-judge::support-check@1"
FLIPPED = ("Aspirin", "Water")  # the claims a changing server answers the other way


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _records(path: Path) -> list[dict[str, Any]]:
    """The records minus what differs between any two runs (when, how long), in one
    order (requests are sent concurrently, so lines are written as answers come)."""
    volatile = {"recorded_at", "latency_s"}
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [{k: v for k, v in json.loads(x).items() if k not in volatile} for x in lines]
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True))


def _metrics(run: Path) -> dict[str, Any]:
    return {k: v for k, v in _json(run / "metrics.json").items() if k != "records_sha256"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("demo")
    (tmp / "spec.toml").write_text(DEMO_SPEC, encoding="utf-8")
    outcome = run_spec(tmp / "spec.toml", RunOptions(output_dir=str(tmp / "run")))
    assert outcome.status == "complete", outcome.message
    return tmp / "run"


class Server:
    """The loopback server, answering as `_says_supported` until `flip` is set, then
    the other way for the claims in FLIPPED, as another model id (an alias moved)."""

    def __init__(self) -> None:
        self.flip = False

    def __call__(self, body: dict[str, Any]) -> Any:
        answer = _says_supported(body)
        text = body["messages"][-1]["content"]
        if self.flip and any(f"CLAIM: {word}" in text for word in FLIPPED):
            label = json.loads(answer.content)["label"]
            other = "unsupported" if label == "supported" else "supported"
            return reply(json.dumps({"label": other}), model_returned="items-judge-v2")
        return answer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeOpenAIServer, Server]]:
    monkeypatch.setenv(KEY_ENV, "sk-items-test-key-123456")
    responder = Server()
    with FakeOpenAIServer(responder=responder) as srv:
        yield srv, responder


def _items_run(tmp: Path, srv: FakeOpenAIServer, *, bundle: bool = False) -> Path:
    _single_csv(tmp)
    spec = _spec(tmp, srv.base_url, SINGLE)
    if bundle:
        spec.write_text("bundle_data = true\n" + spec.read_text(encoding="utf-8"), "utf-8")
    out = tmp / "run"
    outcome = run_spec(spec, RunOptions(output_dir=str(out), cache_dir=str(tmp / "cache")))
    assert outcome.status == "complete", outcome.message
    return out


def test_the_demo_reruns_to_the_same_metrics_and_records_with_no_drift(
    demo: Path, tmp_path: Path
) -> None:
    before = _tree_hash(demo)
    code, out, err = invoke(["rerun", str(demo), "-o", str(tmp_path / "new"), "--n-boot", "200"])
    assert code == 0, out + err
    new = tmp_path / "new"
    assert _metrics(new) == _metrics(demo)
    for name in ("judgments.jsonl", "claims.jsonl", "verifications.jsonl"):
        assert _records(new / name) == _records(demo / name)
    assert "no drift:" in out
    report = drift_report(demo, new, n_boot=200)
    assert report.drift_free
    sizes = {j.judge: j.compared for j in report.judges}
    assert sizes == {
        "baseline:citation-presence": 120,
        "baseline:token-overlap": 120,
        "baseline:overlap": 29,  # the factuality verifier, on each claim
    }
    for judge in report.judges:
        assert judge.only_original == judge.only_rerun == 0
        assert judge.agreement == 1.0 and judge.identical_raw == 1.0
        assert judge.kappa in (1.0, None)  # None: one label throughout (kappa undefined)
    assert report.metrics and all(m.diff == 0.0 for m in report.metrics)
    rerun_of = _json(new / "manifest.json")["rerun_of"]
    assert rerun_of["run_id"] == _json(demo / "manifest.json")["run_id"]
    assert (
        rerun_of["manifest_sha256"]
        == hashlib.sha256((demo / "manifest.json").read_bytes()).hexdigest()
    )
    assert _tree_hash(demo) == before


def test_an_items_run_on_a_deterministic_server_reruns_with_no_drift_and_no_cache(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = _items_run(tmp_path, srv)
    before, sent = _tree_hash(run), len(srv.requests)
    new = tmp_path / "new"
    code, out, err = invoke(["rerun", str(run), "-o", str(new), "--no-progress", "-f", "json"])
    assert code == 0, out + err
    assert len(srv.requests) - sent == 6  # the original's cache was not read
    data = json.loads(out)
    assert data["drift_free"] is True
    (judge,) = data["judges"]
    assert judge["judge"] == JUDGE and judge["compared"] == 6
    assert judge["agreement"] == 1.0 and judge["kappa"] == 1.0 and judge["identical_raw"] == 1.0
    assert _metrics(new) == _metrics(run)
    assert _records(new / "item_judgments.jsonl") == _records(run / "item_judgments.jsonl")
    prompt = _json(new / "manifest.json")["judges"][0]["prompt"]
    assert (new / prompt["snapshot"]).read_bytes() == (run / prompt["snapshot"]).read_bytes()
    assert _tree_hash(run) == before
    assert invoke(["verify", str(new)])[0] == 0  # a re-run is an ordinary run directory
    sent = len(srv.requests)
    code, out, err = invoke(["rerun", str(run), "-o", str(new), "--no-progress"])
    assert code == 0 and "(0 new)" in out, out + err  # the same command resumes: all done
    assert len(srv.requests) == sent
    again = tmp_path / "cached"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert invoke(["rerun", str(run), "-o", str(again), "--no-progress", *cache])[0] == 0
    assert len(srv.requests) == sent  # --cache-dir: answered from the named cache


def test_a_server_that_changes_its_answers_shows_drift_with_the_right_agreement(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, responder = server
    run = _items_run(tmp_path, srv)
    responder.flip = True
    new = tmp_path / "new"
    code, out, err = invoke(["rerun", str(run), "-o", str(new), "--no-progress"])
    assert code == 0, out + err
    assert "drift: 1 of 1 judges moved" in out
    report = drift_report(run, new, n_boot=200)
    (judge,) = report.judges
    assert not report.drift_free and judge.agreement == pytest.approx(4 / 6)
    assert judge.identical_raw == pytest.approx(4 / 6)
    before = [json.loads(x) for x in (run / "item_judgments.jsonl").read_text().splitlines()]
    after = {
        r["item_id"]: r["label"] for r in map(json.loads, (new / "item_judgments.jsonl").open())
    }
    a = [r["label"] for r in before]
    b = [after[r["item_id"]] for r in before]
    assert judge.kappa == pytest.approx(cohen_kappa_score(a, b))
    assert sorted(k.split("/")[1] for k in judge.changed) == ["q1", "q2"]
    assert judge.returned_original == ["items-judge"]
    assert judge.returned_rerun == ["items-judge", "items-judge-v2"]
    assert "answered as items-judge originally and as items-judge, items-judge-v2" in out
    deltas = {m.metric: m for m in report.metrics}
    assert deltas["accuracy"].diff == pytest.approx(
        deltas["accuracy"].rerun - deltas["accuracy"].original
    )
    code, out, _ = invoke(["rerun", "--drift-only", str(run), str(new), "-f", "json"])
    assert code == 0 and json.loads(out)["drift_free"] is False


def test_changed_data_is_refused_unless_allowed_and_a_bundled_copy_is_used(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = _items_run(tmp_path, srv)
    data = tmp_path / "mine.csv"
    data.write_text(data.read_text(encoding="utf-8").replace("Aspirin", "Ibuprofen"), "utf-8")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new"), "--no-progress"])
    assert code == 2 and not (tmp_path / "new").exists()
    (line,) = err.strip().splitlines()
    assert "dataset 'mine'" in line and "changed since the run" in line
    assert "--allow-data-change" in line
    code, out, err = invoke(
        ["rerun", str(run), "-o", str(tmp_path / "new"), "--no-progress", "--allow-data-change"]
    )
    assert code == 0, out + err
    assert _json(tmp_path / "new" / "manifest.json")["rerun_of"]["data_changed"] == ["mine"]
    bundled_dir = tmp_path / "bundled"
    bundled_dir.mkdir()
    bundled = _items_run(bundled_dir, srv, bundle=True)
    (bundled_dir / "mine.csv").write_text("id,response\n", encoding="utf-8")
    code, out, err = invoke(["rerun", str(bundled), "-o", str(tmp_path / "b2"), "--no-progress"])
    assert code == 0, out + err
    rerun_of = _json(tmp_path / "b2" / "manifest.json")["rerun_of"]
    assert rerun_of["data_from_snapshot"] == ["mine"] and rerun_of["data_changed"] == []
    assert _metrics(tmp_path / "b2") == _metrics(bundled)


def test_a_run_packed_with_data_reruns_elsewhere_from_its_archive_alone(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    source = tmp_path / "author"
    source.mkdir()
    run = _items_run(source, srv)
    assert invoke(["pack", str(run), "-o", str(tmp_path / "run.tar.gz"), "--with-data"])[0] == 0
    (tmp_path / "reader").mkdir()
    unpacked = tmp_path / "reader" / "run"
    assert invoke(["unpack", str(tmp_path / "run.tar.gz"), "-o", str(unpacked)])[0] == 0
    shutil.rmtree(source)  # the author's data, prompts and run are gone
    new = tmp_path / "reader" / "again"
    code, out, err = invoke(["rerun", str(unpacked), "-o", str(new), "--no-progress"])
    assert code == 0, out + err
    assert "no drift:" in out
    assert _json(new / "manifest.json")["rerun_of"]["data_from_snapshot"] == ["mine"]
    assert _metrics(new) == _metrics(unpacked)


def test_a_missing_prompt_snapshot_is_refused_naming_the_prompt(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = Path(shutil.copytree(_items_run(tmp_path, srv), tmp_path / "copy"))
    shutil.rmtree(run / "snapshot")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new")])
    assert code == 2 and not (tmp_path / "new").exists()
    (line,) = err.strip().splitlines()
    assert "prompt support-check@1: its snapshot snapshot/prompts/" in line
    assert "is missing from the run directory" in line


def test_a_run_without_snapshots_uses_the_recorded_prompt_file_only_if_unchanged(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = Path(shutil.copytree(_items_run(tmp_path, srv), tmp_path / "copy"))
    shutil.rmtree(run / "snapshot")
    manifest = _json(run / "manifest.json")
    for judge in manifest["judges"]:  # as written before snapshots
        judge["prompt"].pop("snapshot", None)
        judge["prompt"].pop("file_sha256", None)
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new"), "--no-progress"])
    assert code == 0, out + err
    prompt = tmp_path / "prompts" / "support-check.v1.prompt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nOne more line.\n", "utf-8")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new2")])
    assert code == 2
    assert "prompt support-check@1: the run directory has no snapshot of it" in err
    assert "support-check.v1.prompt" in err and "changed since the run" in err


def test_a_builtin_prompt_other_than_the_installed_one_is_refused(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = Path(shutil.copytree(_items_run(tmp_path, srv), tmp_path / "copy"))
    manifest = _json(run / "manifest.json")
    builtin = next(j["prompt"] for j in manifest["judges"] if j["prompt"]["builtin"])
    builtin["sha256"] = "0" * 64
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new")])
    assert code == 2
    assert "built-in prompt pairwise-preference@1 differs from the one the run used" in err


def test_a_spec_value_redacted_in_the_manifest_is_refused_naming_its_field(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = Path(shutil.copytree(_items_run(tmp_path, srv), tmp_path / "copy"))
    manifest = _json(run / "manifest.json")
    manifest["spec"]["judges"][0]["extra_body"] = {"token": "<redacted>"}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new")])
    assert code == 2 and not (tmp_path / "new").exists()
    assert "spec field judges[0].extra_body.token was redacted" in err


def test_bad_invocations_are_one_line_errors(demo: Path, tmp_path: Path) -> None:
    for argv, says in [
        (["rerun", str(demo)], "--output-dir is required"),
        (["rerun", str(demo), "-o", str(demo / "inside")], "outside the run being re-run"),
        (["rerun", "--drift-only", str(demo)], "needs two run directories"),
        (["rerun", str(demo), "-o", str(tmp_path / "n"), "-f", "csv"], "--format 'csv'"),
    ]:
        code, out, err = invoke(argv)
        assert code == 2 and says in err, (argv, out, err)
        assert len(err.strip().splitlines()) == 1
    assert not (demo / "inside").exists()


def test_dry_run_shows_the_requests_and_sends_nothing(
    server: tuple[FakeOpenAIServer, Server], tmp_path: Path
) -> None:
    srv, _ = server
    run = _items_run(tmp_path, srv)
    sent = len(srv.requests)
    code, out, err = invoke(["rerun", str(run), "-o", str(tmp_path / "new"), "--dry-run"])
    assert code == 0, out + err
    assert "dry run" in out and JUDGE in out
    assert len(srv.requests) == sent and not (tmp_path / "new").exists()
