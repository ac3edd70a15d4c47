"""ForceBench loaders: JSONL and CSV, errors that point at file:line and field."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assay.datasets import (
    BUILTIN_DATASETS,
    Axis,
    ForcePair,
    Member,
    load_pairs,
    resolve_dataset_path,
)
from assay.errors import DatasetError

FIELDS = [
    "id",
    "question",
    "evidence",
    "evidence_span",
    "calibrated_claim",
    "raised_claim",
    "axis",
    "severity",
    "repair",
    "source",
    "domain",
]


def _row(i: int, **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"p-{i}",
        "question": f"Question {i}?",
        "evidence": f"In a 2020 study of 300 adults, coffee was associated with outcome {i}.",
        "evidence_span": f"coffee was associated with outcome {i}",
        "calibrated_claim": f"Coffee was associated with outcome {i} in one study.",
        "raised_claim": f"Coffee causes outcome {i}.",
        "axis": ["relation", "modality", "scope", "temporal", "numeric"][i % 5],
        "severity": 1 + i % 3,
        "repair": "Say 'associated with'.",
        "source": "hand-made",
        "domain": "medicine",
    }
    row.update(changes)
    return row


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def _csv(path: Path, rows: list[dict[str, Any]], fields: list[str] = FIELDS) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return path


def _error(path: str | Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_pairs(path)
    return info.value


# ---- loading ---------------------------------------------------------------------------


def test_load_jsonl(tmp_path: Path) -> None:
    rows = [_row(i) for i in range(5)]
    path = _jsonl(tmp_path / "pairs.jsonl", rows)
    ds = load_pairs(path)
    assert ds.rows == 5
    assert ds.name == "pairs"
    assert ds.path == str(path)
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [p.id for p in ds.pairs] == [f"p-{i}" for i in range(5)]
    first = ds.pairs[0]
    assert isinstance(first, ForcePair)
    assert first.axis is Axis.RELATION
    assert first.severity == 1
    assert first.claim(Member.CALIBRATED) == rows[0]["calibrated_claim"]
    assert first.claim(Member.RAISED) == rows[0]["raised_claim"]
    assert first.question == "Question 0?"


def test_load_jsonl_minimal_rows_blank_lines_and_int_ids(tmp_path: Path) -> None:
    minimal = {"evidence": "E.", "calibrated_claim": "C.", "raised_claim": "R.", "axis": "scope"}
    path = tmp_path / "min.ndjson"
    path.write_text(
        json.dumps({"id": 1, **minimal})
        + "\n\n   \n"
        + json.dumps({"id": "two", **minimal})
        + "\n",
        encoding="utf-8",
    )
    ds = load_pairs(path, name="custom")
    assert ds.name == "custom"
    assert [p.id for p in ds.pairs] == ["1", "two"]
    assert ds.pairs[0].severity is None and ds.pairs[0].question is None


def test_load_csv(tmp_path: Path) -> None:
    rows = [_row(i) for i in range(5)]
    path = _csv(tmp_path / "pairs.csv", rows)
    ds = load_pairs(path)
    assert ds.rows == 5
    assert ds.name == "pairs"
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    jsonl = load_pairs(_jsonl(tmp_path / "pairs.jsonl", rows))
    assert [p.model_dump() for p in ds.pairs] == [p.model_dump() for p in jsonl.pairs]


def test_csv_empty_cells_become_none_and_bom_is_ignored(tmp_path: Path) -> None:
    path = _csv(tmp_path / "p.csv", [_row(0, question=None, severity=None, repair=None)])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    pair = load_pairs(path).pairs[0]
    assert pair.id == "p-0"
    assert pair.question is None and pair.severity is None and pair.repair is None


def test_relative_path_resolves_against_base(tmp_path: Path) -> None:
    _jsonl(tmp_path / "rel.jsonl", [_row(0)])
    assert load_pairs("rel.jsonl", base=tmp_path).rows == 1
    assert resolve_dataset_path("rel.jsonl", base=tmp_path) == tmp_path / "rel.jsonl"


# ---- errors ----------------------------------------------------------------------------


def _assert_loc(err: DatasetError, path: Path, line: int, field: str | None) -> None:
    text = str(err)
    assert f"{path}:{line}" in text, text
    assert err.file == str(path) and err.line == line
    if field is not None:
        assert field in text, text
        assert err.field == field


def test_invalid_json_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [_row(0), _row(1), '{"id": "p-2", "evidence": '])
    err = _error(path)
    _assert_loc(err, path, 3, None)
    assert "invalid JSON" in str(err)


def test_invalid_json_line_number_counts_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(_row(0)) + "\n\n" + "{oops}\n", encoding="utf-8")
    _assert_loc(_error(path), path, 3, None)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_missing_calibrated_claim(tmp_path: Path, fmt: str) -> None:
    rows = [_row(0), _row(1), _row(2)]
    del rows[1]["calibrated_claim"]
    if fmt == "jsonl":
        path, line = _jsonl(tmp_path / "p.jsonl", rows), 2
    else:
        path, line = _csv(tmp_path / "p.csv", rows), 3  # header is line 1
    _assert_loc(_error(path), path, line, "calibrated_claim")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_bad_axis(tmp_path: Path, fmt: str) -> None:
    rows = [_row(0, axis="certainty")]
    path = _jsonl(tmp_path / "p.jsonl", rows) if fmt == "jsonl" else _csv(tmp_path / "p.csv", rows)
    err = _error(path)
    _assert_loc(err, path, 1 if fmt == "jsonl" else 2, "axis")
    assert "relation" in str(err)  # lists the allowed values


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_severity_out_of_range(tmp_path: Path, fmt: str) -> None:
    rows = [_row(0), _row(1, severity=7)]
    path = _jsonl(tmp_path / "p.jsonl", rows) if fmt == "jsonl" else _csv(tmp_path / "p.csv", rows)
    _assert_loc(_error(path), path, 2 if fmt == "jsonl" else 3, "severity")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_duplicate_id(tmp_path: Path, fmt: str) -> None:
    rows = [_row(0), _row(1), _row(2, id="p-0")]
    path = _jsonl(tmp_path / "p.jsonl", rows) if fmt == "jsonl" else _csv(tmp_path / "p.csv", rows)
    err = _error(path)
    _assert_loc(err, path, 3 if fmt == "jsonl" else 4, "id")
    assert "p-0" in str(err)


@pytest.mark.parametrize("row", ["[1, 2]", '"a string"', "42", "null"])
def test_non_object_row(tmp_path: Path, row: str) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [_row(0), row])
    err = _error(path)
    _assert_loc(err, path, 2, None)
    assert "object" in str(err)


def test_unknown_field_is_rejected(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [_row(0, raised_claimm="typo")])
    _assert_loc(_error(path), path, 1, "raised_claimm")


def test_blank_required_field(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [_row(0, evidence="   ")])
    _assert_loc(_error(path), path, 1, "evidence")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_jsonl(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    err = _error(path)
    assert str(path) in str(err) and "no rows" in str(err)


def test_header_only_csv(tmp_path: Path) -> None:
    path = _csv(tmp_path / "empty.csv", [])
    err = _error(path)
    assert str(path) in str(err) and "no rows" in str(err)


@pytest.mark.parametrize("name", ["pairs.json", "pairs.txt", "pairs"])  # .tsv: tab-separated
def test_unknown_extension(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(_row(0)) + "\n", encoding="utf-8")
    err = _error(path)
    assert str(path) in str(err) and ".jsonl" in str(err)


def test_missing_file(tmp_path: Path) -> None:
    err = _error(tmp_path / "nope.jsonl")
    assert str(tmp_path / "nope.jsonl") in str(err) and "not found" in str(err)


# ---- the built-in demo -----------------------------------------------------------------


def test_builtin_forcebench_demo() -> None:
    ds = load_pairs("builtin:forcebench-demo")
    assert ds.rows >= 50
    counts = Counter(p.axis for p in ds.pairs)
    assert set(counts) == set(Axis)
    assert all(n >= 10 for n in counts.values()), counts
    assert len({p.id for p in ds.pairs}) == ds.rows
    for p in ds.pairs:
        assert p.evidence_span, p.id
        assert p.evidence_span in p.evidence, p.id
        assert p.calibrated_claim != p.raised_claim, p.id
        assert p.severity in (1, 2, 3), p.id
    assert Path(ds.path).name == BUILTIN_DATASETS["forcebench-demo"]


def test_unknown_builtin() -> None:
    err = _error("builtin:forcebench-full")
    assert "forcebench-full" in str(err)
    assert "forcebench-demo" in str(err)  # lists the known ones


# ---- bugs ------------------------------------------------------------------------------


def test_jsonl_string_with_unicode_line_separator(tmp_path: Path) -> None:
    """BUG (assay/datasets/_load.py, `data.decode("utf-8").splitlines()`): str.splitlines
    also splits on U+2028/U+2029/U+0085, which JSON allows raw inside strings (and
    json.dumps(..., ensure_ascii=False) writes raw). A valid one-row JSONL file whose
    evidence contains U+2028 fails with "invalid JSON: Unterminated string"."""
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps(_row(0, evidence="First line.\u2028Second line."), ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    try:
        ds = load_pairs(path)
    except DatasetError as exc:
        pytest.fail(f"valid JSONL rejected: {exc}")
    assert ds.pairs[0].evidence == "First line.\u2028Second line."


def test_csv_line_numbers_with_multiline_fields(tmp_path: Path) -> None:
    """BUG (assay/datasets/_load.py, `lineno = index + 2`): CSV error locations assume one
    physical line per record. With a quoted multi-line evidence cell in row 1 (lines 2-4),
    a bad severity in row 2 (physical line 5) is reported as line 3."""
    rows = [
        _row(0, evidence="Paragraph one.\nParagraph two.\nParagraph three."),
        _row(1, severity=7),
    ]
    path = _csv(tmp_path / "p.csv", rows)
    assert path.read_text(encoding="utf-8").splitlines()[4].startswith("p-1,")
    err = _error(path)
    assert err.field == "severity"
    assert err.line == 5, f"reported {path.name}:{err.line}, the row is on line 5"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_non_utf8_file_is_a_dataset_error(tmp_path: Path, suffix: str) -> None:
    """BUG (assay/datasets/_load.py `load_pairs`): a non-UTF-8 file raises a bare
    UnicodeDecodeError instead of a DatasetError naming the file, so `assay validate`
    and `assay run` print a traceback."""
    path = tmp_path / f"latin1{suffix}"
    if suffix == ".jsonl":
        path.write_bytes(
            (json.dumps(_row(0, evidence="Caf\xe9 study."), ensure_ascii=False) + "\n").encode(
                "latin-1"
            )
        )
    else:
        _csv(path, [_row(0, evidence="Caf\xe9 study.")])
        path.write_bytes(path.read_text(encoding="utf-8").encode("latin-1"))
    try:
        load_pairs(path)
    except DatasetError as exc:
        assert str(path) in str(exc)
    except UnicodeDecodeError as exc:
        pytest.fail(f"non-UTF-8 dataset raised UnicodeDecodeError, not DatasetError: {exc}")
    else:
        pytest.fail("non-UTF-8 dataset loaded without error")
