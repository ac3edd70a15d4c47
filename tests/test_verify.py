"""`assay verify` on real small runs (the ForceBench demo's baselines, an items run on
the loopback server): a clean run verifies, and each tampered copy fails the right check
with a line naming what changed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_factuality_run import responder, run, write_spec
from test_items_run import KEY_ENV, PAIRWISE, SINGLE, _csv, _says_supported, _single_csv, _spec

from assay.audit import verify_run
from assay.core.rundir import record_digests
from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer

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
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("demo")
    (tmp / "spec.toml").write_text(DEMO_SPEC, encoding="utf-8")
    out = tmp / "run"
    outcome = run_spec(tmp / "spec.toml", RunOptions(output_dir=str(out)))
    assert outcome.status == "complete", outcome.message
    return out


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An items run (single and pairwise, so `ba` orders too): its prompt file and CSVs
    next to it, judged on the loopback server."""
    tmp = tmp_path_factory.mktemp("items")
    _single_csv(tmp)
    rows = [(f"p{i}", f"left {i}", f"right {i}", "A" if i % 2 else "B") for i in range(4)]
    _csv(tmp / "duel.csv", ["id", "left", "right", "gold"], rows)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, "sk-items-test-key-123456")
        with FakeOpenAIServer(responder=_says_supported) as srv:
            spec = _spec(tmp, srv.base_url, SINGLE + PAIRWISE)
            outcome = run_spec(spec, RunOptions(output_dir=str(tmp / "run"), no_cache=True))
    assert outcome.status == "complete", outcome.message
    return tmp / "run"


def _copy(run: Path, tmp: Path) -> Path:
    return Path(shutil.copytree(run, tmp / "copy"))


def _results(run: Path) -> dict[str, Any]:
    return {c.name: c for c in verify_run(run).checks}


def _manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


def _write_manifest(run: Path, manifest: dict[str, Any]) -> None:
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_clean_demo_run_verifies_and_exits_0(demo: Path) -> None:
    code, out, err = invoke(["verify", str(demo)])
    assert code == 0, out + err
    assert "verified:" in out and "NOT" not in out
    code, out, _ = invoke(["verify", str(demo), "--format", "json"])
    data = json.loads(out)
    results = {c["name"]: c["result"] for c in data["checks"]}
    assert results == {
        "records": "pass",
        "metrics": "pass",
        "prompts": "pass",
        "datasets": "pass",
        "requests": "pass",
        "environment": "info",
    }
    assert code == 0
    assert {"what": "assay", "then": "0.1.0"}.items() <= data["environment"][0].items()


def test_an_edited_label_fails_records_and_metrics(items: Path, tmp_path: Path) -> None:
    run = _copy(items, tmp_path)
    path = run / "item_judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    flipped = "unsupported" if first["label"] == "supported" else "supported"
    lines[0] = lines[0].replace(f'"label":"{first["label"]}"', f'"label":"{flipped}"')
    path.write_text("".join(lines), encoding="utf-8")
    checks = _results(run)
    assert checks["records"].result == "fail"
    assert checks["records"].problems[0].startswith("item_judgments.jsonl: changed since")
    assert checks["metrics"].result == "fail"
    assert "items.rows[openai/items-judge::support-check@1]" in checks["metrics"].problems[0]
    code, out, _ = invoke(["verify", str(run)])
    assert code == 1 and "NOT verified" in out and "item_judgments.jsonl" in out


def test_a_deleted_line_is_named_with_how_many_records_are_short(
    demo: Path, tmp_path: Path
) -> None:
    run = _copy(demo, tmp_path)
    path = run / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    judge = json.loads(lines[5])["judge_id"]
    path.write_text("".join(lines[:5] + lines[6:]), encoding="utf-8")
    records = _results(run)["records"]
    assert records.result == "fail"
    assert records.problems[0] == (
        f"judgments.jsonl: 119 records of {judge}, the manifest recorded 120 (1 short)"
    )
    assert any("judgments.jsonl: changed since" in p for p in records.problems)


def _snapshot_prompt(run: Path) -> Path:
    """The judge's prompt as the run directory's snapshot (the layout runs write; runs
    written before snapshots get one here, as `snapshot/prompts/<sha[:16]>-<name>`)."""
    manifest = _manifest(run)
    prompt = manifest["judges"][0]["prompt"]
    if not prompt.get("snapshot"):
        data = Path(prompt["file"]).read_bytes()
        rel = (
            f"snapshot/prompts/{hashlib.sha256(data).hexdigest()[:16]}-{Path(prompt['file']).name}"
        )
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_bytes(data)
        prompt["snapshot"] = rel
        _write_manifest(run, manifest)
    return run / prompt["snapshot"]


def test_a_changed_prompt_byte_in_the_snapshot_fails_prompts(items: Path, tmp_path: Path) -> None:
    run = _copy(items, tmp_path)
    snapshot = _snapshot_prompt(run)
    assert _results(run)["prompts"].result == "pass"
    data = bytearray(snapshot.read_bytes())
    data[data.index(b"EVIDENCE")] = ord("e")
    snapshot.write_bytes(bytes(data))
    prompts = _results(run)["prompts"]
    assert prompts.result == "fail"
    assert prompts.problems == [
        f"support-check@1 (openai/items-judge::support-check@1): snapshot {snapshot} does not "
        f"hash to the recorded sha256 {_manifest(run)['judges'][0]['prompt']['sha256']}"
    ]


def test_a_swapped_dataset_row_fails_datasets(items: Path, tmp_path: Path) -> None:
    run = _copy(items, tmp_path)
    manifest = _manifest(run)
    info = manifest["datasets"][0]
    copy = tmp_path / "mine.csv"
    lines = Path(info["path"]).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1], lines[2] = lines[2], lines[1]
    copy.write_text("".join(lines), encoding="utf-8")
    info["path"] = str(copy)
    _write_manifest(run, manifest)
    datasets = _results(run)["datasets"]
    assert datasets.result == "fail"
    assert datasets.problems[0].startswith(f"dataset mine: file {copy} has sha256 ")
    assert datasets.problems[0].endswith(f"the run read {info['sha256'][:12]}")


def test_a_bundled_dataset_snapshot_is_checked_too(items: Path, tmp_path: Path) -> None:
    run = _copy(items, tmp_path)
    manifest = _manifest(run)
    info = manifest["datasets"][0]
    (run / "snapshot" / "data").mkdir(parents=True, exist_ok=True)
    snap = run / "snapshot" / "data" / "mine.csv"
    snap.write_bytes(Path(info["path"]).read_bytes() + b"extra,row\n")
    info["snapshot"] = "snapshot/data/mine.csv"
    _write_manifest(run, manifest)
    datasets = _results(run)["datasets"]
    assert datasets.result == "fail" and datasets.checked == 3  # mine twice, duel once
    assert datasets.problems[0].startswith(f"dataset mine: snapshot {snap} has sha256")


def test_an_edited_metric_is_named_by_its_key_path(demo: Path, tmp_path: Path) -> None:
    run = _copy(demo, tmp_path)
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    metrics["forcebench"]["rows"][1]["mvr"] = 0.123
    judge = metrics["forcebench"]["rows"][1]["judge_id"]
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    checks = _results(run)
    assert checks["records"].result == "pass"
    assert checks["metrics"].problems == [
        f"metrics.json: forcebench.rows[{judge}#1].mvr differs from the value "
        "recomputed from the records"
    ]
    assert json.loads((run / "metrics.json").read_text())["forcebench"]["rows"][1]["mvr"] == 0.123
    assert sorted(p.name for p in run.iterdir()) == [
        "judgments.jsonl",
        "manifest.json",
        "metrics.json",
    ]


def test_every_request_key_is_reproduced_single_and_pairwise(items: Path) -> None:
    requests = _results(items)["requests"]
    assert (requests.result, requests.checked, requests.skipped) == ("pass", 6 + 2 * 4, 0)


def _edit_line(path: Path, lineno: int, **changes: Any) -> dict[str, Any]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[lineno - 1])
    row.update(changes)
    lines[lineno - 1] = json.dumps(row) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    return row


def test_a_request_key_not_reproduced_names_file_line_and_cause(
    items: Path, tmp_path: Path
) -> None:
    run = _copy(items, tmp_path)
    path = run / "item_judgments.jsonl"
    _edit_line(path, 3, request_key="0" * 64)
    _edit_line(path, 4, prompt_sha256="f" * 64)  # not part of the key: still reproduced
    _edit_line(path, 5, prompt_sha256="f" * 64, request_key="1" * 64)
    problems = _results(run)["requests"].problems
    assert problems[0] == (
        "item_judgments.jsonl:3: request_key 000000000000 not reproduced; likeliest cause: "
        "messages (the record's variables or prompt bytes), decoding or client settings"
    )
    assert problems[1] == (
        "item_judgments.jsonl:5: request_key 111111111111 not reproduced; "
        "likeliest cause: prompt_sha256 ffffffffffff is not the judge's prompt"
    )
    assert len(problems) == 2  # line 4 holds


def test_records_without_request_keys_are_a_skip_that_fails_unless_allowed(
    items: Path, tmp_path: Path
) -> None:
    run = _copy(items, tmp_path)
    path = run / "item_judgments.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps({**r, "request_key": None}) + "\n" for r in rows))
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    metrics["records_sha256"] = record_digests(run)  # as a run from before request keys
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    assert _results(run)["records"].result == "pass"
    requests = _results(run)["requests"]
    assert (requests.result, requests.skipped) == ("skip", len(rows))
    assert requests.notes == [
        f"{len(rows)} records: no request_key (written before assay recorded request keys)"
    ]
    code, out, _ = invoke(["verify", str(run)])
    assert code == 1 and "NOT verified" in out
    code, out, _ = invoke(["verify", str(run), "--allow-skips"])
    assert code == 0 and "verified (skips allowed)" in out


def test_not_a_run_directory_is_bad_input(tmp_path: Path) -> None:
    code, _, err = invoke(["verify", str(tmp_path)])
    assert code == 2 and "no manifest.json" in err
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    code, _, err = invoke(["verify", str(tmp_path)])
    assert code == 2 and "no metrics.json" in err
    code, _, err = invoke(["verify", str(tmp_path), "--format", "xml"])
    assert code == 2


def test_a_built_in_prompt_changed_since_the_run_is_named_with_the_version(
    items: Path, tmp_path: Path
) -> None:
    run = _copy(items, tmp_path)
    manifest = _manifest(run)
    judge = next(j for j in manifest["judges"] if j["prompt"]["builtin"])
    judge["prompt"]["sha256"] = "e" * 64  # what an older assay's built-in hashed to
    manifest["environment"]["assay_version"] = "0.0.9"
    _write_manifest(run, manifest)
    checks = _results(run)
    assert checks["prompts"].problems == [
        f"pairwise-preference@1 ({judge['id']}): built-in pairwise-preference.v1.prompt "
        "changed since assay 0.0.9"
    ]
    requests = checks["requests"]
    assert (requests.result, requests.checked, requests.skipped) == ("skip", 6, 8)
    assert requests.notes == ["8 records: prompt pairwise-preference@1 changed (see prompts)"]


def test_a_torn_last_line_is_named(demo: Path, tmp_path: Path) -> None:
    run = _copy(demo, tmp_path)
    path = run / "judgments.jsonl"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + text.splitlines()[0][:40], encoding="utf-8")
    records = _results(run)["records"]
    assert "judgments.jsonl:241: torn last line (a write cut short)" in records.problems


def test_a_factuality_run_reproduces_decomposer_and_verifier_keys(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        outcome = run(write_spec(tmp_path, srv.base_url), tmp_path / "run")
    assert outcome.status == "complete", outcome.message
    out = tmp_path / "run"
    keyed = {
        name: sum(1 for r in map(json.loads, (out / name).open()) if r.get("request_key"))
        for name in ("sentences.jsonl", "verifications.jsonl")
    }
    assert all(keyed.values())  # the decomposer's and the context verifier's requests
    checks = _results(out)
    assert [c.result for c in checks.values()] == ["pass"] * 5 + ["info"]
    assert checks["requests"].checked == sum(keyed.values())
    path = out / "verifications.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines, 1) if json.loads(line).get("request_key"))
    claim = json.loads(lines[n - 1])["claim"]
    _edit_line(path, n, claim=claim + " (edited)")
    problems = _results(out)["requests"].problems
    assert len(problems) == 1 and problems[0].startswith(f"verifications.jsonl:{n}: request_key")


def test_a_packed_copy_verifies_from_its_bundled_data_alone(items: Path, tmp_path: Path) -> None:
    """`assay pack --with-data` bundles the datasets as `snapshot/data/<sha[:16]>-<name>`
    (the manifest unchanged): after unpacking elsewhere, with the original files gone,
    datasets and requests are checked from those copies."""
    archive = tmp_path / "run.tar.gz"
    assert invoke(["pack", str(items), "-o", str(archive), "--with-data"])[0] == 0
    assert invoke(["unpack", str(archive), "-o", str(tmp_path / "unpacked")])[0] == 0
    run = tmp_path / "unpacked"
    manifest = _manifest(run)
    for info in manifest["datasets"]:
        info["path"] = str(tmp_path / "gone" / Path(info["path"]).name)
    _write_manifest(run, manifest)
    checks = _results(run)
    assert (checks["datasets"].result, checks["datasets"].checked) == ("pass", 2)
    assert (checks["requests"].result, checks["requests"].checked) == ("pass", 14)
    assert invoke(["verify", str(run)])[0] == 0


def test_the_gate_records_are_counted_apart_from_a_verifier_of_the_same_id(
    tmp_path: Path,
) -> None:
    """The policies example: a gate and a verifier both called `baseline:overlap`."""
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "run"
    outcome = run_spec(root / "examples" / "policies.toml", RunOptions(output_dir=str(out)))
    assert outcome.status == "complete", outcome.message
    assert verify_run(out).exit_code(allow_skips=False) == 0
    path = out / "gates.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    gate = json.loads(lines[2])["gate_id"]
    path.write_text("".join(lines[:2] + lines[3:]), encoding="utf-8")
    problems = _results(out)["records"].problems
    assert problems[0] == f"gates.jsonl: 23 records of {gate}, the manifest recorded 24 (1 short)"


def test_report_verify_adds_a_verification_section_to_html_and_json(
    demo: Path, tmp_path: Path
) -> None:
    run = _copy(demo, tmp_path)
    page = tmp_path / "report.html"
    assert invoke(["report", str(run), "-f", "html", "-o", str(page)])[0] == 0
    assert 'id="verification"' not in page.read_text(encoding="utf-8")
    assert invoke(["report", str(run), "-f", "html", "--verify", "-o", str(page)])[0] == 0
    html = page.read_text(encoding="utf-8")
    assert "verified: every check passed" in html and "<td>metrics</td><td>pass</td>" in html
    lines = (run / "judgments.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "judgments.jsonl").write_text("".join(lines[1:]), encoding="utf-8")
    assert invoke(["report", str(run), "-f", "html", "--verify", "-o", str(page)])[0] == 0
    html = page.read_text(encoding="utf-8")
    assert "not verified: records, metrics failed" in html
    assert '<td>records</td><td class="warn">fail</td>' in html
    code, out, _ = invoke(["report", str(run), "-f", "json", "--verify"])
    checks = {c["name"]: c["result"] for c in json.loads(out)["verification"]["checks"]}
    assert code == 0 and checks["records"] == "fail" and checks["prompts"] == "pass"


def test_a_model_answering_under_its_id_without_the_provider_prefix_is_no_difference() -> None:
    """litellm asks for `openai/gpt-4o-mini`; the provider reports `gpt-4o-mini`: the same
    model. Another id (a snapshot the provider moved to) is listed as a difference."""
    from assay.audit._environment import environment_rows
    from assay.core.manifest import Manifest

    def row(returned: list[str]) -> Any:
        judge: dict[str, Any] = {"id": "j", "client": {"model": "openai/gpt-4o-mini"}}
        judge["stats"] = {"model_returned": returned}
        manifest = Manifest.model_validate({"judges": [judge]})
        rows = [r for r in environment_rows(manifest) if r.what.startswith("model ")]
        return rows[0] if rows else None

    assert row(["gpt-4o-mini"]).same and row(["openai/gpt-4o-mini"]).same
    moved = row(["gpt-4o-mini-2024-07-18"])
    assert not moved.same and moved.now == "gpt-4o-mini-2024-07-18"
    assert row([]) is None  # nothing reported (all cached): nothing to compare


def _edit_metrics(run: Path, edit: Any) -> None:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    edit(metrics["forcebench"]["rows"][0])
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")


def test_a_statistic_removed_under_the_same_version_fails_metrics(
    demo: Path, tmp_path: Path
) -> None:
    run = _copy(demo, tmp_path)
    _edit_metrics(run, lambda row: row.pop("mvr"))
    (problem,) = _results(run)["metrics"].problems
    assert problem.endswith(".mvr is on one side only (the same assay version)")


def test_statistics_another_version_added_or_retired_are_notes_not_failures(
    demo: Path, tmp_path: Path
) -> None:
    """A run published with another assay version: keys only one version computes are
    shown, every statistic both compute must still agree."""
    run = _copy(demo, tmp_path)
    manifest = _manifest(run)
    manifest["environment"]["assay_version"] = "0.0.1"
    _write_manifest(run, manifest)
    _edit_metrics(run, lambda row: row.update(retired_stat=1.0))
    _edit_metrics(run, lambda row: row.pop("mvr"))
    check = _results(run)["metrics"]
    assert check.result == "pass"
    assert any("keys added since assay 0.0.1" in n and ".mvr" in n for n in check.notes)
    assert any("no longer computed since assay 0.0.1" in n for n in check.notes)
    _edit_metrics(run, lambda row: row.update(fs=0.5))
    assert (
        _results(run)["metrics"]
        .problems[0]
        .endswith(".fs differs from the value recomputed from the records")
    )
