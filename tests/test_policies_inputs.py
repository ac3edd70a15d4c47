"""Bad inputs to `assay policies apply` : a malformed JSON
line or a record failing validation in any file a policy reads is exit 2 with one line
naming file, line and field, and nothing is written under `policies/<name>/`; a torn
last line (a process killed mid-write) is still ignored, as everywhere a run is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _gate_fixtures import scored_record
from _policies_cli_helpers import RUN_SPEC, assay, make_run, write_text

pytest_plugins = ["_policies_fixtures"]  # run_dir, policy_file (base_run below)

RECORD_FILES = ("answers.jsonl", "claims.jsonl", "verifications.jsonl", "gates.jsonl")


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("policies_inputs"), RUN_SPEC)
    answers = [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]
    records = [  # one gate record per question
        scored_record(a["answer_id"], 0.4, 0.6).model_copy(update={"dataset": a["dataset"]})
        for a in answers
    ]
    text = "".join(r.model_dump_json() + "\n" for r in records)
    write_text(run / "gates.jsonl", text)
    return run


def _edit_line(path: Path, index: int, edit: object) -> int:
    """Replace line `index` (0-based) of a JSONL file by `edit(record)` or a raw string;
    the 1-based line number an error must name."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) > index + 1, "the edited line must not be the last one"
    if callable(edit):
        lines[index] = json.dumps(edit(json.loads(lines[index]))) + "\n"
    else:
        lines[index] = str(edit)
    path.write_text("".join(lines), encoding="utf-8")
    return index + 1


def _refused(run_dir: Path, policy_file: Path) -> str:
    """Apply; assert exit 2, one stderr line, nothing written; the line."""
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (run_dir / "policies").exists()
    return err.strip()


@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_torn_middle_line_names_file_line_and_the_key_before_it(
    run_dir: Path, policy_file: Path, name: str
) -> None:
    line = _edit_line(run_dir / name, 1, '{"dataset": "factuality-demo", "answer_id": \n')
    err = _refused(run_dir, policy_file)
    assert f"{name}:{line}: " in err
    assert "not valid JSON at column 45 after key 'answer_id'" in err


@pytest.mark.parametrize(
    ("name", "edit", "field", "needle"),
    [
        ("verifications.jsonl", lambda r: {**r, "status": "fine"}, "status", "'ok'"),
        (
            "verifications.jsonl",
            lambda r: {**r, "pairs": [{**r["pairs"][0], "p_entail": "high"}]},
            "pairs.0.p_entail",
            "valid number",
        ),
        (
            "verifications.jsonl",
            lambda r: {**r, "pairs": [{**r["pairs"][0], "page": [3]}]},
            "pairs.0.page",  # not pairs.0.page.int: the union's member tag is left out
            "",
        ),
        ("answers.jsonl", lambda r: {**r, "gold_action": "maybe"}, "gold_action", "'maybe'"),
        ("claims.jsonl", lambda r: {**r, "critical": "perhaps"}, "critical", "boolean"),
        ("claims.jsonl", lambda r: {k: v for k, v in r.items() if k != "claim"}, "claim", ""),
        ("gates.jsonl", lambda r: {**r, "k1_initial": -1}, "k1_initial", ""),
    ],
)
def test_a_record_failing_validation_names_file_line_and_field(
    run_dir: Path, policy_file: Path, name: str, edit: object, field: str, needle: str
) -> None:
    line = _edit_line(run_dir / name, 2, edit)
    err = _refused(run_dir, policy_file)
    assert f"{name}:{line}: field '{field}': " in err
    assert needle in err


@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_torn_last_line_is_ignored(run_dir: Path, policy_file: Path, name: str) -> None:
    path = run_dir / name
    path.write_text(path.read_text(encoding="utf-8") + '{"dataset": "fact', encoding="utf-8")
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 0, err
    assert (run_dir / "policies" / "cert" / "manifest.json").is_file()


def _dataset_copy(run_dir: Path, edit: object) -> Path:
    """Point the run's manifest at a copy of its answers dataset with row 2 edited."""
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    source = Path(manifest["factuality"]["datasets"][0]["path"])
    copy = run_dir.parent / "answers_copy.jsonl"
    shutil.copy(source, copy)
    _edit_line(copy, 1, edit)
    manifest["factuality"]["datasets"][0]["path"] = str(copy)
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return copy


@pytest.mark.parametrize(
    ("edit", "field", "needle"),
    [
        (lambda r: {**r, "gold_action": "maybe"}, "gold_action", "got 'maybe'"),
        (lambda r: {**r, "split": "holdout"}, "split", "train|dev|test"),
        (lambda r: {**r, "gold_support": 1.5}, "gold_support", "1"),
        (
            lambda r: {**r, "evidence": [{"id": "e1", "text": "x", "page": [3]}]},
            "evidence.0.page",
            "",
        ),
        (
            lambda r: {**r, "evidence": r["evidence"] * 2},  # ambiguous pairs
            "evidence.1.id",
            "is also evidence.0",
        ),
    ],
)
def test_a_bad_known_dataset_field_names_file_line_and_field(
    run_dir: Path, policy_file: Path, edit: object, field: str, needle: str
) -> None:
    copy = _dataset_copy(run_dir, edit)
    err = _refused(run_dir, policy_file)
    assert f"{copy}:2: field '{field}': " in err
    assert needle in err


def test_unknown_dataset_fields_are_ignored(run_dir: Path, policy_file: Path) -> None:
    _dataset_copy(run_dir, lambda r: {**r, "reviewer_mood": "maybe", "gold_actions": "maybe"})
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 0, err


# ---- pairs a verifier's cost cap dropped (a real local NLI run, tiny model) ----

NLI_SPEC = """
name = "nli-cap"
output_dir = "run"
[factuality]
datasets = [{{ name = "factuality-demo", path = "builtin:factuality-demo" }}]
decomposer = {{ kind = "sentence" }}
[[factuality.verifiers]]
kind = "nli-local"
model = "hf-nli/{model}"
premise = "sentence"
{cap}
"""

ANY_VERIFIER = """
[[policies]]
name = "cert"
kind = "claim_selective"

[[policies]]
name = "render"
kind = "fail_closed"
"""


@pytest.fixture(scope="module")
def nli_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The factuality demo verified by sentence with a tiny NLI model: uncapped, and
    with `max_premises = 1` (each demo passage has several sentences)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _tiny_models import save_nli_model, sentences, wordpiece_tokenizer

    root = tmp_path_factory.mktemp("nli_cap")
    model = save_nli_model(root / "nli", wordpiece_tokenizer(sentences()))
    runs = []
    for name, cap in (("uncapped", ""), ("capped", "max_premises = 1")):
        (root / name).mkdir()
        runs.append(make_run(root / name, NLI_SPEC.format(model=model, cap=cap)))
    return runs[0], runs[1]


def _by_key(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    return {(r["answer_id"], r["claim_id"]): r for r in map(json.loads, path.open())}


def test_a_verifier_cap_records_the_pairs_it_dropped(nli_runs: tuple[Path, Path]) -> None:
    uncapped, capped = (_by_key(r / "verifications.jsonl") for r in nli_runs)
    assert uncapped.keys() == capped.keys()
    assert not any("pairs_dropped_by_cap" in r for r in uncapped.values())  # 0: omitted
    dropped = 0
    for key, full in uncapped.items():
        pairs, kept = full["pairs"], capped[key]["pairs"]
        assert isinstance(pairs, list) and len(pairs) >= 1
        assert kept == pairs[:1]  # the first premise, scored as without the cap
        assert capped[key].get("pairs_dropped_by_cap", 0) == len(pairs) - 1
        dropped += len(pairs) - 1
    assert dropped > 0


def test_dropped_pairs_reach_both_claim_kinds(nli_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The cap reaches the kinds: fail_closed marks the claims `truncated`; a claim whose
    every pair was dropped is `cap_exceeded` in both kinds, and one with no pair
    and no drop stays `no_evidence`."""
    run = tmp_path / "run"
    shutil.copytree(nli_runs[1], run)
    path = run / "verifications.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0].get("pairs_dropped_by_cap", 0) > 0
    records[0]["pairs"] = []  # a cap that left this claim nothing
    records[1]["pairs"] = []
    records[1].pop("pairs_dropped_by_cap", None)  # ... and one that had nothing to score
    write_text(path, "".join(json.dumps(r) + "\n" for r in records))
    policy = write_text(tmp_path / "any.toml", ANY_VERIFIER)
    code, _, err = assay("policies", "apply", run, "--policy", policy)
    assert code == 0, err
    verified = {(r["answer_id"], r["claim_id"]): r for r in records}
    capped_out, empty = list(verified)[:2]
    for name in ("cert", "render"):
        claims = _by_key(run / "policies" / name / "claims.jsonl")
        assert claims[capped_out]["reason"] == "cap_exceeded"
        assert claims[empty]["reason"] == "no_evidence"
    render = _by_key(run / "policies" / "render" / "claims.jsonl")
    for key, claim in render.items():
        assert claim["truncated"] == (verified[key].get("pairs_dropped_by_cap", 0) > 0)


# ---- fail_closed over a verifier that records no entailment probability ----


def _no_entailment(pair: dict[str, object]) -> dict[str, object]:
    """A pair as a label-only verifier records it: no probabilities at all."""
    return {**pair, "p_entail": None, "p_contradict": None, "p_neutral": None}


def _scored(pair: dict[str, object]) -> dict[str, object]:
    return {**pair, "p_entail": 0.2, "p_contradict": 0.1, "p_neutral": 0.7}


def test_no_entailment_scores_is_its_own_fail_closed_reason(
    run_dir: Path, policy_file: Path
) -> None:
    """Hand-built records (not the overlap verifier, whose scores may change): every pair
    of answer A without p_entail -> its claims withheld `no_entailment_scores` and A
    refused for that reason; answer B with one such claim among scored ones
    -> that claim alone; one warning naming the verifier and the count."""
    path = run_dir / "verifications.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    answer_a, answer_b = sorted({r["answer_id"] for r in records})[:2]
    one_of_b = next(r["claim_id"] for r in records if r["answer_id"] == answer_b)
    assert sum(r["answer_id"] == answer_b for r in records) > 1
    stripped = set()
    for r in records:
        strip = r["answer_id"] == answer_a or (r["answer_id"], r["claim_id"]) == (
            answer_b,
            one_of_b,
        )
        assert r["pairs"], "every demo claim has a scored pair"
        r["pairs"] = [_no_entailment(p) if strip else _scored(p) for p in r["pairs"]]
        if strip:
            stripped.add((r["answer_id"], r["claim_id"]))
    write_text(path, "".join(json.dumps(r) + "\n" for r in records))
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "render")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "no entailment probability" in line]
    assert len(warnings) == 1, err
    assert "'baseline:overlap'" in warnings[0] and f"for {len(stripped)} claims" in warnings[0]
    folder = run_dir / "policies" / "render"
    claims = _by_key(folder / "claims.jsonl")
    for key, claim in claims.items():
        expected = "no_entailment_scores" if key in stripped else "below_tau_entail"
        assert (claim["native"], claim["decision"], claim["reason"]) == (
            ("UNVERIFIED", "withhold", expected)
        )
    responses = {r["answer_id"]: r for r in map(json.loads, (folder / "responses.jsonl").open())}
    assert (responses[answer_a]["outcome"], responses[answer_a]["reason"]) == (
        "refuse",
        "no_entailment_scores",
    )
    assert (responses[answer_b]["outcome"], responses[answer_b]["reason"]) == (
        "abstain",
        "no_verified_claim",
    )


def test_one_pair_without_entailment_among_scored_ones_stays_invalid_score() -> None:
    """The invalid-score rule is unchanged: a claim whose pairs are partly unscored is
    `invalid_score`; only a claim none of whose pairs has p_entail is `no_entailment_scores`."""
    from assay.policies.fail_closed import FailClosedPolicy, FCClaim, FCPair, FCResponse

    scored = FCPair(span_id="s1", p_entail=0.9, p_contradict=0.05, p_neutral=0.05)
    bare = [FCPair(span_id=f"s{i}") for i in (2, 3)]
    claims = [
        FCClaim(claim_id="mixed", verification_status="ok", pairs=[scored, bare[0]]),
        FCClaim(claim_id="bare", verification_status="ok", pairs=bare),
        FCClaim(claim_id="none", verification_status="ok", pairs=[]),
    ]
    decided = FailClosedPolicy().decide(FCResponse(dataset="d", answer_id="a", claims=claims))
    reasons = [c.reason for c in decided.claims]
    assert reasons == ["invalid_score", "no_entailment_scores", "no_evidence"]
    assert decided.response.outcome == "abstain"  # not every claim's inputs failed


def test_a_span_scored_twice_names_the_answer_and_field(run_dir: Path, policy_file: Path) -> None:
    path = run_dir / "verifications.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["pairs"] = records[0]["pairs"] * 2
    write_text(path, "".join(json.dumps(r) + "\n" for r in records))
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "render")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "verifications.jsonl: field 'pairs': " in err and "twice" in err
    assert f"answer {records[0]['answer_id']!r}" in err
    assert not (run_dir / "policies" / "render").exists()
