"""`assay.view.detail` on factuality runs: an answer -> its sentences -> claims ->
verdicts with the passages' text and the spans to highlight, the verifier requests
rebuilt exactly (compared with what the loopback server received), claims as items,
and what every applied policy did with each claim and the answer (its certificate)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay, make_run
from _policies_fixtures import make_gold_run
from _report_policies_run import ROWS, applied_run
from test_factuality_run import ANSWERS, responder, run, write_spec
from test_policies_provenance import EXAMPLES, RETRIEVAL_SPEC

from assay.core.rundir import iter_rows
from assay.testing import FakeOpenAIServer, reply
from assay.view.detail import answer_detail, answers, item_detail

LLM = "context:openai/fake-verifier::verify-context@1"
FAIL_CLOSED = """
[[policies]]
name = "render"
kind = "fail_closed"
tau_entail = "0.60"
tau_contradict = "0.70"
"""


@pytest.fixture(scope="module")
def fact_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """The decompose-then-verify run of test_factuality_run (an LLM context verifier and
    the overlap baseline) and the messages of every verification request sent."""
    root = tmp_path_factory.mktemp("view_fact")
    with FakeOpenAIServer(responder=responder) as srv:
        outcome = run(write_spec(root, srv.base_url), root / "run")
        sent = [b["messages"] for b in srv.requests]
    assert outcome.status == "complete"
    verify = [m for m in sent if "Statement:" in "".join(x["content"] for x in m)]
    return root / "run", verify


def test_answers_are_listed_with_their_counts(fact_run: tuple[Path, list[Any]]) -> None:
    run_dir, _ = fact_run
    listed = {a.answer_id: a for a in answers(run_dir)}
    assert sorted(listed) == ["a1", "a2", "a3"]
    claims = Counter(r["answer_id"] for r in iter_rows(run_dir / "claims.jsonl"))
    assert {k: a.n_claims for k, a in listed.items()} == {"a1": 2, "a2": 3, "a3": 0}
    assert {k: a.n_claims for k, a in listed.items() if claims[k]} == dict(claims)
    assert listed["a2"].labels[LLM] == {"supported": 1, "unsupported": 2}


def test_the_chain_from_answer_to_verdicts(fact_run: tuple[Path, list[Any]]) -> None:
    run_dir, _ = fact_run
    detail = answer_detail(run_dir, "a1")
    assert detail.answer == ANSWERS[0]["answer"] and detail.question == "q1"
    assert [s.sentence for s in detail.sentences] == [
        "Aspirin thins the blood.",
        "Thank you for asking!",
        "Aspirin cures colds.",
    ]
    for s in detail.sentences:  # the spans cut the sentence out of the answer
        assert s.span is not None and detail.answer[s.span[0] : s.span[1]] == s.sentence
    first = detail.sentences[0].claims[0]
    assert first.claim == "Aspirin thins the blood." and not detail.sentences[1].claims
    verdicts = {v.judgment.judge_id: v for v in first.verdicts}
    assert set(verdicts) == {LLM, "baseline:overlap"}
    llm = verdicts[LLM]
    assert llm.judgment.label == "supported" and llm.judgment.messages_status == "exact"
    (passage,) = llm.evidence
    assert (passage.passage_id, passage.text) == ("p1", "Aspirin thins the blood.")
    assert verdicts["baseline:overlap"].judgment.messages_status == "no prompt"
    hedged = detail.sentences[2].claims[0].verdicts
    assert {v.judgment.judge_id: v.judgment.status for v in hedged}[LLM] == "parse_error"


def test_every_verifier_request_is_rebuilt_one_for_one(fact_run: tuple[Path, list[Any]]) -> None:
    run_dir, verify = fact_run
    rebuilt: list[str] = []
    for a in answers(run_dir):
        for s in answer_detail(run_dir, a.answer_id).sentences:
            for c in s.claims:
                for v in c.verdicts:
                    if v.judgment.judge_id == LLM:
                        assert v.judgment.messages is not None
                        rebuilt.append(json.dumps([m.model_dump() for m in v.judgment.messages]))
    assert Counter(rebuilt) == Counter(json.dumps(m) for m in verify)


def test_a_claim_is_an_item_of_its_dataset(fact_run: tuple[Path, list[Any]]) -> None:
    run_dir, _ = fact_run
    claim = next(r for r in iter_rows(run_dir / "claims.jsonl") if r["answer_id"] == "a2")
    detail = item_detail(run_dir, claim["dataset"], f"a2:{claim['claim_id']}")
    assert detail.unit == "claim" and detail.variables is not None
    assert detail.variables["claim"] == claim["claim"]
    assert {j.judge_id for j in detail.judgments} == {LLM, "baseline:overlap"}
    assert "supported" in detail.labels
    with pytest.raises(KeyError):
        item_detail(run_dir, claim["dataset"], "a2:no-such-claim")
    with pytest.raises(KeyError):
        answer_detail(run_dir, "a9")


def test_scored_spans_are_highlighted_inside_the_passage(
    fact_run: tuple[Path, list[Any]], tmp_path: Path
) -> None:
    """A verifier that scores sentences of a passage records their offsets: those
    become highlights (offsets outside the passage are dropped, not shown wrong)."""
    run_dir, _ = fact_run
    path = run_dir / "verifications.jsonl"
    original = path.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in original.splitlines()]
    for row in rows:
        if row["answer_id"] == "a2" and row["verifier_id"] == "baseline:overlap":
            scored = {"relation_source": "lexical", "score_source": "lexical"}
            row["pairs"] = [
                {**scored, "passage_id": "p2", "span_id": "p2#s0", "start": 3, "end": 8},
                {**scored, "passage_id": "p2", "span_id": "p2#s9", "start": 30, "end": 99},
            ]
            row["pairs"][0]["s_support"] = 0.9
    try:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        detail = answer_detail(run_dir, "a2")
    finally:
        path.write_text(original, encoding="utf-8")
    verdict = next(
        v
        for v in detail.sentences[0].claims[0].verdicts
        if v.judgment.judge_id == "baseline:overlap"
    )
    (passage,) = verdict.evidence
    assert passage.text == "At sea level water boils at 100 C."
    (mark,) = passage.highlights
    assert passage.text[mark.start : mark.end] == "sea l" and mark.label == "p2#s0"
    assert mark.score == 0.9 and mark.source == "pair"


@pytest.fixture(scope="module")
def policies_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return applied_run(tmp_path_factory.mktemp("view_policies"))


def _policy_rows(run_dir: Path, name: str, file: str, answer_id: str) -> list[dict[str, Any]]:
    return [r for r in iter_rows(run_dir / "policies" / name / file) if r["answer_id"] == answer_id]


def test_each_claims_action_and_reason_under_every_policy(policies_run: Path) -> None:
    detail = answer_detail(policies_run, "q2")
    claims = [c for s in detail.sentences for c in s.claims] + detail.unplaced_claims
    assert [c.claim_id for c in claims] == ["c1", "c2"]
    for name in ("cert", "render"):
        expected = {
            r["claim_id"]: (r["decision"], r["reason"])
            for r in _policy_rows(policies_run, name, "claims.jsonl", "q2")
        }
        shown = {
            c.claim_id: [(p.action, p.reason) for p in c.policies if p.policy == name]
            for c in claims
        }
        assert {k: v[0] for k, v in shown.items()} == expected
    withheld = next(c for c in claims if c.claim_id == "c2")
    assert {p.policy: p.action for p in withheld.policies} == {
        "cert": "withhold",
        "render": "withhold",
    }


def test_the_answers_outcome_certificate_and_gate_decision(policies_run: Path) -> None:
    detail = answer_detail(policies_run, "q2")
    by_name = {p.policy: p for p in detail.policies}
    assert set(by_name) == {"cert", "gate", "render"}
    for name in ("cert", "render"):
        (cert,) = _policy_rows(policies_run, name, "certificates.jsonl", "q2")
        (response,) = _policy_rows(policies_run, name, "responses.jsonl", "q2")
        assert by_name[name].certificate == cert and by_name[name].response == response
        assert (by_name[name].outcome, by_name[name].reason) == (
            response["outcome"],
            response["reason"],
        )
    gate = by_name["gate"]
    assert gate.kind == "evidence_gate" and gate.gate_decision is not None
    assert gate.gate_decision["question_id"] == "q2" and gate.certificate is None


def test_a_retrieval_verifiers_passages_come_from_its_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The passages a retrieval verifier was shown are the corpus's, by the ids its
    verdict lists; the request rebuilt from them is the one sent, and an edited corpus
    is marked."""
    shutil.copy(EXAMPLES / "policies-passages.jsonl", tmp_path / "passages.jsonl")
    with FakeOpenAIServer() as server:
        server.default = reply("Answer: True")
        run_dir = make_run(tmp_path, RETRIEVAL_SPEC.format(base_url=server.base_url))
        sent = [json.dumps(b["messages"]) for b in server.requests]
    rebuilt: list[str] = []
    for a in answers(run_dir):
        for s in answer_detail(run_dir, a.answer_id).sentences:
            for v in (v for c in s.claims for v in c.verdicts):
                if v.judgment.messages_status == "no request":  # nothing retrieved
                    assert not v.evidence and v.judgment.attempts == 0
                    continue
                assert v.judgment.messages_status == "exact", v.judgment.messages_note
                assert v.evidence and all(p.text for p in v.evidence)
                assert v.judgment.messages is not None
                rebuilt.append(json.dumps([m.model_dump() for m in v.judgment.messages]))
    assert rebuilt and Counter(rebuilt) == Counter(sent)
    with (tmp_path / "passages.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "extra", "text": "An added passage."}) + "\n")
    verdicts = [
        v
        for a in answers(run_dir)
        for s in answer_detail(run_dir, a.answer_id).sentences
        for c in s.claims
        for v in c.verdicts
        if v.evidence
    ]
    assert {v.judgment.messages_status for v in verdicts} == {"dataset changed"}
    verdict = verdicts[0]
    assert "retrieval corpus changed since the run" in (verdict.judgment.messages_note or "")


SENTENCES = {"c1": ("q1-p1#s0", 0, 16), "c2": ("q1-p1#s1", 17, 37)}


def test_the_span_a_policy_rests_on_is_highlighted(tmp_path: Path) -> None:
    """A verifier that scored the passage's sentences: fail_closed keeps the sentence
    that entails each claim as its evidence, and that sentence is what is marked."""
    run_dir = make_gold_run(tmp_path, ROWS, name="spans")
    path = run_dir / "verifications.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["answer_id"] == "q1":
            (pair,) = row["pairs"]
            row["pairs"] = [
                {**pair, "span_id": span, "start": start, "end": end, "p_entail": entail,
                 "p_contradict": 0.0, "p_neutral": 1.0 - entail}
                for span, start, end in SENTENCES.values()
                for entail in [0.95 if (span, start, end) == SENTENCES[row["claim_id"]] else 0.1]
            ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    policy = tmp_path / "render.toml"
    policy.write_text(FAIL_CLOSED, encoding="utf-8")
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy)
    assert code == 0, err
    detail = answer_detail(run_dir, "q1")
    for claim in (c for s in detail.sentences for c in s.claims):
        ((passage,),) = [v.evidence for v in claim.verdicts]
        assert passage.text is not None
        marked = {(h.source, passage.text[h.start : h.end]) for h in passage.highlights}
        own = ROWS[0]["gold_claims"][int(claim.claim_id[1:]) - 1]["text"]  # type: ignore[index]
        assert ("policy", own) in marked and ("pair", own) in marked
        assert {p.policy: (p.action, p.reason) for p in claim.policies} == {
            "render": ("assert", "entailed")
        }
        policy_marks = [h for h in passage.highlights if h.source == "policy"]
        assert [h.label for h in policy_marks] == ["render: evidence"]
