"""The files a run reads besides its datasets and prompts (a MedScore evidence file, a
retrieval verifier's corpus, the gate's corpus): recorded in the manifest by spec field
and sha256, copied by `bundle_data` and `pack --with-data`, checked by `assay verify`,
and found again by `assay rerun` (the original if unchanged, else the bundled copy,
else refused unless `--allow-data-change`) with the spec field pointed at the file used."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.audit import verify_run
from assay.core.manifest import InputFileInfo
from assay.errors import RunError
from assay.runs import RunOptions, run_spec
from assay.runs.rerun._inputs import input_file, set_field
from assay.runs.store._inputs_snapshot import InputFiles
from assay.testing import FakeOpenAIServer, reply

EVIDENCE = "factuality.datasets[0].evidence_file"
VERIFIER_CORPUS = "factuality.verifiers[1].corpus"
GATE_CORPUS = "gate.corpus"
ROWS = [
    {"id": "m1", "question": "Does walking lower blood pressure?", "response": "Walking "
     "lowers blood pressure. The canal opened in 1914.", "doctor_response": None},
    {"id": "m2", "question": "When did the Panama Canal open?", "response": "The Panama "
     "Canal opened in 1914.", "doctor_response": None},
]  # fmt: skip
EVIDENCE_TEXT = {"m1": "Walking lowers blood pressure in adults.", "m2": "It opened in 1914."}
CORPUS = [
    {"id": "p1", "text": "Walking lowers blood pressure in adults."},
    {"id": "p2", "text": "The Panama Canal opened in 1914."},
]


def _spec(base_url: str, bundle: bool) -> str:
    return f"""
name = "aux"
bootstrap = 0
bundle_data = {"true" if bundle else "false"}
[factuality]
decomposer = {{ kind = "sentence" }}
[[factuality.datasets]]
name = "med"
path = "med.jsonl"
format = "medscore-input"
evidence_file = "evidence.json"
[[factuality.verifiers]]
kind = "overlap"
threshold = 0.5
[[factuality.verifiers]]
kind = "retrieval"
model = "openai/fake-verifier"
api_base = "{base_url}"
corpus = "passages.jsonl"
top_k = 1
[gate]
model = "baseline:overlap"
corpus = "gate-passages.jsonl"
k1_initial = 1
k1_expanded = 2
top_k = 1
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=lambda body: reply("Answer: True")) as srv:
        yield srv


def _author(tmp: Path, srv: FakeOpenAIServer, *, bundle: bool = False) -> Path:
    """The author's folder (spec, answers, evidence, corpora) and its run, elsewhere."""
    folder = tmp / "author"
    folder.mkdir()
    (folder / "med.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), "utf-8")
    (folder / "evidence.json").write_text(json.dumps(EVIDENCE_TEXT), "utf-8")
    lines = "".join(json.dumps(p) + "\n" for p in CORPUS)
    (folder / "passages.jsonl").write_text(lines, "utf-8")
    (folder / "gate-passages.jsonl").write_text(lines, "utf-8")
    (folder / "spec.toml").write_text(_spec(srv.base_url, bundle), "utf-8")
    out = tmp / "runs" / "aux"
    outcome = run_spec(folder / "spec.toml", RunOptions(output_dir=str(out), progress=False))
    assert outcome.status == "complete", outcome.message
    return out


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _metrics(run: Path) -> dict[str, Any]:
    return {k: v for k, v in _json(run / "metrics.json").items() if k != "records_sha256"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_input_file_is_recorded_by_its_spec_field_and_sha256(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server)
    folder = tmp_path / "author"
    inputs = {i["field"]: i for i in _json(run / "manifest.json")["inputs"]}
    assert set(inputs) == {EVIDENCE, VERIFIER_CORPUS, GATE_CORPUS}
    for field, name in [
        (EVIDENCE, "evidence.json"),
        (VERIFIER_CORPUS, "passages.jsonl"),
        (GATE_CORPUS, "gate-passages.jsonl"),
    ]:
        entry = inputs[field]
        assert Path(entry["path"]) == (folder / name).resolve()
        assert entry["sha256"] == _sha(folder / name) and entry["kind"] == "file"
        assert "snapshot" not in entry  # not bundled
    verifier = _json(run / "manifest.json")["factuality"]["verifiers"][1]
    assert verifier["retriever"]["corpus"]["sha256"] == inputs[VERIFIER_CORPUS]["sha256"]
    # the evidence file is what the overlap verifier checked the claims against
    claims = [json.loads(x) for x in (run / "verifications.jsonl").read_text().splitlines()]
    assert any(c["status"] == "ok" for c in claims)


def test_verify_names_a_tampered_evidence_file_and_corpus(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server)
    assert verify_run(run).checks[3].result == "pass"
    folder = tmp_path / "author"
    recorded = _sha(folder / "evidence.json")
    (folder / "evidence.json").write_text(json.dumps({"m1": "Edited.", "m2": "Edited."}))
    with (folder / "gate-passages.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "p3", "text": "A passage added later."}) + "\n")
    check = next(c for c in verify_run(run).checks if c.name == "datasets")
    assert check.result == "fail" and check.failed == 2
    evidence, gate = check.problems
    assert evidence.startswith(f"{EVIDENCE}: file {(folder / 'evidence.json').resolve()}")
    assert f"has sha256 {_sha(folder / 'evidence.json')[:12]}, the run read {recorded[:12]}" in (
        evidence
    )
    assert gate.startswith(f"{GATE_CORPUS}: file ") and "has sha256" in gate
    code, out, _ = invoke(["verify", str(run)])
    assert code == 1 and EVIDENCE in out


def test_rerun_refuses_a_changed_corpus_unless_allowed_and_repoints_the_field(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server)
    corpus = tmp_path / "author" / "passages.jsonl"
    with corpus.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "p9", "text": "Canal passages were added."}) + "\n")
    new = tmp_path / "new"
    code, out, err = invoke(["rerun", str(run), "-o", str(new), "--no-progress"])
    assert code == 2 and not new.exists()
    (line,) = err.strip().splitlines()
    assert f"{VERIFIER_CORPUS}: {corpus.resolve()} changed since the run" in line
    assert "--allow-data-change" in line
    argv = ["rerun", str(run), "-o", str(new), "--no-progress", "--allow-data-change"]
    code, out, err = invoke(argv)
    assert code == 0, out + err
    manifest = _json(new / "manifest.json")
    assert manifest["rerun_of"]["inputs_changed"] == [VERIFIER_CORPUS]
    assert manifest["rerun_of"]["inputs_from_snapshot"] == []
    verifier = manifest["spec"]["factuality"]["verifiers"][1]
    assert verifier["corpus"] == str(corpus.resolve())  # pointed at the file used
    changed = {i["field"]: i["sha256"] for i in manifest["inputs"]}
    assert changed[VERIFIER_CORPUS] == _sha(corpus)  # the re-run records what it read


def test_rerun_reads_the_bundled_copies_when_the_authors_folder_is_gone(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server, bundle=True)
    inputs = {i["field"]: i for i in _json(run / "manifest.json")["inputs"]}
    for entry in inputs.values():
        copy = run / entry["snapshot"]
        assert entry["snapshot"].startswith("snapshot/data/") and _sha(copy) == entry["sha256"]
    shutil.move(tmp_path / "author", tmp_path / "moved-away")
    check = next(c for c in verify_run(run).checks if c.name == "datasets")
    assert check.result == "pass" and check.checked == 4  # med.jsonl and three inputs
    new = tmp_path / "new"
    code, out, err = invoke(["rerun", str(run), "-o", str(new), "--no-progress", "-f", "json"])
    assert code == 0, out + err
    assert json.loads(out)["drift_free"] is True
    manifest = _json(new / "manifest.json")
    assert sorted(manifest["rerun_of"]["inputs_from_snapshot"]) == sorted(inputs)
    assert manifest["rerun_of"]["data_from_snapshot"] == ["med"]
    gate = manifest["spec"]["gate"]["corpus"]
    assert Path(gate) == (run / inputs[GATE_CORPUS]["snapshot"]).resolve()
    assert _metrics(new) == _metrics(run)


def test_pack_with_data_carries_the_input_files_to_a_reader(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server)
    archive = tmp_path / "aux.tar.gz"
    code, out, err = invoke(["pack", str(run), "-o", str(archive), "--with-data"])
    assert code == 0, err
    assert "1 dataset file(s), 3 other input file(s)" in out
    shutil.rmtree(tmp_path / "author")
    shutil.rmtree(tmp_path / "runs")
    unpacked = tmp_path / "reader" / "aux"
    unpacked.parent.mkdir()
    code, out, err = invoke(["unpack", str(archive), "-o", str(unpacked)])
    assert code == 0, err
    described = _json(unpacked / "PACKED.json")["data"]
    assert [d["dataset"] for d in described if d["section"] == "inputs"] == [
        EVIDENCE,
        VERIFIER_CORPUS,
        GATE_CORPUS,
    ]
    checks = {c.name: c for c in verify_run(unpacked).checks}
    assert checks["datasets"].result == "pass" and checks["datasets"].checked == 4
    # the answers are re-read with the packed evidence file, the claims searched again in
    # the packed corpus: every request re-rendered, none skipped
    assert checks["requests"].result == "pass" and checks["requests"].checked == 3
    assert invoke(["verify", str(unpacked)])[0] == 0
    new = tmp_path / "reader" / "again"
    code, out, err = invoke(["rerun", str(unpacked), "-o", str(new), "--no-progress"])
    assert code == 0, out + err
    assert "no drift:" in out
    assert len(_json(new / "manifest.json")["rerun_of"]["inputs_from_snapshot"]) == 3


def test_a_resumed_run_refuses_an_input_changed_since_it_started(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = _author(tmp_path, server)
    (tmp_path / "author" / "gate-passages.jsonl").write_text(
        json.dumps({"id": "p1", "text": "Another corpus."}) + "\n", "utf-8"
    )
    spec = tmp_path / "author" / "spec.toml"
    code, out, err = invoke(["run", str(spec), "--output-dir", str(run), "--no-progress"])
    assert code == 2, out + err
    assert "gate.corpus" in err and "changed since this run started" in err


def test_a_model_directory_is_recorded_by_path_only_and_must_be_there_to_rerun(
    tmp_path: Path,
) -> None:
    model = tmp_path / "models" / "e5"
    model.mkdir(parents=True)
    (info,) = InputFiles([("gate.dense_model", model)]).infos()
    assert (info.kind, info.sha256, info.path) == ("directory", None, str(model))
    assert input_file(tmp_path, info, allow_change=False) == (model, "same")
    shutil.rmtree(model)
    with pytest.raises(RunError, match="gate.dense_model: .* never copied"):
        input_file(tmp_path, info, allow_change=True)
    gone = InputFileInfo(field="gate.corpus", path=str(tmp_path / "c.jsonl"), sha256="0" * 64)
    with pytest.raises(RunError, match="gate.corpus: .* is missing .*; restore it"):
        input_file(tmp_path, gone, allow_change=True)


def test_set_field_follows_the_spec_field_path() -> None:
    raw: dict[str, Any] = {"factuality": {"verifiers": [{"kind": "x"}, {"corpus": "a"}]}}
    assert set_field(raw, "factuality.verifiers[1].corpus", "/abs/a")
    assert raw["factuality"]["verifiers"][1]["corpus"] == "/abs/a"
    assert not set_field(raw, "factuality.verifiers[2].corpus", "b")
    assert not set_field(raw, "gate.corpus", "b")
    assert not set_field(raw, "factuality.verifiers[0].corpus", "b")  # no such key
