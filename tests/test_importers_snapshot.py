"""The importers give the same records and the same errors as before they were split.

`tests/fixtures/importers/expected.json` was written by the single-module importer
(`assay/datasets/_importers.py` at commit ea43e46) with `python
tests/test_importers_snapshot.py --write`, before the split into one module per source.
The public samples under ../shared/data are licensed text that is never copied into the
repo, so for them the fixture keeps the sha256 of the canonical JSON of every record
(and the counts); the small synthetic MedScore runs and the error battery are kept whole.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from assay.datasets import (
    import_medscore_outputs,
    load_answers,
    load_expertqa_claims,
    load_wice_reference_verdicts,
    medscore_reported_scores,
    medscore_response_ids,
)
from assay.errors import DatasetError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
EXPECTED = Path(__file__).parent / "fixtures" / "importers" / "expected.json"

Loader = Callable[[], object]


# Record fields added after the fixture was written, left out when they hold their default
# (an importer never sets them): the fixture pins what the importers produce, not the schema.
LATER_FIELDS = ("request_key",)


def _canonical(value: object) -> Any:
    """Records as plain JSON; an answers dataset without its machine-dependent path."""
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json")
        if "items" in dumped and "format" in dumped:
            dumped.pop("path")
        for name in LATER_FIELDS:
            if name in dumped and dumped[name] is None:
                dumped.pop(name)
        return dumped
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


def _digest(value: object) -> dict[str, Any]:
    data = _canonical(value)
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    count = len(data) if isinstance(data, list) else len(data["items"])
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "count": count}


def shared_cases() -> dict[str, Loader]:
    """Every importer entry point on every public sample it reads."""
    eqa, wice, ms = SHARED / "expertqa", SHARED / "wice_oracle", SHARED / "medscore_askdocs"
    return {
        "expertqa/folder": lambda: load_answers(eqa),
        "expertqa/answers.jsonl": lambda: load_answers(eqa / "answers.jsonl", format="expertqa"),
        "expertqa/claims:folder": lambda: load_expertqa_claims(eqa),
        "expertqa/claims:claims.jsonl": lambda: load_expertqa_claims(
            eqa / "claims.jsonl", dataset="expertqa"
        ),
        "wice/folder": lambda: load_answers(wice),
        "wice/rows.jsonl": lambda: load_answers(wice / "rows.jsonl"),
        "wice/verdicts:folder": lambda: load_wice_reference_verdicts(wice),
        "wice/verdicts:rows.jsonl": lambda: load_wice_reference_verdicts(wice / "rows.jsonl"),
        "wice/verdicts:claims.jsonl": lambda: load_wice_reference_verdicts(
            wice / "claims.jsonl", dataset="w"
        ),
        "medscore/auto": lambda: load_answers(ms / "sample.jsonl"),
        "medscore/as-jsonl": lambda: load_answers(ms / "sample.jsonl", format="jsonl"),
        "builtin/factuality-demo": lambda: load_answers("builtin:factuality-demo"),
    }


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _medscore_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Decompositions, verifications and output rows of a small MedScore run."""
    decomp: list[dict[str, Any]] = [
        {"id": "a1", "sentence_id": 0, "sentence": "S0.", "claim": "C0.", "claim_id": 0},
        {"id": "a1", "sentence_id": 0, "sentence": "S0.", "claim": "C1.", "claim_id": 1},
        {"id": "a1", "sentence_id": 1, "sentence": "Bye.", "claim": None},
        {"id": 2, "sentence_id": 0, "sentence": "T0.", "claim": "D0.", "claim_id": 0},
        {"id": 2, "sentence_id": 1, "sentence": "T1.", "claim": "D1.", "claim_id": 0},
        {"id": 2, "sentence_id": 2, "sentence": "T2.", "claim": "D2.", "claim_id": 0},
        {"id": "a3", "sentence_id": 0, "sentence": "Ok.", "claim": None},
    ]
    extra: list[dict[str, Any]] = [
        {"raw": "True", "score": 1.0, "evidence": "Doc one."},
        {"raw": "", "score": 1.0, "evidence": "Doc one."},
        {"raw": "Reasoning...\n**False**", "score": 1.0, "evidence": [{"id": 9, "text": "R"}]},
        {"score": 0, "evidence": [{"text": "no id"}]},
        {"raw": 3, "score": 1.0, "evidence": None},
    ]
    claims = [d for d in decomp if d["claim"] is not None]
    verif: list[dict[str, Any]] = [d | e for d, e in zip(claims, extra, strict=True)]
    output: list[dict[str, Any]] = [
        {"id": "a1", "score": 1.0, "claims": [verif[0], verif[1]]},
        {"id": 2, "score": 2 / 3, "claims": verif[2:]},
        {"id": "a3", "score": None, "claims": []},
    ]
    return decomp, verif, output


def _medscore_folder(root: Path, names: tuple[str, ...]) -> Path:
    decomp, verif, output = _medscore_rows()
    files = {"decompositions.jsonl": decomp, "verifications.jsonl": verif}
    files |= {"output.jsonl": output, "medscore_output.jsonl": output}
    for name in names:
        _jsonl(root / name, files[name])
    return root


def medscore_cases(tmp: Path) -> dict[str, Loader]:
    full = ("decompositions.jsonl", "verifications.jsonl", "output.jsonl")
    runs = {
        "full": full,
        "old-output-name": (*full[:2], "medscore_output.jsonl"),
        "verifications-only": ("verifications.jsonl",),
        "output-only": ("output.jsonl",),
    }
    cases: dict[str, Loader] = {}
    for label, names in runs.items():
        folder = _medscore_folder(tmp / label, names)
        cases[f"medscore-outputs/{label}"] = partial(
            import_medscore_outputs, folder, dataset="ms", verifier_model="m"
        )
        cases[f"medscore-ids/{label}"] = partial(medscore_response_ids, folder)
    files = [tmp / "full" / n for n in full[:2]]
    cases["medscore-outputs/file-list"] = lambda: import_medscore_outputs(files)
    cases["medscore-scores"] = lambda: medscore_reported_scores(tmp / "full")
    return cases


def _bad(tmp: Path, name: str, rows: list[Any]) -> Path:
    return _jsonl(tmp / "bad" / name / "data.jsonl", rows)


def _wice_row(claim_id: str, k: int, **extra: Any) -> dict[str, Any]:
    row = {"id": f"{claim_id}-chunk{k}", "claim_id": claim_id, "claim": "C.", "evidence": "E"}
    return {**row, "label": "supported", "reference_judges": {"j": "supported"}, **extra}


def _answers_errors(tmp: Path) -> dict[str, Loader]:
    ok = {"id": "ok", "answer": "fine"}
    rows: dict[str, list[Any]] = {
        "no-answer": [ok, {"id": "x", "text": "t"}],
        "blank-answer": [ok, {"id": "x", "response": "  "}],
        "evidence-type": [ok, {"id": "x", "answer": "A", "context": 5}],
        "evidence-entry": [ok, {"id": "x", "answer": "A", "evidence": [{"id": "p"}]}],
        "question-type": [{"answer": "A", "prompt": 4}],
        "dup-id": [ok, {**ok, "answer": "again"}],
        "not-json": [ok, "{nope"],
        "not-object": [ok, "[1]"],
        "blank": ["", " "],
        "bool-id": [{"id": True, "answer": "A"}],
        "float-id": [{"id": 1.5, "answer": "A"}],
    }
    files = {k: _bad(tmp, k, r) for k, r in rows.items()}
    return {f"jsonl/{k}": partial(load_answers, f, format="jsonl") for k, f in files.items()}


def _medscore_input_errors(tmp: Path) -> dict[str, Loader]:
    evidence = tmp / "bad" / "evidence.json"
    evidence.parent.mkdir(parents=True, exist_ok=True)
    evidence.write_text('{"1": 5}', encoding="utf-8")
    ok = _bad(tmp, "ms-ok", [{"id": 1, "response": "A."}])
    return {
        "medscore-input/no-response": lambda: load_answers(
            _bad(tmp, "ms-noresp", [{"id": "q", "answer": "x"}]), format="medscore-input"
        ),
        "medscore-input/dup": lambda: load_answers(
            _bad(tmp, "ms-dup", [{"id": 1, "response": "a"}, {"id": "1", "response": "b"}]),
            format="medscore-input",
        ),
        "medscore-input/evidence-value": lambda: load_answers(
            ok, format="medscore-input", evidence_file=evidence
        ),
        "medscore-input/evidence-missing": lambda: load_answers(
            ok, format="medscore-input", evidence_file=tmp / "absent.json"
        ),
        "medscore-input/evidence-wrong-format": lambda: load_answers(
            ok, format="jsonl", evidence_file=evidence
        ),
        "medscore-input/folder": lambda: load_answers(ok.parent, format="medscore-input"),
    }


def _expertqa_errors(tmp: Path) -> dict[str, Loader]:
    claim = {"claim_id": "c", "claim": "x", "support": "Complete", "evidence": []}
    answer = {"answer_id": "a", "answer": "x", "claims": [claim]}
    return {
        "expertqa/missing-support": lambda: load_answers(
            _bad(tmp, "eqa-sup", [{**answer, "claims": [{"claim_id": "c", "claim": "x"}]}]),
            format="expertqa",
        ),
        "expertqa/dup-answer": lambda: load_answers(
            _bad(tmp, "eqa-dup", [answer, answer]), format="expertqa"
        ),
        "expertqa/factuality-range": lambda: load_answers(
            _bad(tmp, "eqa-gf", [{**answer, "gold_factuality": 2}]), format="expertqa"
        ),
        "expertqa/claims-file-auto": lambda: load_answers(
            _bad(tmp, "eqa-claims", [{**claim, "answer_id": "a"}])
        ),
        "expertqa/claims-dup": lambda: load_expertqa_claims(
            _bad(tmp, "eqa-cdup", [{**claim, "answer_id": "a"}] * 2)
        ),
        "expertqa/answers-claims-dup": lambda: load_expertqa_claims(
            _bad(tmp, "eqa-acdup", [answer, {**answer, "answer_id": "b"}])
        ),
        "expertqa/empty-folder": lambda: load_answers(
            (tmp / "bad" / "eqa-empty").resolve(), format="expertqa"
        ),
        "expertqa/no-support": lambda: load_answers(
            _bad(tmp, "eqa-nosup", [{**answer, "claims": [{**claim, "support": None}]}]),
            format="expertqa",
        ),
    }


def _wice_errors(tmp: Path) -> dict[str, Loader]:
    claims_row = {"claim_id": "t", "claim": "C.", "label": "supported", "n_chunks": 1}
    folder = tmp / "bad" / "wice-n"
    _jsonl(folder / "rows.jsonl", [_wice_row("t", 0)])
    _jsonl(folder / "claims.jsonl", [{**claims_row, "n_chunks": 2}])
    folder_max = tmp / "bad" / "wice-max"
    _jsonl(folder_max / "rows.jsonl", [_wice_row("t", 0)])
    _jsonl(folder_max / "claims.jsonl", [{**claims_row, "reference_judges_max": {"j": "x"}}])
    return {
        "wice/label-differs": lambda: load_answers(
            _bad(tmp, "w-lab", [_wice_row("t", 0), _wice_row("t", 1, label="not_supported")])
        ),
        "wice/bad-label": lambda: load_answers(
            _bad(tmp, "w-bad", [_wice_row("t", 0, label="maybe")]), format="wice"
        ),
        "wice/dup-passage": lambda: load_answers(
            _bad(tmp, "w-dup", [_wice_row("t", 0), _wice_row("t", 0)]), format="wice"
        ),
        "wice/claims-file-auto": lambda: load_answers(
            _bad(tmp, "w-claims", [{**claims_row, "reference_judges_max": {}}])
        ),
        "wice/n-chunks": lambda: load_answers(folder),
        "wice/recorded-max": lambda: load_wice_reference_verdicts(folder_max),
        "wice/verdicts-no-judge": lambda: load_wice_reference_verdicts(
            _bad(tmp, "w-nojudge", [_wice_row("t", 0, reference_judges={"j": None})])
        ),
    }


def _medscore_output_errors(tmp: Path) -> dict[str, Loader]:
    decomp, verif, output = _medscore_rows()
    variants: dict[str, dict[str, list[Any]]] = {
        "not-decomposed": {"decompositions.jsonl": decomp[:1], "verifications.jsonl": verif},
        "claim-text": {
            "decompositions.jsonl": decomp,
            "verifications.jsonl": [{**verif[0], "claim": "Other."}],
        },
        "sentence-differs": {"decompositions.jsonl": [decomp[0], {**decomp[1], "sentence": "X"}]},
        "no-claim-id": {"decompositions.jsonl": [{**decomp[0], "claim_id": None}]},
        "dup-decomposed": {"decompositions.jsonl": [decomp[0], decomp[0]]},
        "dup-verified": {"verifications.jsonl": [verif[0], verif[0]]},
        "output-claims": {
            "verifications.jsonl": verif,
            "output.jsonl": [output[0] | {"claims": []}],
        },
        "output-score": {
            "verifications.jsonl": verif[:2],
            "output.jsonl": [output[0] | {"score": 0.5}],
        },
        "output-missing-id": {"verifications.jsonl": verif, "output.jsonl": output[:1]},
        "output-dup": {"output.jsonl": [output[0], output[0]]},
    }
    cases: dict[str, Loader] = {}
    for label, files in variants.items():
        folder = tmp / "bad" / f"ms-{label}"
        for name, rows in files.items():
            _jsonl(folder / name, rows)
        cases[f"medscore-outputs/{label}"] = partial(import_medscore_outputs, folder)
    (tmp / "bad" / "ms-empty").mkdir(parents=True)
    cases["medscore-outputs/empty-folder"] = lambda: import_medscore_outputs(
        tmp / "bad" / "ms-empty"
    )
    cases["medscore-outputs/bad-name"] = lambda: import_medscore_outputs(
        [tmp / "bad" / "ms-dup-verified" / "verifications.jsonl", tmp / "x.txt"]
    )
    twice = tmp / "bad" / "ms-dup-verified" / "verifications.jsonl"
    cases["medscore-outputs/two-of-a-kind"] = lambda: import_medscore_outputs([twice, twice])
    cases["medscore-outputs/no-folder"] = lambda: import_medscore_outputs(tmp / "nowhere")
    return cases


def error_cases(tmp: Path) -> dict[str, Loader]:
    cases = _answers_errors(tmp) | _medscore_input_errors(tmp) | _expertqa_errors(tmp)
    cases |= _wice_errors(tmp) | _medscore_output_errors(tmp)
    (tmp / "bad" / "unknown-folder").mkdir(parents=True, exist_ok=True)
    (tmp / "bad" / "eqa-empty").mkdir(parents=True, exist_ok=True)
    cases["auto/unknown-folder"] = lambda: load_answers(tmp / "bad" / "unknown-folder")
    cases["auto/medscore-outputs-folder"] = lambda: load_answers(tmp / "bad" / "ms-dup-decomposed")
    cases["auto/medscore-output-file"] = lambda: load_answers(
        tmp / "bad" / "ms-dup-verified" / "verifications.jsonl"
    )
    cases["format/unknown"] = lambda: load_answers(
        tmp / "bad" / "no-answer" / "data.jsonl", format="csv"
    )
    cases["format/missing-file"] = lambda: load_answers(tmp / "absent.jsonl")
    return cases


def _error_of(loader: Loader, tmp: Path) -> dict[str, Any]:
    try:
        loader()
    except DatasetError as err:
        text = str(err).replace(str(tmp), "<tmp>")
        return {"error": text, "field": err.field, "line": err.line}
    return {"error": None}


def snapshot(tmp: Path) -> dict[str, Any]:
    """Everything the fixture holds, computed by the importers as they are now."""
    shared = {k: _digest(f()) for k, f in shared_cases().items()} if SHARED.is_dir() else {}
    medscore = {k: _canonical(f()) for k, f in medscore_cases(tmp / "ms").items()}
    errors = {k: _error_of(f, tmp / "err") for k, f in error_cases(tmp / "err").items()}
    return {"shared": shared, "medscore": medscore, "errors": errors}


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("case", sorted(shared_cases()))
def test_shared_samples_import_as_before(case: str, expected: dict[str, Any]) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"shared data samples {SHARED} are absent")
    assert _digest(shared_cases()[case]()) == expected["shared"][case]


def test_medscore_outputs_import_as_before(tmp_path: Path, expected: dict[str, Any]) -> None:
    got = {k: _canonical(f()) for k, f in medscore_cases(tmp_path).items()}
    assert got == expected["medscore"]


def test_errors_read_as_before(tmp_path: Path, expected: dict[str, Any]) -> None:
    got = {k: _error_of(f, tmp_path) for k, f in error_cases(tmp_path).items()}
    assert got == expected["errors"]
    assert sum(e["error"] is not None for e in got.values()) >= len(got) - 2


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(snapshot(Path(tmp)), indent=1, sort_keys=True) + "\n")
    print(f"wrote {EXPECTED}")
