"""Dataset importers: plain JSONL, MedScore input and outputs, ExpertQA, WiCE.

Hand-written files in tmp_path cover each format and its errors; the real public samples
under ../shared/data (outside the repo, never copied in) are read when present.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from assay.core.outcomes import Status
from assay.datasets import (
    AnswersDataset,
    import_medscore_outputs,
    load_answers,
    load_expertqa_claims,
    load_wice_reference_verdicts,
    medscore_reported_scores,
    read_true_false,
)
from assay.errors import DatasetError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _shared(name: str) -> Path:
    folder = SHARED / name
    if not folder.is_dir():
        pytest.skip(f"shared data sample {folder} is absent")
    return folder


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def _error(excinfo: pytest.ExceptionInfo[DatasetError]) -> tuple[str | None, int | None, str]:
    err = excinfo.value
    return (err.field, err.line, str(err))


# --------------------------------------------------------------------------- jsonl


def test_jsonl_aliases_defaults_and_evidence_shapes(tmp_path: Path) -> None:
    f = _jsonl(
        tmp_path / "answers.jsonl",
        [
            {"id": "a", "question": "Q?", "answer": "A.", "evidence": "One passage."},
            {"response": "R.", "prompt": "P?", "context": ["first", "second"]},
            "",
            {
                "id": 7,
                "output": "O.",
                "query": "Q2?",
                "evidence": [{"id": "doc1", "text": "T", "title": "Title"}, {"text": "U"}],
                "gold_factuality": 0.5,
            },
        ],
    )
    ds = load_answers(f)
    assert isinstance(ds, AnswersDataset)
    assert (ds.name, ds.format, ds.rows, ds.path) == ("answers", "jsonl", 3, str(f))
    a, b, c = ds.items
    assert (a.id, a.question, a.answer) == ("a", "Q?", "A.")
    assert [(p.id, p.text) for p in a.evidence] == [("a:ctx", "One passage.")]
    assert (b.id, b.question, b.answer) == ("2", "P?", "R.")  # id defaults to the line number
    assert [p.id for p in b.evidence] == ["2:ctx0", "2:ctx1"]
    assert (c.id, c.question, c.answer, c.gold_factuality) == ("7", "Q2?", "O.", 0.5)
    assert [(p.id, p.title) for p in c.evidence] == [("doc1", "Title"), ("7:ctx1", None)]
    assert a.gold_claims is None


def test_jsonl_splits_on_newline_only(tmp_path: Path) -> None:
    f = tmp_path / "u2028.jsonl"
    f.write_text(json.dumps({"answer": "line\u2028sep"}, ensure_ascii=False) + "\n", "utf-8")
    assert load_answers(f).items[0].answer == "line\u2028sep"


@pytest.mark.parametrize(
    ("row", "field", "needle"),
    [
        ({"id": "x", "text": "no answer"}, "answer", "'answer', 'response', 'output'"),
        ({"id": "x", "response": "   "}, "response", "answer is empty"),
        ({"id": "x", "answer": 3}, "answer", "valid string"),
        ({"id": "x", "answer": "A", "gold_factuality": 1.5}, "gold_factuality", "less than"),
        ({"id": "x", "answer": "A", "context": 5}, "context", "must be a string"),
        ({"id": "x", "answer": "A", "context": [{"id": "p"}]}, "context.0.text", "Field required"),
        ({"id": "", "answer": "A"}, "id", "at least 1 character"),
    ],
)
def test_jsonl_errors_name_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, needle: str
) -> None:
    f = _jsonl(tmp_path / "bad.jsonl", [{"id": "ok", "answer": "fine"}, row])
    with pytest.raises(DatasetError) as excinfo:
        load_answers(f, format="jsonl")
    got_field, line, text = _error(excinfo)
    assert (got_field, line) == (field, 2)
    assert text.startswith(f"{f}:2: field '{field}': ")
    assert needle in text


def test_jsonl_structural_errors(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "dup.jsonl", [{"id": "a", "answer": "x"}, {"id": "a", "answer": "y"}])
    with pytest.raises(DatasetError, match=r"dup.jsonl:2: field 'id': duplicate id 'a'"):
        load_answers(f)
    f = _jsonl(tmp_path / "broken.jsonl", [{"answer": "x"}, "{not json"])
    with pytest.raises(DatasetError, match=r"broken.jsonl:2: invalid JSON"):
        load_answers(f)
    f = _jsonl(tmp_path / "list.jsonl", [{"answer": "x"}, "[1, 2]"])
    with pytest.raises(DatasetError, match=r"list.jsonl:2: each row must be a JSON object"):
        load_answers(f, format="jsonl")
    f = _jsonl(tmp_path / "empty.jsonl", ["", ""])
    with pytest.raises(DatasetError, match="has no rows"):
        load_answers(f)
    with pytest.raises(DatasetError, match="not found"):
        load_answers(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match="unknown answers format 'csv'"):
        load_answers(f, format="csv")


def test_relative_path_resolves_against_base(tmp_path: Path) -> None:
    _jsonl(tmp_path / "sub" / "a.jsonl", [{"answer": "x"}])
    ds = load_answers("sub/a.jsonl", base=tmp_path, name="mine")
    assert (ds.name, ds.rows) == ("mine", 1)


# --------------------------------------------------------------------------- medscore-input


def test_medscore_input_maps_doctor_answer_to_evidence(tmp_path: Path) -> None:
    f = _jsonl(
        tmp_path / "askdocs.jsonl",
        [
            {"id": "q1", "question": "Q?", "response": "Bot.", "doctor_response": "Doc."},
            {
                "id": "q2",
                "question": "Q2?",
                "response": "Bot2.",
                "evidence": "Ev.",
                "doctor_response": "Doc2.",
            },
        ],
    )
    ds = load_answers(f)  # auto: response + doctor_response
    assert ds.format == "medscore-input"
    one, two = ds.items
    assert (one.id, one.question, one.answer) == ("q1", "Q?", "Bot.")
    assert [(p.id, p.text, p.source) for p in one.evidence] == [
        ("q1:ctx", "Doc.", "doctor_response")
    ]
    assert [(p.text, p.source) for p in two.evidence] == [("Ev.", "evidence")]


def test_medscore_input_evidence_file_and_errors(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "in.jsonl", [{"id": 1, "response": "A."}, {"id": 2, "response": "B."}])
    ev = tmp_path / "evidence.json"
    ev.write_text(json.dumps({"1": "Evidence one."}), encoding="utf-8")
    ds = load_answers(f, format="medscore-input", evidence_file=ev)
    assert [p.text for p in ds.items[0].evidence] == ["Evidence one."]
    assert ds.items[1].evidence == []  # MedScore too verifies without evidence for this id
    bad = _jsonl(tmp_path / "bad.jsonl", [{"id": "q", "answer": "not MedScore's key"}])
    with pytest.raises(DatasetError) as excinfo:
        load_answers(bad, format="medscore-input")
    assert _error(excinfo)[:2] == ("response", 1)
    no_id = _jsonl(tmp_path / "noid.jsonl", [{"response": "x"}])
    with pytest.raises(DatasetError, match=r"noid.jsonl:1: field 'id': Field required"):
        load_answers(no_id, format="medscore-input")
    with pytest.raises(DatasetError, match="only read with format 'medscore-input'"):
        load_answers(f, format="jsonl", evidence_file=ev)


# --------------------------------------------------------------------------- expertqa


def _expertqa_answer(answer_id: str, supports: list[str]) -> dict[str, Any]:
    claims = [
        {
            "claim_id": f"{answer_id}-c{k}",
            "claim": f"Claim {k}[{k + 1}].",
            "claim_clean": f"Claim {k}.",
            "evidence": [{"ref": f"[{k + 1}] https://example.org/{k}", "passage": f"P{k}"}],
            "support": s,
            "supported_binary": s == "Complete",
            "correctness": "Definitely correct",
        }
        for k, s in enumerate(supports)
    ]
    return {
        "answer_id": answer_id,
        "question": f"Question {answer_id}?",
        "system": "rr_gs_gpt4",
        "field": "Medicine",
        "answer": " ".join(c["claim"] for c in claims),
        "claims": claims,
        "gold_factuality": supports.count("Complete") / len(supports),
    }


def test_expertqa_items_claims_and_passages(tmp_path: Path) -> None:
    rows = [
        _expertqa_answer("a1", ["Complete", "Partial", "Incomplete"]),
        _expertqa_answer("a2", ["Complete"]),
    ]
    rows[0]["claims"][2]["evidence"].append(dict(rows[0]["claims"][0]["evidence"][0]))
    folder = tmp_path / "eqa"
    _jsonl(folder / "answers.jsonl", rows)
    ds = load_answers(folder)
    assert (ds.name, ds.format, ds.rows, Path(ds.path).name) == (
        "eqa",
        "expertqa",
        2,
        "answers.jsonl",
    )
    item = ds.items[0]
    assert (item.id, item.question, item.source) == ("a1", "Question a1?", "expertqa:rr_gs_gpt4")
    assert item.gold_factuality == pytest.approx(1 / 3)
    assert item.gold_claims is not None
    assert [(g.id, g.text, g.label) for g in item.gold_claims] == [
        ("a1-c0", "Claim 0.", "supported"),
        ("a1-c1", "Claim 1.", "unsupported"),
        ("a1-c2", "Claim 2.", "unsupported"),
    ]
    assert [p.id for p in item.evidence] == ["a1:ref1", "a1:ref2", "a1:ref3"]  # deduplicated
    assert item.evidence[0].source == "https://example.org/0"
    assert [p.id for p in item.gold_claims[2].evidence] == ["a1:ref3", "a1:ref1"]

    records = load_expertqa_claims(folder)
    assert [(r.claim_id, r.sentence_id, r.gold_label) for r in records] == [
        ("a1-c0", 0, "supported"),
        ("a1-c1", 1, "unsupported"),
        ("a1-c2", 2, "unsupported"),
        ("a2-c0", 0, "supported"),
    ]
    assert records[1].span == (12, 23)
    assert item.answer[12:23] == "Claim 1[2]."
    assert {r.dataset for r in records} == {"eqa"}
    assert {r.decomposer_id for r in records} == {"gold:expertqa"}


def test_expertqa_errors(tmp_path: Path) -> None:
    row = _expertqa_answer("a1", ["Complete", "Partial"])
    del row["claims"][1]["support"]
    f = _jsonl(tmp_path / "answers.jsonl", [_expertqa_answer("a0", ["Complete"]), row])
    with pytest.raises(DatasetError) as excinfo:
        load_answers(f, format="expertqa")
    assert _error(excinfo)[:2] == ("claims.1.support", 2)
    flat = _jsonl(
        tmp_path / "claims.jsonl",
        [{"claim_id": "c", "claim": "x", "support": "Complete", "evidence": [], "answer_id": "a"}],
    )
    with pytest.raises(DatasetError, match="claims.jsonl:1: this is ExpertQA's claims.jsonl"):
        load_answers(flat)
    (tmp_path / "nothing").mkdir()
    with pytest.raises(DatasetError, match="no ExpertQA answers file"):
        load_answers(tmp_path / "nothing", format="expertqa")


# --------------------------------------------------------------------------- wice


def _wice_rows(claim_id: str, label: str, judges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{claim_id}-chunk{k}",
            "claim_id": claim_id,
            "claim": f"Claim {claim_id}.",
            "evidence": f"line one {k}\nline two {k}",
            "evidence_sentences": [f"line one {k}", f"line two {k}"],
            "label": label,
            "supported_binary": label == "supported",
            "claim_title": f"Title {claim_id}",
            "reference_judges": j,
        }
        for k, j in enumerate(judges)
    ]


def test_wice_items_and_reference_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "wice"
    rows = _wice_rows(
        "t1",
        "partially_supported",
        [
            {"judge-a": "not_supported", "judge-b": "supported"},
            {"judge-a": "partially_supported", "judge-b": "not_supported"},
        ],
    ) + _wice_rows(
        "t2",
        "supported",
        [{"judge-a": "supported", "judge-b": None}, {"judge-a": "garbled", "judge-b": "maybe"}],
    )
    _jsonl(folder / "rows.jsonl", rows)
    ds = load_answers(folder)
    assert (ds.name, ds.format, ds.rows) == ("wice", "wice", 2)
    t1 = ds.items[0]
    assert (t1.id, t1.answer, t1.source, t1.question) == ("t1", "Claim t1.", "Title t1", None)
    assert [p.id for p in t1.evidence] == ["t1-chunk0", "t1-chunk1"]
    assert t1.evidence[1].text == "line one 1\nline two 1"
    assert t1.gold_claims is not None
    assert [(g.id, g.label, len(g.evidence)) for g in t1.gold_claims] == [
        ("t1", "partially_supported", 2)
    ]

    verdicts = {(v.claim_id, v.verifier_id): v for v in load_wice_reference_verdicts(folder)}
    assert len(verdicts) == 4
    a1 = verdicts[("t1", "judge-a")]
    assert (a1.status, a1.label, a1.score, a1.model) == (Status.OK, "unsupported", 0.0, "judge-a")
    assert a1.parsed is not None and a1.parsed["answer"] == "partially_supported"
    assert a1.gold_label == "partially_supported"
    assert a1.evidence == [
        {"passage_id": "t1-chunk0", "label": "not_supported"},
        {"passage_id": "t1-chunk1", "label": "partially_supported"},
    ]
    b1 = verdicts[("t1", "judge-b")]
    assert (b1.status, b1.label, b1.score) == (Status.OK, "supported", 1.0)
    # a supported chunk decides the maximum even when another chunk is unusable
    assert verdicts[("t2", "judge-a")].label == "supported"
    b2 = verdicts[("t2", "judge-b")]
    assert (b2.status, b2.label, b2.score) == (Status.PARSE_ERROR, None, None)
    assert b2.error is not None and "no usable verdict" in b2.error


def test_wice_claims_file_cross_checks(tmp_path: Path) -> None:
    folder = tmp_path / "wice"
    _jsonl(folder / "rows.jsonl", _wice_rows("t1", "supported", [{"j": "supported"}] * 2))
    _jsonl(
        folder / "claims.jsonl",
        [
            {
                "claim_id": "t1",
                "claim": "Claim t1.",
                "label": "supported",
                "n_chunks": 3,
                "reference_judges_max": {"j": "supported"},
            }
        ],
    )
    with pytest.raises(DatasetError) as excinfo:
        load_answers(folder)
    assert _error(excinfo)[:2] == ("n_chunks", 1)
    _jsonl(
        folder / "claims.jsonl",
        [
            {
                "claim_id": "t1",
                "claim": "Claim t1.",
                "label": "supported",
                "n_chunks": 2,
                "reference_judges_max": {"j": "not_supported"},
            }
        ],
    )
    with pytest.raises(DatasetError) as excinfo:
        load_wice_reference_verdicts(folder)
    assert _error(excinfo)[:2] == ("reference_judges_max.j", 1)
    # claims.jsonl alone: claim-level verdicts, no chunk detail; it has no evidence to load
    only = load_wice_reference_verdicts(folder / "claims.jsonl", dataset="w")
    assert [(v.dataset, v.label, v.evidence) for v in only] == [("w", "unsupported", [])]
    with pytest.raises(DatasetError, match="WiCE's claims.jsonl, which has no evidence"):
        load_answers(folder / "claims.jsonl")


def test_wice_chunks_must_agree(tmp_path: Path) -> None:
    rows = _wice_rows("t1", "supported", [{}, {}])
    rows[1]["label"] = "not_supported"
    f = _jsonl(tmp_path / "rows.jsonl", rows)
    with pytest.raises(DatasetError, match=r"rows.jsonl:2: field 'label': differs from"):
        load_answers(f)
    rows[1]["label"] = "maybe"
    _jsonl(f, rows)
    with pytest.raises(DatasetError) as excinfo:
        load_answers(f, format="wice")
    assert _error(excinfo)[:2] == ("label", 2)


# --------------------------------------------------------------------------- MedScore outputs


def _medscore_run(folder: Path, *, output_name: str = "output.jsonl") -> Path:
    """A tiny run written the way MedScore's medscore.py writes its three files."""
    sentences = {
        ("a1", 0): ("Aspirin thins blood.", ["Aspirin thins the blood.", "Aspirin is an NSAID."]),
        ("a1", 1): ("I hope this helps!", []),
        ("a2", 0): ("Statins lower LDL.", ["Statins lower LDL cholesterol."]),
        ("a2", 1): ("They cure diabetes.", ["Statins cure diabetes."]),
        ("a3", 0): ("Take care.", []),
    }
    decompositions: list[dict[str, Any]] = []
    for (aid, sid), (sentence, claims) in sentences.items():
        base = {"id": aid, "sentence_id": sid, "sentence": sentence}
        decompositions += [{**base, "claim": c, "claim_id": k} for k, c in enumerate(claims)]
        if not claims:
            decompositions.append({**base, "claim": None})
    raw = {  # (raw model text, MedScore's score for it)
        ("a1", 0, 0): ("True", 1.0),
        ("a1", 0, 1): ("", 1.0),  # MedScore scores an empty output as supported
        ("a2", 0, 0): ("Answer: True", 1.0),
        ("a2", 1, 0): ("False.", 0.0),
    }
    evidence = {"a1": "Doctor one.", "a2": "Doctor two.", "a3": "Doctor three."}
    verifications = []
    for d in decompositions:
        if d["claim"] is None:
            continue
        text, score = raw[(d["id"], d["sentence_id"], d["claim_id"])]
        verifications.append({**d, "evidence": evidence[d["id"]], "raw": text, "score": score})
    combined: dict[str, dict[str, Any]] = {a: {"id": a, "claims": []} for a in evidence}
    for v in verifications:
        info = {k: x for k, x in v.items() if k not in {"id", "sentence_id", "claim_id"}}
        combined[v["id"]]["claims"].append(info)
    for entry in combined.values():
        scores = [c["score"] for c in entry["claims"]]
        entry["score"] = sum(scores) / len(scores) if scores else None
    _jsonl(folder / "decompositions.jsonl", decompositions)
    _jsonl(folder / "verifications.jsonl", verifications)
    _jsonl(folder / output_name, list(combined.values()))
    return folder


def test_medscore_outputs_import_and_recompute(tmp_path: Path) -> None:
    folder = _medscore_run(tmp_path / "run")
    sentences, claims, verifications = import_medscore_outputs(
        folder, dataset="askdocs", verifier_model="mistral-small"
    )
    assert [(s.answer_id, s.sentence_id, s.n_claims, s.status) for s in sentences] == [
        ("a1", 0, 2, Status.OK),
        ("a1", 1, 0, Status.OK),
        ("a2", 0, 1, Status.OK),
        ("a2", 1, 1, Status.OK),
        ("a3", 0, 0, Status.OK),
    ]
    assert sentences[0].sentence == "Aspirin thins blood."
    assert [c.claim_id for c in claims] == ["a1:s0:c0", "a1:s0:c1", "a2:s0:c0", "a2:s1:c0"]
    assert {(c.dataset, c.decomposer_id) for c in claims} == {("askdocs", "medscore")}
    by_id = {v.claim_id: v for v in verifications}
    ok = by_id["a1:s0:c0"]
    assert (ok.status, ok.label, ok.score, ok.raw_output) == (Status.OK, "supported", 1.0, "True")
    assert (ok.verifier_id, ok.model, ok.parser_version, ok.sentence_id) == (
        "medscore",
        "mistral-small",
        "medscore-import/1",
        0,
    )
    assert ok.evidence == [{"passage_id": "a1:ctx", "text": "Doctor one."}]
    assert ok.parsed == {
        "medscore_score": 1.0,
        "score_present": True,
        "rule": "bare-line",
        "agrees_with_medscore": True,
    }
    empty = by_id["a1:s0:c1"]  # MedScore said 1.0; assay will not read "" as supported
    assert (empty.status, empty.label, empty.score, empty.error) == (
        Status.PARSE_ERROR,
        None,
        None,
        "empty output",
    )
    assert empty.raw_output == "" and empty.parsed is not None
    assert empty.parsed["medscore_score"] == 1.0
    assert by_id["a2:s0:c0"].label == "supported"
    assert (by_id["a2:s1:c0"].label, by_id["a2:s1:c0"].score) == ("unsupported", 0.0)

    reported = medscore_reported_scores(folder / "output.jsonl")
    assert reported == {"a1": 1.0, "a2": 0.5, "a3": None}
    assert medscore_reported_scores(folder) == reported
    # assay's recomputation from the per-claim records: supported share of `ok` verdicts
    tally: dict[str, list[float]] = defaultdict(list)
    failed: Counter[str] = Counter()
    for v in verifications:
        if v.status is Status.OK and v.score is not None:
            tally[v.answer_id].append(v.score)
        else:
            failed[v.answer_id] += 1
    recomputed = {a: sum(s) / len(s) for a, s in tally.items()}
    assert recomputed == {"a1": 1.0, "a2": 0.5}
    assert failed == Counter({"a1": 1})  # same number, but on 1 claim instead of 2


def test_medscore_verdict_policy_variants(tmp_path: Path) -> None:
    base = {"id": "x", "sentence": "S.", "sentence_id": 0, "evidence": None}
    cases = [
        ({"raw": "The context does not mention it.", "score": 0.0}, Status.PARSE_ERROR, None),
        ({"raw": "True", "score": None}, Status.PARSE_ERROR, None),
        ({"raw": "True"}, Status.PARSE_ERROR, None),  # no score: the row is incomplete
        ({"score": 1.0}, Status.OK, "supported"),  # no raw text: MedScore's 0/1 decides
        ({"score": 0}, Status.OK, "unsupported"),
        ({"raw": None, "score": 0.5}, Status.PARSE_ERROR, None),
        ({"raw": "true or false?\nTrue, not false", "score": 1.0}, Status.PARSE_ERROR, None),
        ({"raw": '{"answer": false}', "score": 0.0}, Status.OK, "unsupported"),
        ({"raw": "Reasoning...\n**False**", "score": 1.0}, Status.OK, "unsupported"),
    ]
    rows = [
        {**base, "claim": f"Claim {k}.", "claim_id": k, **extra}
        for k, (extra, _, _) in enumerate(cases)
    ]
    f = _jsonl(tmp_path / "verifications.jsonl", rows)
    sentences, claims, verifications = import_medscore_outputs([f])
    assert len(sentences) == 1 and sentences[0].n_claims == len(cases)  # rebuilt
    assert len(claims) == len(cases)
    got = [(v.status, v.label) for v in verifications]
    assert got == [(status, label) for _, status, label in cases]
    assert verifications[0].error == "no final 'Answer: True|False' line"
    assert verifications[1].error == "MedScore row has no score"
    assert verifications[3].parsed is not None
    assert verifications[3].parsed["rule"] == "medscore-score"
    assert verifications[8].parsed is not None
    assert verifications[8].parsed["agrees_with_medscore"] is False  # MedScore's rule: true


def test_medscore_old_output_name_and_output_only(tmp_path: Path) -> None:
    folder = _medscore_run(tmp_path / "old", output_name="medscore_output.jsonl")
    assert len(import_medscore_outputs(folder)[2]) == 4
    (folder / "decompositions.jsonl").unlink()
    (folder / "verifications.jsonl").unlink()
    sentences, claims, verifications = import_medscore_outputs(folder)
    assert (sentences, claims) == ([], [])
    assert [(v.claim_id, v.sentence_id, v.status) for v in verifications] == [
        ("a1:c0", None, Status.OK),
        ("a1:c1", None, Status.PARSE_ERROR),
        ("a2:c0", None, Status.OK),
        ("a2:c1", None, Status.OK),
    ]


def test_medscore_cross_check_errors(tmp_path: Path) -> None:
    folder = _medscore_run(tmp_path / "run")
    verifs = [json.loads(x) for x in (folder / "verifications.jsonl").read_text().splitlines()]

    changed = [dict(v) for v in verifs]
    changed[2]["claim"] = "Something else."
    _jsonl(folder / "verifications.jsonl", changed)
    with pytest.raises(DatasetError) as excinfo:
        import_medscore_outputs(folder)
    assert _error(excinfo)[:2] == ("claim", 3)
    assert "decompositions.jsonl line" in str(excinfo.value)

    changed = [dict(v) for v in verifs]
    changed[0]["claim_id"] = 9
    _jsonl(folder / "verifications.jsonl", changed)
    with pytest.raises(DatasetError) as excinfo:
        import_medscore_outputs(folder)
    assert _error(excinfo)[:2] == ("claim_id", 1)

    _jsonl(folder / "verifications.jsonl", verifs[:-1])  # output.jsonl still lists it
    with pytest.raises(DatasetError) as excinfo:
        import_medscore_outputs(folder)
    assert _error(excinfo)[:2] == ("claims", 2)
    assert str(excinfo.value).startswith(f"{folder / 'output.jsonl'}:2: field 'claims': ")

    _jsonl(folder / "verifications.jsonl", verifs)
    outputs = [json.loads(x) for x in (folder / "output.jsonl").read_text().splitlines()]
    outputs[1]["score"] = 0.75
    _jsonl(folder / "output.jsonl", outputs)
    with pytest.raises(DatasetError) as excinfo:
        import_medscore_outputs(folder)
    assert _error(excinfo)[:2] == ("score", 2)

    bad = _jsonl(tmp_path / "x" / "decompositions.jsonl", [{"id": "a", "sentence": "S."}])
    with pytest.raises(DatasetError) as excinfo:
        import_medscore_outputs(bad)
    assert _error(excinfo)[:2] == ("sentence_id", 1)
    with pytest.raises(DatasetError, match="unrecognised MedScore file name"):
        import_medscore_outputs(tmp_path / "x" / "other.jsonl")
    with pytest.raises(DatasetError, match="no MedScore output files"):
        import_medscore_outputs(tmp_path)
    with pytest.raises(DatasetError, match="MedScore outputs; read them with import_medscore"):
        load_answers(folder)


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        ("True", True),
        (" false. ", False),
        ("Answer: TRUE", True),
        ("**True**", True),
        ("untrue", None),
        ("", None),
        ("True. The evidence says so.", None),
        ('{"label": "true"}', True),
        ("Final answer - False", False),
    ],
)
def test_read_true_false(raw: str, verdict: bool | None) -> None:
    assert read_true_false(raw)[0] is verdict


# --------------------------------------------------------------------------- real samples


def test_real_expertqa_sample() -> None:
    folder = _shared("expertqa")
    ds = load_answers(folder)
    assert (ds.format, ds.rows) == ("expertqa", 49)
    gold = [g for item in ds.items for g in item.gold_claims or []]
    assert len(gold) == 301
    assert Counter(g.label for g in gold) == {"supported": 209, "unsupported": 92}
    for item in ds.items:  # gold_factuality is the share of support == Complete
        assert item.gold_claims and item.gold_factuality is not None
        share = sum(g.label == "supported" for g in item.gold_claims) / len(item.gold_claims)
        assert item.gold_factuality == pytest.approx(share)
    assert sum(i.gold_factuality or 0 for i in ds.items) / 49 == pytest.approx(0.66, abs=0.005)
    first = ds.items[0]  # inspected by hand in answers.jsonl line 1
    assert first.id == "expertqa-randtest-q106-post_hoc_gs_gpt4"
    assert first.source == "expertqa:post_hoc_gs_gpt4"
    assert first.question and first.question.startswith("There is a racing game of futuristic")
    assert first.gold_factuality == pytest.approx(2 / 15)
    assert first.gold_claims is not None and len(first.gold_claims) == 15
    c0 = first.gold_claims[0]
    assert c0.id == "expertqa-randtest-q106-post_hoc_gs_gpt4-c0"
    assert c0.label == "unsupported"  # support "Incomplete"
    assert c0.text.endswith("several features and penalties.")  # claim_clean
    assert [(p.id, p.source) for p in c0.evidence] == [
        (
            "expertqa-randtest-q106-post_hoc_gs_gpt4:ref1",
            "https://en.wikipedia.org/wiki/Glossary_of_video_game_terms",
        )
    ]
    assert c0.evidence[0].text.startswith("if they are a member of the caster's party)")
    assert load_answers(folder / "answers.jsonl").sha256 == ds.sha256

    from_answers = load_expertqa_claims(folder)
    from_claims = load_expertqa_claims(folder / "claims.jsonl", dataset="expertqa")
    assert len(from_answers) == len(from_claims) == 301
    key = [(r.claim_id, r.answer_id, r.sentence_id, r.claim, r.gold_label) for r in from_answers]
    assert key == [
        (r.claim_id, r.answer_id, r.sentence_id, r.claim, r.gold_label) for r in from_claims
    ]


def test_real_wice_sample() -> None:
    folder = _shared("wice_oracle")
    ds = load_answers(folder)  # also cross-checks claims.jsonl
    assert (ds.format, ds.rows, ds.name) == ("wice", 100, "wice_oracle")
    assert all(len(item.evidence) == 3 for item in ds.items)
    labels = Counter(g.label for item in ds.items for g in item.gold_claims or [])
    assert labels == {"partially_supported": 73, "supported": 22, "not_supported": 5}
    first = ds.items[0]  # rows.jsonl lines 1-3
    assert (first.id, first.source) == ("test00561", "Irene Hervey")
    assert first.answer.startswith("Irene Hervey (born Beulah Irene Herwick")
    assert [p.id for p in first.evidence] == [f"test00561-chunk{k}" for k in range(3)]
    assert first.evidence[0].text.startswith("(meta data) TITLE: Irene Hervey")
    assert first.gold_claims is not None and first.gold_claims[0].label == "partially_supported"

    verdicts = load_wice_reference_verdicts(folder)
    assert len(verdicts) == 200 and all(v.status is Status.OK for v in verdicts)
    assert Counter(v.verifier_id for v in verdicts) == {
        "gpt-4-0613": 100,
        "gpt-3.5-turbo-0613": 100,
    }
    assert [v.dataset for v in verdicts[:1]] == [ds.name]
    g4 = next(v for v in verdicts if v.claim_id == "test00561" and v.verifier_id == "gpt-4-0613")
    assert (g4.label, g4.gold_label) == ("supported", "partially_supported")
    assert (
        g4.parsed is not None and g4.parsed["chunks"]["test00561-chunk0"] == "partially_supported"
    )
    # the README's reference figures, from the imported records
    expected = {"gpt-4-0613": (0.787, 0.69), "gpt-3.5-turbo-0613": (0.56, 0.34)}
    for judge, (bacc, acc) in expected.items():
        mine = [v for v in verdicts if v.verifier_id == judge]
        assert sum(
            v.parsed is not None and v.parsed["answer"] == v.gold_label for v in mine
        ) / 100 == (pytest.approx(acc))
        pos = [v for v in mine if v.gold_label == "supported"]
        neg = [v for v in mine if v.gold_label != "supported"]
        recall_pos = sum(v.label == "supported" for v in pos) / len(pos)
        recall_neg = sum(v.label == "unsupported" for v in neg) / len(neg)
        assert (recall_pos + recall_neg) / 2 == pytest.approx(bacc, abs=0.0005)
    rows_only = load_wice_reference_verdicts(folder / "rows.jsonl", dataset="wice_oracle")
    claims_only = load_wice_reference_verdicts(folder / "claims.jsonl", dataset="wice_oracle")
    assert [(v.claim_id, v.verifier_id, v.label) for v in rows_only] == [
        (v.claim_id, v.verifier_id, v.label) for v in claims_only
    ]


def test_real_medscore_askdocs_sample() -> None:
    folder = _shared("medscore_askdocs")
    ds = load_answers(folder / "sample.jsonl")
    assert (ds.format, ds.rows) == ("medscore-input", 50)
    raw = [json.loads(x) for x in (folder / "sample.jsonl").read_text("utf-8").split("\n") if x]
    for item, row in zip(ds.items, raw, strict=True):
        assert [p.text for p in item.evidence] == [row["doctor_response"]]
        assert (item.answer, item.question) == (row["response"], row["question"])
    first = ds.items[0]
    assert first.id == "xl3kn5_20241101"
    assert first.question and first.question.startswith("Does a brain CT Scan rule out stroke?")
    assert first.answer.startswith("I spoke to your doctor")
    assert first.evidence[0].id == "xl3kn5_20241101:ctx"
    assert first.evidence[0].text.startswith('"Stroke" can either be infarction or hemorrhage.')
    assert first.gold_claims is None and first.gold_factuality is None


def test_real_samples_auto_detect() -> None:
    expected = {"expertqa": "expertqa", "wice_oracle": "wice"}
    for name, fmt in expected.items():
        assert load_answers(_shared(name)).format == fmt
    assert load_answers(_shared("expertqa") / "answers.jsonl").format == "expertqa"
    assert load_answers(_shared("wice_oracle") / "rows.jsonl").format == "wice"
    pubmedqa = _shared("pubmedqa") / "pqal_test_sample.jsonl"
    with pytest.raises(DatasetError, match="field 'answer': missing"):
        load_answers(pubmedqa)  # no answer field: it is not an answers dataset


def test_import_medscore_cli_makes_a_run_and_scores_it(tmp_path: Path) -> None:
    from _cli import invoke  # the console script's main(), in-process

    folder = _medscore_run(tmp_path / "ms")
    out = tmp_path / "imported"
    code, _, err = invoke(["import-medscore", str(folder), "--output-dir", str(out)])
    assert code == 0, err
    import json

    metrics = json.loads((out / "metrics.json").read_text())
    row = metrics["factuality"]["scores"]["rows"][0]
    # 4 claims: the empty verdict MedScore scored 1.0 is a parse_error here (unscored)
    assert row["n_claims"] == 4 and row["n_parse_error"] == 1 and row["n_scored"] == 3
    assert row["micro"] == pytest.approx(2 / 3)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["imported_from"]["tool"] == "MedScore"
    # recompute reproduces the same metrics from the imported files
    code, _, err = invoke(["recompute", str(out)])
    assert code == 0, err
    assert json.loads((out / "metrics.json").read_text()) == metrics
