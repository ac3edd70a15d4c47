"""Numbers that must not be silently wrong: explicit zeros, bootstrap 0, per-dataset rows,
claims per sentence for given claims (issue #7, metrics side)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.core.records import JudgmentRecord, SentenceRecord, VerificationRecord
from assay.errors import SpecError
from assay.metrics import factuality_scores, force_metrics, force_metrics_frame
from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.runs.assemble._build import ClientPool
from assay.runs.rebuild._metrics import compute_metrics
from assay.runs.stages._factuality import FactualityStage

EXPERTQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "expertqa"


def write(tmp: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def run(spec: Path, out: Path) -> Path:
    Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False)).run()
    return out


FACT = """
name = "t"
bootstrap = {boot}
[factuality]
datasets = [{{ path = "builtin:factuality-demo" }}]
verifiers = [{verifiers}]
"""

# ------------------------------------------------------------------ explicit zeros


def test_overlap_threshold_zero_is_recorded_and_used(tmp_path: Path) -> None:
    spec = write(tmp_path, FACT.format(boot=0, verifiers='{ kind = "overlap", threshold = 0.0 }'))
    out = run(spec, tmp_path / "run")
    manifest = read_json(out / "manifest.json")
    assert manifest["factuality"]["verifiers"][0]["threshold"] == 0.0
    rows = [json.loads(line) for line in (out / "verifications.jsonl").read_text().splitlines()]
    with_overlap = [r for r in rows if r["error"] is None]
    # threshold 0: any overlap, even none, supports the claim (0.7 would reject some)
    assert with_overlap and all(r["label"] == "supported" for r in with_overlap)
    assert any(r["score"] < 0.7 for r in with_overlap)


@pytest.mark.parametrize(
    "verifier",
    [
        '{ kind = "nli", model = "openai/fake", api_base = "http://127.0.0.1:9/v1", '
        "threshold = 0.0 }",
        '{ kind = "nli-local", model = "hf-nli/nowhere", threshold = 0.0 }',
    ],
)
def test_model_verifier_threshold_zero_is_kept(tmp_path: Path, verifier: str) -> None:
    loaded = load_spec(write(tmp_path, FACT.format(boot=0, verifiers=verifier)))
    assert loaded.spec.factuality is not None
    stage = FactualityStage(loaded, loaded.spec.factuality, pool=ClientPool(None))
    assert stage.verifiers[0].describe()["threshold"] == 0.0


# ------------------------------------------------------------------ bootstrap = 0


@pytest.mark.parametrize("boot", [1, 50, 99, 100_001, 10**9])
def test_bootstrap_below_100_or_above_the_bound_is_a_one_line_spec_error(
    tmp_path: Path, boot: int
) -> None:
    spec = write(tmp_path, FACT.format(boot=boot, verifiers='{ kind = "overlap" }'))
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    text = str(err.value)
    assert "\n" not in text and str(spec) in text and "'bootstrap'" in text
    assert f"bootstrap must be 0 (no CI) or from 100 to 100000, got {boot}" in text


def test_bootstrap_zero_gives_no_ci_anywhere(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        FACT.format(boot=0, verifiers='{ kind = "overlap" }')
        + '[[datasets]]\npath = "builtin:forcebench-demo"\n[[baselines]]\nname = "token-overlap"\n',
    )
    out = run(spec, tmp_path / "run")
    metrics = read_json(out / "metrics.json")
    force_rows = metrics["forcebench"]["rows"]
    assert force_rows and all(
        r[k] is None for r in force_rows for k in ("mvr_lo", "mvr_hi", "fs_lo", "fs_hi")
    )
    fact = metrics["factuality"]["scores"]["rows"][0]
    assert fact["macro"] is not None and fact["micro"] is not None
    assert [fact[k] for k in ("macro_lo", "macro_hi", "micro_lo", "micro_hi")] == [None] * 4
    # recompute reads bootstrap = 0 back from the manifest; every format shows no CI
    assert assay("recompute", out).returncode == 0
    assert read_json(out / "metrics.json")["forcebench"]["rows"][0]["mvr_lo"] is None
    for fmt in ("table", "markdown"):
        shown = assay("report", out, "-f", fmt)
        assert shown.returncode == 0 and "—" in shown.stdout and "0.00–0.00" not in shown.stdout
    assert assay("report", out, "-f", "html").returncode == 0


def assay(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`assay ARGS` in-process (the console script's `main`): no interpreter start-up."""
    code, out, err = invoke([str(a) for a in args])
    return subprocess.CompletedProcess(["assay", *map(str, args)], code, out, err)


def judgment(dataset: str, pair: str, member: str, score: float) -> JudgmentRecord:
    return JudgmentRecord.model_validate(
        {
            "run_id": "r",
            "dataset": dataset,
            "pair_id": pair,
            "member": member,
            "judge_id": "j",
            "status": "ok",
            "score": score,
            "claim": "c",
            "evidence": "e",
        }
    )


def two_dataset_records() -> list[JudgmentRecord]:
    out: list[JudgmentRecord] = []
    for i in range(6):  # dataset a: never violates; dataset b: always violates
        out += [judgment("a", f"p{i}", "calibrated", 0.9), judgment("a", f"p{i}", "raised", 0.1)]
        out += [judgment("b", f"p{i}", "calibrated", 0.2), judgment("b", f"p{i}", "raised", 0.8)]
    return out


def test_force_metrics_n_boot_zero_is_point_estimates_only() -> None:
    report = force_metrics(two_dataset_records(), n_boot=0)
    overall = [r for r in report.rows if r.group_by == "overall" and r.dataset == "all"][0]
    assert overall.mvr == 0.5 and overall.mvr_lo is None and overall.fs_hi is None


# ------------------------------------------------------------------ per dataset


def test_force_rows_per_dataset_and_pooled() -> None:
    report = force_metrics(two_dataset_records(), n_boot=200)
    overall = {r.dataset: r for r in report.rows if r.group_by == "overall"}
    assert set(overall) == {"all", "a", "b"}
    assert (overall["a"].mvr, overall["b"].mvr, overall["all"].mvr) == (0.0, 1.0, 0.5)
    assert (overall["a"].n, overall["b"].n, overall["all"].n) == (6, 6, 12)
    # resampled within the dataset: a constant dataset has a collapsed CI
    assert overall["a"].mvr_lo == overall["a"].mvr_hi == 0.0
    assert overall["all"].mvr_lo is not None and overall["all"].mvr_lo < 0.5
    frame = force_metrics_frame(two_dataset_records(), n_boot=0)
    assert "dataset" in frame.columns and set(frame["dataset"]) == {"all", "a", "b"}


def test_one_dataset_has_pooled_rows_only() -> None:
    recs = [r for r in two_dataset_records() if r.dataset == "a"]
    assert {r.dataset for r in force_metrics(recs, n_boot=0).rows} == {"all"}


def verification(dataset: str, answer: str, k: int, label: str) -> VerificationRecord:
    return VerificationRecord.model_validate(
        {
            "dataset": dataset,
            "answer_id": answer,
            "claim_id": f"{answer}:c{k}",
            "sentence_id": 0,
            "claim": "c",
            "verifier_id": "v",
            "status": "ok",
            "label": label,
            "gold_label": label,
        }
    )


def test_factuality_rows_per_dataset_and_pooled() -> None:
    recs = [verification("a", f"r{i}", 0, "supported") for i in range(3)]
    recs += [verification("b", f"r{i}", 0, "unsupported") for i in range(2)]
    rows = {r.dataset: r for r in factuality_scores(recs, n_boot=0).rows}
    assert set(rows) == {"all", "a", "b"}
    assert (rows["a"].macro, rows["b"].macro) == (1.0, 0.0)
    assert rows["all"].macro == pytest.approx(0.6)
    assert (rows["a"].n_responses, rows["b"].n_responses, rows["all"].n_responses) == (3, 2, 5)


def test_run_metrics_json_has_dataset_rows(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"
    data.write_text(
        json.dumps({"id": "x", "answer": "Water boils at 100 C.", "evidence": ["Water boils."]})
        + "\n",
        encoding="utf-8",
    )
    spec = write(
        tmp_path,
        """
bootstrap = 0
[factuality]
datasets = [{ path = "builtin:factuality-demo" }, { path = "answers.jsonl", name = "mine" }]
verifiers = [{ kind = "overlap" }]
""",
    )
    out = run(spec, tmp_path / "run")
    rows = read_json(out / "metrics.json")["factuality"]["scores"]["rows"]
    by = {r["dataset"]: r for r in rows}
    assert set(by) == {"all", "factuality_demo", "mine"}
    assert by["all"]["n_responses"] == by["factuality_demo"]["n_responses"] + 1


def test_dataset_named_all_is_rejected(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        FACT.format(boot=0, verifiers='{ kind = "overlap" }').replace(
            '"builtin:factuality-demo" }', '"builtin:factuality-demo", name = "all" }'
        ),
    )
    with pytest.raises(SpecError, match="reserved for pooled"):
        load_spec(spec)
    # a file named all.jsonl would get that name by default
    stem = write(tmp_path, FACT.format(boot=0, verifiers='{ kind = "overlap" }'), "s2.toml")
    stem.write_text(stem.read_text().replace("builtin:factuality-demo", "data/all.jsonl"))
    with pytest.raises(SpecError, match="set `name`") as err:
        load_spec(stem)
    assert "factuality.datasets[0]" in str(err.value)


def test_old_rows_without_dataset_read_as_pooled() -> None:
    from assay.metrics import ForceRow

    old = {"judge_id": "j", "group_by": "overall", "group": "all", "n": 1, "n_failed": 0}
    old |= {"mvr": 0.0, "mvr_lo": 0.0, "mvr_hi": 0.0, "fs": 0.1, "fs_lo": 0.1, "fs_hi": 0.1}
    assert ForceRow.model_validate(old).dataset == "all"


# ------------------------------------------------------------------ claims per sentence


@pytest.mark.skipif(not EXPERTQA.is_dir(), reason="shared ExpertQA sample not present")
def test_expertqa_given_claims_per_sentence(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        f"""
bootstrap = 0
[factuality]
datasets = [{{ path = "{EXPERTQA}", format = "expertqa" }}]
decomposer = {{ kind = "given" }}
verifiers = [{{ kind = "overlap" }}]
""",
    )
    out = run(spec, tmp_path / "run")
    row = read_json(out / "metrics.json")["factuality"]["scores"]["rows"][0]
    # some ExpertQA claims span several sentences: no number computed from a fake sentence
    assert row["n_claims"] == 301 and row["claims_per_sentence"] is None
    sentences = [json.loads(x) for x in (out / "sentences.jsonl").read_text().splitlines()]
    assert len(sentences) > 49  # mapped answers get one record per real sentence


def expertqa_fixture(tmp: Path, claims: list[str]) -> Path:
    answer = "Aspirin thins the blood[1]. It can upset the stomach. Take it with food."
    row = {
        "answer_id": "q1",
        "question": "Aspirin?",
        "answer": answer,
        "claims": [
            {"claim_id": f"q1-c{k}", "claim": c, "evidence": [], "support": "Complete"}
            for k, c in enumerate(claims)
        ],
    }
    path = tmp / "answers.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def given_run(tmp: Path, claims: list[str]) -> dict[str, Any]:
    expertqa_fixture(tmp, claims)
    spec = write(
        tmp,
        """
bootstrap = 0
[factuality]
datasets = [{ path = "answers.jsonl", format = "expertqa" }]
decomposer = { kind = "given" }
verifiers = [{ kind = "overlap" }]
""",
    )
    out = run(spec, tmp / "run")
    row: dict[str, Any] = read_json(out / "metrics.json")["factuality"]["scores"]["rows"][0]
    return row


def test_given_claims_mapped_to_sentences(tmp_path: Path) -> None:
    claims = ["Aspirin thins the blood[1].", "It can upset the stomach", "Take with food."]
    row = given_run(tmp_path, claims)
    assert (row["n_sentences"], row["n_claims"], row["claims_per_sentence"]) == (3, 3, 1.0)


def test_given_claims_not_mappable_are_na(tmp_path: Path) -> None:
    row = given_run(tmp_path, ["Aspirin thins the blood.", "Paris is in France."])
    assert row["n_claims"] == 2 and row["claims_per_sentence"] is None


def test_legacy_given_run_dir_reads_as_unmapped(tmp_path: Path) -> None:
    answer = "Aspirin thins the blood. It can upset the stomach."
    legacy = SentenceRecord.model_validate(
        {
            "dataset": "d",
            "answer_id": "a",
            "sentence_id": 0,
            "sentence": answer,
            "span": [0, len(answer)],
            "decomposer_id": "given",
            "status": "ok",
            "n_claims": 2,
            "claims": [
                {"id": "a:c0", "text": "Aspirin thins the blood.", "sentence_id": 0},
                {"id": "a:c1", "text": "It can upset the stomach.", "sentence_id": 0},
            ],
        }
    )
    (tmp_path / "sentences.jsonl").write_text(legacy.model_dump_json() + "\n")
    rows = [verification("d", "a", k, "supported") for k in range(2)]
    (tmp_path / "verifications.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    row = compute_metrics(tmp_path, n_boot=0)["factuality"]["scores"]["rows"][0]
    assert row["n_claims"] == 2 and row["claims_per_sentence"] is None


# ------------------------------------------------------------------ MedScore 0-claim responses


def medscore_folder(folder: Path) -> Path:
    """MedScore's three files for 6 responses, half of them with no claim at all."""
    folder.mkdir()
    claims = {
        "r0": ["Aspirin thins the blood.", "Aspirin is an NSAID."],
        "r1": ["Statins lower LDL."],
        "r2": ["Statins cure diabetes."],
        "r3": [],
        "r4": [],
        "r5": [],
    }
    raw = {"Statins cure diabetes.": ("False", 0.0)}
    decompositions: list[dict[str, Any]] = []
    verifications: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for rid, texts in claims.items():
        base = {"id": rid, "sentence_id": 0, "sentence": f"Sentence of {rid}."}
        if not texts:
            decompositions.append({**base, "claim": None})
        out_claims = []
        for k, text in enumerate(texts):
            decompositions.append({**base, "claim": text, "claim_id": k})
            answer, score = raw.get(text, ("True", 1.0))
            row = {**base, "claim": text, "claim_id": k, "evidence": "Doctor.", "raw": answer}
            verifications.append({**row, "score": score})
            out_claims.append({k: v for k, v in verifications[-1].items() if k != "id"})
        scores = [c["score"] for c in out_claims]
        mean = sum(scores) / len(scores) if scores else None
        outputs.append({"id": rid, "score": mean, "claims": out_claims})
    for name, rows in (
        ("decompositions.jsonl", decompositions),
        ("verifications.jsonl", verifications),
        ("output.jsonl", outputs),
    ):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_medscore_output_alone_keeps_zero_claim_responses(tmp_path: Path) -> None:
    from assay.metrics import response_table
    from assay.runs.rebuild._imported import import_medscore_run

    folder = medscore_folder(tmp_path / "ms")
    outputs = [json.loads(x) for x in (folder / "output.jsonl").read_text().splitlines()]
    empty_share = sum(1 for o in outputs if not o["claims"]) / len(outputs)
    alone = import_medscore_run(folder / "output.jsonl", tmp_path / "alone", n_boot=0)
    full = import_medscore_run(folder, tmp_path / "full", n_boot=0)
    a = alone["factuality"]["scores"]["rows"][0]
    f = full["factuality"]["scores"]["rows"][0]
    assert a["zero_claim_rate"] == empty_share == 0.5
    assert (a["n_responses"], a["n_zero_claim"], a["n_responses_scored"]) == (6, 3, 3)
    keys = ("n_responses", "n_zero_claim", "zero_claim_rate", "n_claims", "macro", "micro")
    assert {k: a[k] for k in keys} == {k: f[k] for k in keys}
    records = [
        VerificationRecord.model_validate_json(x)
        for x in (tmp_path / "alone" / "verifications.jsonl").read_text().splitlines()
    ]
    answers = [("medscore", o["id"]) for o in outputs]
    table = response_table(records, responses=answers).set_index("answer_id")
    assert table.loc[["r3", "r4", "r5"], "factuality"].isna().all()
    assert (table.loc[["r3", "r4", "r5"], "category"] == "zero_claim").all()
