"""Importers: long-form answers and released per-claim results from public datasets.

`load_answers` reads answers to score (plain JSONL, MedScore input rows, ExpertQA,
WiCE) into `AnswerItem`s. `import_medscore_outputs` turns MedScore's released
`decompositions.jsonl` / `verifications.jsonl` / `output.jsonl` into assay's sentence,
claim and verification records, so scores can be recomputed without calling a model.
`load_wice_reference_verdicts` and `load_expertqa_claims` expose the recorded reference
verdicts and the given claims. Every error names file, line and field, as in `_load`.

Field mappings and assumptions: docs/importers.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.outcomes import Status
from assay.datasets._load import _decode, first_error, resolve_dataset_path
from assay.errors import DatasetError

if TYPE_CHECKING:  # assay.runs imports assay.datasets: import the records lazily at run time
    from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord

ResolvedFormat = Literal["jsonl", "medscore-input", "expertqa", "wice"]
FORMATS = ("auto", "jsonl", "medscore-input", "expertqa", "wice")

ANSWER_KEYS = ("answer", "response", "output")
QUESTION_KEYS = ("question", "prompt", "query")
EVIDENCE_KEYS = ("evidence", "context")

WICE_LABELS = ("not_supported", "partially_supported", "supported")  # ascending strength
EXPERTQA_SUPPORTED = "Complete"  # the ExpertQA authors' rule for "attributable"

MEDSCORE_PARSER_VERSION = "medscore-import/1"
MEDSCORE_DECOMPOSITIONS = "decompositions.jsonl"
MEDSCORE_VERIFICATIONS = "verifications.jsonl"
MEDSCORE_OUTPUTS = ("output.jsonl", "medscore_output.jsonl")


def _int_id_to_str(v: object) -> object:
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


RowId = Annotated[str, BeforeValidator(_int_id_to_str), Field(min_length=1)]


class AnswersDataset(BaseModel):
    """Answers to score plus the identity of the file they came from."""

    name: str
    path: str
    sha256: str
    format: ResolvedFormat
    items: list[AnswerItem]

    @property
    def rows(self) -> int:
        return len(self.items)


# --------------------------------------------------------------------------- reading


@dataclass
class _JsonlFile:
    path: Path
    sha256: str
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _read_jsonl(path: Path, *, allow_empty: bool = False) -> _JsonlFile:
    """Every JSON object with its 1-based line number; blank lines are skipped."""
    if not path.is_file():
        raise DatasetError("file not found", file=path)
    data = path.read_bytes()
    out = _JsonlFile(path=path, sha256=hashlib.sha256(data).hexdigest())
    # split on "\n" only: U+2028 and friends are legal inside JSON strings
    for lineno, text in enumerate(_decode(data, path).split("\n"), start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg}", file=path, line=lineno) from None
        if not isinstance(row, dict):
            raise DatasetError("each row must be a JSON object", file=path, line=lineno)
        out.rows.append((lineno, row))
    if not out.rows and not allow_empty:
        raise DatasetError("dataset has no rows", file=path)
    return out


M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], row: dict[str, Any], path: Path, line: int, *, prefix: str = "") -> M:
    try:
        return model.model_validate(row)
    except ValidationError as exc:
        msg, fld = first_error(exc)
        if prefix:
            fld = f"{prefix}.{fld}" if fld else prefix
        raise DatasetError(msg, file=path, line=line, field=fld) from None


def _first_key(row: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The first of `keys` present with a non-null value."""
    for key in keys:
        if row.get(key) is not None:
            return key
    return None


def _check_unique(key: str, seen: dict[str, int], path: Path, line: int, fld: str) -> None:
    if key in seen:
        raise DatasetError(
            f"duplicate id {key!r} (first on line {seen[key]})", file=path, line=line, field=fld
        )
    seen[key] = line


def _default_name(given: Path) -> str:
    return given.name if given.is_dir() else given.stem


def _member(directory: Path, names: Sequence[str], what: str) -> Path:
    for name in names:
        if (directory / name).is_file():
            return directory / name
    raise DatasetError(f"no {what} file ({' or '.join(names)}) in this folder", file=directory)


# --------------------------------------------------------------------------- load_answers


def load_answers(
    path: str | Path,
    *,
    format: str = "auto",
    name: str | None = None,
    base: Path | None = None,
    evidence_file: str | Path | None = None,
) -> AnswersDataset:
    """Read answers to score from `path` (a file, or a dataset folder).

    Formats: `jsonl` (an `answer`/`response`/`output` per row), `medscore-input`
    (MedScore's input rows; the doctor's answer becomes the provided evidence),
    `expertqa` (answers.jsonl with claims, evidence and expert labels), `wice` (WiCE
    oracle rows.jsonl: one item per claim, its chunks as passages), or `auto` (by the
    folder's files or the first row's fields). Relative paths resolve against `base`.
    `evidence_file` is MedScore's `{"<id>": "<evidence>"}` JSON file (medscore-input only).
    `name` defaults to the folder's name or the file's stem.
    """
    given = resolve_dataset_path(path, base=base)
    if not given.exists():
        raise DatasetError("dataset file not found", file=given)
    if format not in FORMATS:
        raise DatasetError(f"unknown answers format {format!r}; known: {', '.join(FORMATS)}")
    fmt: ResolvedFormat = _detect_format(given) if format == "auto" else _resolved(format)
    if evidence_file is not None and fmt != "medscore-input":
        raise DatasetError(f"evidence_file is only read with format 'medscore-input', not {fmt!r}")
    if fmt == "expertqa":
        src = _read_jsonl(_expertqa_answers_file(given))
        items = _expertqa_items(src)
    elif fmt == "wice":
        src = _read_jsonl(_wice_rows_file(given))
        groups = _wice_groups(src)
        if given.is_dir() and (given / "claims.jsonl").is_file():
            _wice_cross_check(groups, _read_jsonl(given / "claims.jsonl"))
        items = [_wice_item(g) for g in groups]
    else:
        if given.is_dir():
            raise DatasetError(f"format {fmt!r} reads one .jsonl file, not a folder", file=given)
        src = _read_jsonl(given)
        if fmt == "jsonl":
            items = _plain_items(src)
        else:
            provided = None
            if evidence_file is not None:
                provided = _read_evidence_file(resolve_dataset_path(evidence_file, base=base))
            items = _medscore_input_items(src, provided)
    return AnswersDataset(
        name=name or _default_name(given),
        path=str(src.path),
        sha256=src.sha256,
        format=fmt,
        items=items,
    )


def _resolved(fmt: str) -> ResolvedFormat:
    if fmt == "jsonl":
        return "jsonl"
    if fmt == "medscore-input":
        return "medscore-input"
    if fmt == "expertqa":
        return "expertqa"
    return "wice"


def _detect_format(given: Path) -> ResolvedFormat:
    """Pick a format from a folder's files or a file's first row."""
    if given.is_dir():
        if (given / "rows.jsonl").is_file():
            return "wice"
        if (given / "answers.jsonl").is_file():
            return "expertqa"
        if any((given / n).is_file() for n in (MEDSCORE_DECOMPOSITIONS, MEDSCORE_VERIFICATIONS)):
            raise DatasetError(
                "this folder holds MedScore outputs; read them with import_medscore_outputs",
                file=given,
            )
        raise DatasetError(
            "cannot tell the format of this folder (expected rows.jsonl for WiCE or "
            "answers.jsonl for ExpertQA); pass format=... or a file",
            file=given,
        )
    src = _read_jsonl(given)
    line, row = src.rows[0]
    keys = set(row)
    if "reference_judges_max" in keys or ("n_chunks" in keys and "claim_id" in keys):
        raise DatasetError(
            "this is WiCE's claims.jsonl, which has no evidence; pass rows.jsonl or its folder",
            file=given,
            line=line,
        )
    if {"claim_id", "support"} <= keys and not keys & set(ANSWER_KEYS):
        raise DatasetError(
            "this is ExpertQA's claims.jsonl, which has no answer text; pass answers.jsonl "
            "(or use load_expertqa_claims for the claims alone)",
            file=given,
            line=line,
        )
    if {"claim_id", "claim", "evidence", "label"} <= keys or "reference_judges" in keys:
        return "wice"
    if "answer_id" in keys and isinstance(row.get("claims"), list) and "answer" in keys:
        return "expertqa"
    if {"sentence_id", "claim"} <= keys:
        raise DatasetError(
            "this looks like a MedScore output file; read it with import_medscore_outputs",
            file=given,
            line=line,
        )
    if "doctor_response" in keys and "response" in keys:
        return "medscore-input"
    return "jsonl"


# ---- jsonl


def _evidence_passages(value: object, item_id: str) -> list[object] | None:
    """A string is one passage `<id>:ctx`; a list holds strings or passage objects."""
    if isinstance(value, str):
        return [{"id": f"{item_id}:ctx", "text": value}]
    if not isinstance(value, list):
        return None
    out: list[object] = []
    for k, entry in enumerate(value):
        if isinstance(entry, str):
            out.append({"id": f"{item_id}:ctx{k}", "text": entry})
        elif isinstance(entry, dict) and entry.get("id") is None:
            out.append({**entry, "id": f"{item_id}:ctx{k}"})
        else:
            out.append(entry)  # pydantic names the bad entry: `<key>.<k>`
    return out


def _plain_items(src: _JsonlFile) -> list[AnswerItem]:
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, row in src.rows:
        answer_key = _first_key(row, ANSWER_KEYS)
        if answer_key is None:
            raise DatasetError(
                f"missing; each row needs one of {', '.join(repr(k) for k in ANSWER_KEYS)}",
                file=src.path,
                line=line,
                field="answer",
            )
        item_id = _int_id_to_str(line if row.get("id") is None else row["id"])
        fields: dict[str, str] = {"answer": answer_key}  # AnswerItem field -> the row's key
        data: dict[str, Any] = {"id": item_id, "answer": row[answer_key]}
        question_key = _first_key(row, QUESTION_KEYS)
        if question_key is not None:
            fields["question"] = question_key
            data["question"] = row[question_key]
        evidence_key = _first_key(row, EVIDENCE_KEYS)
        if evidence_key is not None:
            fields["evidence"] = evidence_key
            passages = _evidence_passages(row[evidence_key], str(item_id))
            if passages is None:
                raise DatasetError(
                    "must be a string, or a list of strings or {id, text} objects",
                    file=src.path,
                    line=line,
                    field=evidence_key,
                )
            data["evidence"] = passages
        for key in ("gold_factuality", "gold_claims", "source"):
            if key in row:
                data[key] = row[key]
        item = _answer_item(data, fields, src.path, line)
        _check_unique(item.id, seen, src.path, line, "id")
        items.append(item)
    return items


def _answer_item(data: dict[str, Any], fields: dict[str, str], path: Path, line: int) -> AnswerItem:
    try:
        item = AnswerItem.model_validate(data)
    except ValidationError as exc:
        msg, fld = first_error(exc)
        if fld is not None:
            head, _, rest = fld.partition(".")
            fld = fields.get(head, head) + (f".{rest}" if rest else "")
        raise DatasetError(msg, file=path, line=line, field=fld) from None
    if not item.answer.strip():
        raise DatasetError("answer is empty", file=path, line=line, field=fields["answer"])
    return item


# ---- medscore-input


def _read_evidence_file(path: Path) -> dict[str, str]:
    """MedScore's `provided_evidence_path`: one JSON object, id -> evidence text."""
    if not path.is_file():
        raise DatasetError("evidence file not found", file=path)
    try:
        data = json.loads(_decode(path.read_bytes(), path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise DatasetError('expected one JSON object {"<id>": "<evidence>"}', file=path)
    for key, value in data.items():
        if not isinstance(value, str):
            raise DatasetError("evidence must be a string", file=path, field=str(key))
    return {str(k): v for k, v in data.items()}


class _MedScoreInputRow(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: RowId
    response: str
    question: str | None = None
    evidence: str | None = None
    doctor_response: str | None = None


def _medscore_input_items(src: _JsonlFile, provided: dict[str, str] | None) -> list[AnswerItem]:
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, row in src.rows:
        parsed = _validate(_MedScoreInputRow, row, src.path, line)
        evidence_key = "evidence" if parsed.evidence is not None else "doctor_response"
        text = parsed.evidence if parsed.evidence is not None else parsed.doctor_response
        if text is None and provided is not None:
            text, evidence_key = provided.get(parsed.id), "evidence_file"
        evidence = (
            []
            if text is None
            else [{"id": f"{parsed.id}:ctx", "text": text, "source": evidence_key}]
        )
        data = {
            "id": parsed.id,
            "question": parsed.question,
            "answer": parsed.response,
            "evidence": evidence,
        }
        item = _answer_item(data, {"answer": "response"}, src.path, line)
        _check_unique(item.id, seen, src.path, line, "id")
        items.append(item)
    return items


# ---- expertqa


class _ExpertQAEvidence(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ref: str
    passage: str


class _ExpertQAClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim_id: RowId
    claim: str
    claim_clean: str | None = None
    evidence: list[_ExpertQAEvidence]
    support: str


class _ExpertQAAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answer_id: RowId
    question: str | None = None
    system: str | None = None
    answer: str
    claims: list[_ExpertQAClaim]
    gold_factuality: float | None = Field(default=None, ge=0.0, le=1.0)


class _ExpertQAClaimRow(_ExpertQAClaim):
    answer_id: RowId


_REF = re.compile(r"^\s*\[(\d+)\]\s*(.*)$", re.DOTALL)


def _expertqa_answers_file(given: Path) -> Path:
    if given.is_dir():
        return _member(given, ["answers.jsonl"], "ExpertQA answers")
    return given


def _expertqa_label(support: str) -> str:
    return "supported" if support == EXPERTQA_SUPPORTED else "unsupported"


def _expertqa_passages(answer: _ExpertQAAnswer) -> dict[tuple[str, str], Passage]:
    """One passage per distinct (ref, passage), id `<answer_id>:ref<n>` from `[n] url`."""
    out: dict[tuple[str, str], Passage] = {}
    used: set[str] = set()
    for claim in answer.claims:
        for ev in claim.evidence:
            key = (ev.ref, ev.passage)
            if key in out:
                continue
            match = _REF.match(ev.ref)
            pid = f"{answer.answer_id}:ref{match.group(1)}" if match else ""
            if not match or pid in used:
                pid = f"{answer.answer_id}:e{len(out)}"
            used.add(pid)
            source = (match.group(2).strip() if match else ev.ref.strip()) or None
            out[key] = Passage(id=pid, text=ev.passage, source=source)
    return out


def _expertqa_items(src: _JsonlFile) -> list[AnswerItem]:
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, row in src.rows:
        answer = _validate(_ExpertQAAnswer, row, src.path, line)
        _check_unique(answer.answer_id, seen, src.path, line, "answer_id")
        passages = _expertqa_passages(answer)
        gold = [
            GoldClaim(
                id=c.claim_id,
                text=c.claim_clean if c.claim_clean is not None else c.claim,
                label=_expertqa_label(c.support),
                evidence=[passages[(e.ref, e.passage)] for e in c.evidence],
            )
            for c in answer.claims
        ]
        data = {
            "id": answer.answer_id,
            "question": answer.question,
            "answer": answer.answer,
            "evidence": list(passages.values()),
            "gold_claims": gold,
            "gold_factuality": answer.gold_factuality,
            "source": f"expertqa:{answer.system}" if answer.system else "expertqa",
        }
        items.append(_answer_item(data, {"id": "answer_id"}, src.path, line))
    return items


def load_expertqa_claims(path: str | Path, *, dataset: str | None = None) -> list[ClaimRecord]:
    """ExpertQA's given claims as claim records with `gold_label`, for verify-only runs.

    `path` is the folder, `answers.jsonl` or `claims.jsonl`. `claim` is `claim_clean`
    (citation markers removed); `sentence_id` is the claim's position in its answer
    (ExpertQA claims are sentence-level); `span` is set when the answer text is known.
    Evidence for each claim: `load_answers(path).items[i].gold_claims`.
    """
    given = Path(path).expanduser()
    file = _expertqa_answers_file(given)
    src = _read_jsonl(file)
    name = dataset or _default_name(given)
    records: list[ClaimRecord] = []
    seen: dict[str, int] = {}
    if "claims" in src.rows[0][1]:  # answers.jsonl
        answers: dict[str, int] = {}
        for line, row in src.rows:
            answer = _validate(_ExpertQAAnswer, row, src.path, line)
            _check_unique(answer.answer_id, answers, src.path, line, "answer_id")
            cursor = 0
            for k, c in enumerate(answer.claims):
                _check_unique(c.claim_id, seen, src.path, line, f"claims.{k}.claim_id")
                start = answer.answer.find(c.claim, cursor)
                span = (start, start + len(c.claim)) if start >= 0 else None
                cursor = start + len(c.claim) if start >= 0 else cursor
                records.append(_expertqa_claim_record(name, answer.answer_id, k, c, span))
    else:  # claims.jsonl: one claim per row, grouped by answer_id in file order
        position: dict[str, int] = {}
        for line, row in src.rows:
            c = _validate(_ExpertQAClaimRow, row, src.path, line)
            _check_unique(c.claim_id, seen, src.path, line, "claim_id")
            k = position.get(c.answer_id, 0)
            position[c.answer_id] = k + 1
            records.append(_expertqa_claim_record(name, c.answer_id, k, c, None))
    return records


def _expertqa_claim_record(
    dataset: str, answer_id: str, k: int, c: _ExpertQAClaim, span: tuple[int, int] | None
) -> ClaimRecord:
    from assay.core.records import ClaimRecord

    return ClaimRecord(
        dataset=dataset,
        answer_id=answer_id,
        sentence_id=k,
        claim_id=c.claim_id,
        claim=c.claim_clean if c.claim_clean is not None else c.claim,
        span=span,
        decomposer_id="gold:expertqa",
        gold_label=_expertqa_label(c.support),
    )


# ---- wice


class _WiceRow(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: RowId | None = None
    claim_id: RowId
    claim: str
    evidence: str
    label: Literal["supported", "partially_supported", "not_supported"]
    claim_title: str | None = None
    reference_judges: dict[str, Any] = Field(default_factory=dict)


class _WiceClaimRow(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim_id: RowId
    claim: str
    label: Literal["supported", "partially_supported", "not_supported"]
    n_chunks: int | None = None
    reference_judges_max: dict[str, Any] = Field(default_factory=dict)


@dataclass
class _WiceGroup:
    first: _WiceRow
    line: int
    chunks: list[tuple[int, _WiceRow]]


def _wice_rows_file(given: Path) -> Path:
    if given.is_dir():
        return _member(given, ["rows.jsonl"], "WiCE rows")
    return given


def _wice_groups(src: _JsonlFile) -> list[_WiceGroup]:
    """Rows grouped by claim in order of first appearance; chunks must agree on claim."""
    groups: dict[str, _WiceGroup] = {}
    seen: dict[str, int] = {}
    for line, row in src.rows:
        r = _validate(_WiceRow, row, src.path, line)
        group = groups.get(r.claim_id)
        if group is None:
            groups[r.claim_id] = _WiceGroup(first=r, line=line, chunks=[(line, r)])
        else:
            for fld in ("claim", "label"):
                if getattr(r, fld) != getattr(group.first, fld):
                    raise DatasetError(
                        f"differs from the same claim's row on line {group.line}",
                        file=src.path,
                        line=line,
                        field=fld,
                    )
            group.chunks.append((line, r))
        pid = _wice_passage_id(r, len(groups[r.claim_id].chunks) - 1)
        _check_unique(pid, seen, src.path, line, "id")
    return list(groups.values())


def _wice_passage_id(r: _WiceRow, k: int) -> str:
    return r.id if r.id is not None else f"{r.claim_id}-chunk{k}"


def _wice_item(group: _WiceGroup) -> AnswerItem:
    r = group.first
    passages = [
        Passage(id=_wice_passage_id(c, k), text=c.evidence) for k, (_, c) in enumerate(group.chunks)
    ]
    return AnswerItem(
        id=r.claim_id,
        answer=r.claim,
        evidence=passages,
        gold_claims=[GoldClaim(id=r.claim_id, text=r.claim, label=r.label, evidence=passages)],
        source=r.claim_title,
    )


def _wice_claim_rows(src: _JsonlFile) -> dict[str, tuple[int, _WiceClaimRow]]:
    out: dict[str, tuple[int, _WiceClaimRow]] = {}
    seen: dict[str, int] = {}
    for line, row in src.rows:
        c = _validate(_WiceClaimRow, row, src.path, line)
        _check_unique(c.claim_id, seen, src.path, line, "claim_id")
        out[c.claim_id] = (line, c)
    return out


def _wice_cross_check(groups: list[_WiceGroup], claims_src: _JsonlFile) -> None:
    claims = _wice_claim_rows(claims_src)
    for g in groups:
        if g.first.claim_id not in claims:
            continue
        line, c = claims[g.first.claim_id]
        if c.label != g.first.label:
            raise DatasetError(
                f"label {c.label!r} differs from rows.jsonl ({g.first.label!r})",
                file=claims_src.path,
                line=line,
                field="label",
            )
        if c.n_chunks is not None and c.n_chunks != len(g.chunks):
            raise DatasetError(
                f"n_chunks is {c.n_chunks} but rows.jsonl has {len(g.chunks)} chunks",
                file=claims_src.path,
                line=line,
                field="n_chunks",
            )


def _wice_rank(value: object) -> int | None:
    return WICE_LABELS.index(value) if isinstance(value, str) and value in WICE_LABELS else None


def load_wice_reference_verdicts(
    path: str | Path, *, dataset: str | None = None
) -> list[VerificationRecord]:
    """The WiCE paper's recorded judge verdicts, one record per claim and judge.

    `verifier_id` (and `model`) is the judge's name (`gpt-4-0613`, ...). The claim-level
    verdict is the strongest over the claim's chunks (supported > partially_supported >
    not_supported, as the WiCE authors recommend); `label` is `supported` only for
    `supported`, else `unsupported`; the 3-way answer and per-chunk answers are kept in
    `parsed`. A verdict missing or outside the three labels is `parse_error` (unless
    another chunk already says `supported`). `path`: the folder, rows.jsonl, or
    claims.jsonl (claim-level verdicts only). With the folder, the claim-level verdicts
    recorded in claims.jsonl must equal the ones computed from rows.jsonl.
    """
    given = Path(path).expanduser()
    name = dataset or _default_name(given)
    if given.is_dir():
        rows_src = _read_jsonl(_wice_rows_file(given))
        records = _wice_verdicts_from_rows(name, _wice_groups(rows_src))
        claims_file = given / "claims.jsonl"
        if claims_file.is_file():
            _wice_check_recorded_max(records, _read_jsonl(claims_file))
        return records
    src = _read_jsonl(given)
    if "reference_judges_max" in src.rows[0][1]:
        return _wice_verdicts_from_claims(name, src)
    return _wice_verdicts_from_rows(name, _wice_groups(src))


def _wice_verdict(
    dataset: str,
    claim_id: str,
    claim: str,
    gold: str,
    judge: str,
    chunks: list[tuple[str | None, object]],
) -> VerificationRecord:
    """Max over chunks; a chunk without a usable verdict makes it unknowable unless supported."""
    from assay.core.records import VerificationRecord

    ranks = [_wice_rank(v) for _, v in chunks]
    known = [r for r in ranks if r is not None]
    best = max(known) if known else None
    bad = [v for v, r in zip((v for _, v in chunks), ranks, strict=True) if r is None]
    per_chunk = {pid: v for pid, v in chunks if pid is not None}
    parsed: dict[str, Any] = {"answer": None, "chunks": per_chunk, "aggregation": "max"}
    common = {
        "dataset": dataset,
        "answer_id": claim_id,
        "claim_id": claim_id,
        "claim": claim,
        "verifier_id": judge,
        "model": judge,
        "gold_label": gold,
        "evidence": [{"passage_id": pid, "label": v} for pid, v in chunks if pid is not None],
    }
    top = len(WICE_LABELS) - 1
    if best is None or (bad and best != top):
        return VerificationRecord(
            **common,
            status=Status.PARSE_ERROR,
            parsed=parsed,
            error=f"no usable verdict for {len(bad)} of {len(chunks)} chunk(s): {bad[0]!r}",
        )
    answer = WICE_LABELS[best]
    parsed["answer"] = answer
    supported = answer == "supported"
    return VerificationRecord(
        **common,
        status=Status.OK,
        label="supported" if supported else "unsupported",
        score=1.0 if supported else 0.0,
        parsed=parsed,
    )


def _wice_verdicts_from_rows(dataset: str, groups: list[_WiceGroup]) -> list[VerificationRecord]:
    records: list[VerificationRecord] = []
    for g in groups:
        judges: list[str] = []
        for _, c in g.chunks:
            judges.extend(j for j in c.reference_judges if j not in judges)
        for judge in judges:
            chunks: list[tuple[str | None, object]] = [
                (_wice_passage_id(c, k), c.reference_judges.get(judge))
                for k, (_, c) in enumerate(g.chunks)
            ]
            records.append(
                _wice_verdict(
                    dataset, g.first.claim_id, g.first.claim, g.first.label, judge, chunks
                )
            )
    return records


def _wice_verdicts_from_claims(dataset: str, src: _JsonlFile) -> list[VerificationRecord]:
    records: list[VerificationRecord] = []
    for _, c in _wice_claim_rows(src).values():
        for judge, value in c.reference_judges_max.items():
            records.append(
                _wice_verdict(dataset, c.claim_id, c.claim, c.label, judge, [(None, value)])
            )
    return records


def _wice_check_recorded_max(records: list[VerificationRecord], claims_src: _JsonlFile) -> None:
    claims = _wice_claim_rows(claims_src)
    for rec in records:
        if rec.claim_id not in claims:
            continue
        line, c = claims[rec.claim_id]
        recorded = c.reference_judges_max.get(rec.verifier_id)
        computed = rec.parsed.get("answer") if rec.parsed else None
        if recorded is not None and computed is not None and recorded != computed:
            raise DatasetError(
                f"{recorded!r} differs from the maximum over rows.jsonl's chunks ({computed!r})",
                file=claims_src.path,
                line=line,
                field=f"reference_judges_max.{rec.verifier_id}",
            )


# --------------------------------------------------------------------------- MedScore outputs


class _MedScoreDecomposition(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: RowId
    sentence_id: int
    sentence: str | None = None
    claim: str | None = None
    claim_id: int | None = None


class _MedScoreVerification(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: RowId
    sentence_id: int
    sentence: str | None = None
    claim: str
    claim_id: int
    evidence: None | str | list[dict[str, Any]] = None


class _MedScoreOutputClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim: str
    sentence: str | None = None
    evidence: None | str | list[dict[str, Any]] = None


class _MedScoreOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: RowId
    score: float | None = None
    claims: list[_MedScoreOutputClaim] = Field(default_factory=list)


@dataclass
class _MedScoreFiles:
    decompositions: Path | None = None
    verifications: Path | None = None
    output: Path | None = None


def _medscore_files(directory_or_files: str | Path | Sequence[str | Path]) -> _MedScoreFiles:
    found = _MedScoreFiles()
    if isinstance(directory_or_files, str | Path):
        given = Path(directory_or_files).expanduser()
        if given.is_dir():
            for attr, names in (
                ("decompositions", [MEDSCORE_DECOMPOSITIONS]),
                ("verifications", [MEDSCORE_VERIFICATIONS]),
                ("output", list(MEDSCORE_OUTPUTS)),
            ):
                for n in names:
                    if (given / n).is_file():
                        setattr(found, attr, given / n)
                        break
            if found == _MedScoreFiles():
                raise DatasetError(
                    "no MedScore output files (decompositions.jsonl, verifications.jsonl, "
                    "output.jsonl or medscore_output.jsonl) in this folder",
                    file=given,
                )
            return found
        paths = [given]
    else:
        paths = [Path(p).expanduser() for p in directory_or_files]
    for p in paths:
        attr = _medscore_kind(p)
        if getattr(found, attr) is not None:
            raise DatasetError(f"two MedScore {attr} files given", file=p)
        setattr(found, attr, p)
    if found == _MedScoreFiles():
        raise DatasetError("no MedScore output files given")
    return found


def _medscore_kind(p: Path) -> str:
    name = p.name.lower()
    kind = None
    if name.endswith(MEDSCORE_DECOMPOSITIONS):
        kind = "decompositions"
    elif name.endswith(MEDSCORE_VERIFICATIONS):
        kind = "verifications"
    elif name.endswith("output.jsonl"):
        kind = "output"
    if kind is not None and not p.exists():
        raise DatasetError("not found; pass MedScore's output folder or one of its files", file=p)
    if kind is None and not p.exists() and not p.suffix:
        raise DatasetError("folder not found; pass MedScore's output folder", file=p)
    if kind is None:
        raise DatasetError(
            "unrecognised MedScore file name; expected *decompositions.jsonl, "
            "*verifications.jsonl or *output.jsonl",
            file=p,
        )
    return kind


def read_true_false(raw: str) -> tuple[bool | None, str]:
    """Strict reading of a True/False verifier output: (verdict, rule) or (None, why).

    The same rules as assay's own strict verifier parser (`parse_true_false`): anything
    unreadable (empty output, prose, both answers on the final line) is never coerced.
    """
    from assay.core.verification import VerdictLabel
    from assay.parsing._verification import parse_true_false

    parsed = parse_true_false(raw)
    if parsed.label is None:
        return None, parsed.error or parsed.status.value
    rule = str((parsed.parsed or {}).get("rule", ""))
    return parsed.label is VerdictLabel.SUPPORTED, rule


def _medscore_score(row: dict[str, Any]) -> tuple[bool | None, str | None]:
    """MedScore's own per-claim score as a verdict, or why it is not one."""
    if "score" not in row or row["score"] is None:
        return None, "MedScore row has no score"
    value = row["score"]
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int | float) and not math.isnan(value) and value in (0, 1):
        return value == 1, None
    return None, f"MedScore score {value!r} is not 0 or 1"


def _medscore_evidence(value: object, answer_id: str) -> list[dict[str, Any]]:
    if value is None:  # internal-knowledge verification
        return []
    if isinstance(value, str):  # provided evidence: the same passage id as medscore-input
        return [{"passage_id": f"{answer_id}:ctx", "text": value}]
    out: list[dict[str, Any]] = []
    if isinstance(value, list):  # MedRAG: retrieved {id, title, text, score}
        for k, entry in enumerate(value):
            if isinstance(entry, dict):
                pid = entry.get("id")
                out.append({**entry, "passage_id": str(pid) if pid is not None else f"r{k}"})
    return out


def _medscore_verdict(
    row: dict[str, Any],
    *,
    dataset: str,
    answer_id: str,
    claim_id: str,
    sentence_id: int | None,
    claim: str,
    evidence: object,
    verifier_id: str,
    model: str | None,
) -> VerificationRecord:
    """Status from the raw text (strictly read); MedScore's score is kept in `parsed`.

    - `raw` present: it decides. Empty or unreadable -> parse_error, whatever MedScore's
      score says (MedScore scores an empty output as 1.0). A readable `raw` with no
      usable MedScore score -> parse_error too (the row is incomplete).
    - `raw` absent or null: MedScore's score (0/1) decides; none -> parse_error.
    """
    from assay.core.records import VerificationRecord

    raw = row.get("raw")
    medscore_verdict, score_problem = _medscore_score(row)
    parsed: dict[str, Any] = {"medscore_score": row.get("score"), "score_present": "score" in row}
    verdict: bool | None
    problem: str | None
    if raw is not None and not isinstance(raw, str):
        verdict, problem = None, f"raw is {type(raw).__name__}, not text"
    elif raw is not None:
        verdict, rule = read_true_false(raw)
        problem = None if verdict is not None else rule
        if verdict is not None:
            parsed["rule"] = rule
            problem = score_problem
            if medscore_verdict is not None:
                parsed["agrees_with_medscore"] = verdict == medscore_verdict
    else:
        verdict, problem = medscore_verdict, score_problem
        parsed["rule"] = "medscore-score"
    common: dict[str, Any] = {
        "dataset": dataset,
        "answer_id": answer_id,
        "claim_id": claim_id,
        "sentence_id": sentence_id,
        "claim": claim,
        "verifier_id": verifier_id,
        "model": model,
        "parser_version": MEDSCORE_PARSER_VERSION,
        "evidence": _medscore_evidence(evidence, answer_id),
        "raw_output": raw if isinstance(raw, str) else None,
        "parsed": parsed,
    }
    if verdict is None or problem is not None:
        return VerificationRecord(**common, status=Status.PARSE_ERROR, error=problem)
    return VerificationRecord(
        **common,
        status=Status.OK,
        label="supported" if verdict else "unsupported",
        score=1.0 if verdict else 0.0,
    )


def _assay_claim_id(answer_id: str, sentence_id: int, claim_id: int) -> str:
    return f"{answer_id}:s{sentence_id}:c{claim_id}"


def import_medscore_outputs(
    directory_or_files: str | Path | Sequence[str | Path],
    *,
    dataset: str = "medscore",
    decomposer_id: str = "medscore",
    verifier_id: str = "medscore",
    decomposer_model: str | None = None,
    verifier_model: str | None = None,
) -> tuple[list[SentenceRecord], list[ClaimRecord], list[VerificationRecord]]:
    """MedScore's released per-claim files as assay sentence, claim and verification records.

    `directory_or_files`: MedScore's `output_dir`, or any of its files
    (`decompositions.jsonl`, `verifications.jsonl`, `output.jsonl` /
    `medscore_output.jsonl`). Claim ids become `<id>:s<sentence_id>:c<claim_id>`.
    Verdicts are read strictly from MedScore's `raw` text (see `_medscore_verdict`).

    Cross-checks, each a DatasetError naming file:line and field: every verification
    matches a decomposed claim (same text); each output.jsonl row lists the same claims as
    verifications.jsonl and its `score` is the mean of their MedScore scores. Without
    decompositions.jsonl, sentences and claims are rebuilt from the verifications (sentences
    with no claims are then unknown); with output.jsonl alone, verifications come from its
    `claims` (ids `<id>:c<k>`, no sentence id) and no sentence or claim records are made.
    """
    from assay.core.records import ClaimRecord, SentenceRecord

    files = _medscore_files(directory_or_files)
    sentences: list[SentenceRecord] = []
    claims: list[ClaimRecord] = []
    verifications: list[VerificationRecord] = []
    decomposed: dict[tuple[str, int, int], tuple[int, str]] = {}

    if files.decompositions is not None:
        src = _read_jsonl(files.decompositions, allow_empty=True)
        sent_index: dict[tuple[str, int], tuple[int, SentenceRecord]] = {}
        for line, row in src.rows:
            d = _validate(_MedScoreDecomposition, row, src.path, line)
            key = (d.id, d.sentence_id)
            text = d.sentence or ""
            if key not in sent_index:
                rec = SentenceRecord(
                    dataset=dataset,
                    answer_id=d.id,
                    sentence_id=d.sentence_id,
                    sentence=text,
                    decomposer_id=decomposer_id,
                    model=decomposer_model,
                    status=Status.OK,
                )
                sent_index[key] = (line, rec)
                sentences.append(rec)
            first_line, rec = sent_index[key]
            if rec.sentence != text:
                raise DatasetError(
                    f"differs from the same sentence's row on line {first_line}",
                    file=src.path,
                    line=line,
                    field="sentence",
                )
            if d.claim is None:
                continue
            if d.claim_id is None:
                raise DatasetError(
                    "missing for a non-null claim", file=src.path, line=line, field="claim_id"
                )
            ckey = (d.id, d.sentence_id, d.claim_id)
            if ckey in decomposed:
                raise DatasetError(
                    f"duplicate claim (id, sentence_id, claim_id) {ckey} "
                    f"(first on line {decomposed[ckey][0]})",
                    file=src.path,
                    line=line,
                    field="claim_id",
                )
            decomposed[ckey] = (line, d.claim)
            rec.n_claims += 1
            claims.append(
                ClaimRecord(
                    dataset=dataset,
                    answer_id=d.id,
                    sentence_id=d.sentence_id,
                    claim_id=_assay_claim_id(d.id, d.sentence_id, d.claim_id),
                    claim=d.claim,
                    decomposer_id=decomposer_id,
                    model=decomposer_model,
                )
            )

    verified_by_answer: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    if files.verifications is not None:
        src = _read_jsonl(files.verifications, allow_empty=True)
        seen: dict[tuple[str, int, int], int] = {}
        rebuilt: dict[tuple[str, int], SentenceRecord] = {}
        for line, row in src.rows:
            v = _validate(_MedScoreVerification, row, src.path, line)
            ckey = (v.id, v.sentence_id, v.claim_id)
            if ckey in seen:
                raise DatasetError(
                    f"duplicate claim (id, sentence_id, claim_id) {ckey} "
                    f"(first on line {seen[ckey]})",
                    file=src.path,
                    line=line,
                    field="claim_id",
                )
            seen[ckey] = line
            assay_id = _assay_claim_id(v.id, v.sentence_id, v.claim_id)
            if files.decompositions is not None:
                if ckey not in decomposed:
                    raise DatasetError(
                        f"claim {ckey} is not in {files.decompositions.name}",
                        file=src.path,
                        line=line,
                        field="claim_id",
                    )
                d_line, d_claim = decomposed[ckey]
                if d_claim != v.claim:
                    raise DatasetError(
                        f"differs from {files.decompositions.name} line {d_line}",
                        file=src.path,
                        line=line,
                        field="claim",
                    )
            else:
                skey = (v.id, v.sentence_id)
                if skey not in rebuilt:
                    rebuilt[skey] = SentenceRecord(
                        dataset=dataset,
                        answer_id=v.id,
                        sentence_id=v.sentence_id,
                        sentence=v.sentence or "",
                        decomposer_id=decomposer_id,
                        model=decomposer_model,
                        status=Status.OK,
                    )
                    sentences.append(rebuilt[skey])
                rebuilt[skey].n_claims += 1
                claims.append(
                    ClaimRecord(
                        dataset=dataset,
                        answer_id=v.id,
                        sentence_id=v.sentence_id,
                        claim_id=assay_id,
                        claim=v.claim,
                        decomposer_id=decomposer_id,
                        model=decomposer_model,
                    )
                )
            verifications.append(
                _medscore_verdict(
                    row,
                    dataset=dataset,
                    answer_id=v.id,
                    claim_id=assay_id,
                    sentence_id=v.sentence_id,
                    claim=v.claim,
                    evidence=v.evidence,
                    verifier_id=verifier_id,
                    model=verifier_model,
                )
            )
            verified_by_answer.setdefault(v.id, []).append((v.claim, row))

    if files.output is not None:
        src = _read_jsonl(files.output, allow_empty=True)
        seen_ids: dict[str, int] = {}
        for line, row in src.rows:
            out = _validate(_MedScoreOutput, row, src.path, line)
            _check_unique(out.id, seen_ids, src.path, line, "id")
            if files.verifications is None:
                for k, (c, c_row) in enumerate(zip(out.claims, row["claims"], strict=True)):
                    verifications.append(
                        _medscore_verdict(
                            c_row,
                            dataset=dataset,
                            answer_id=out.id,
                            claim_id=f"{out.id}:c{k}",
                            sentence_id=None,
                            claim=c.claim,
                            evidence=c.evidence,
                            verifier_id=verifier_id,
                            model=verifier_model,
                        )
                    )
            else:
                _medscore_check_output(out, verified_by_answer.get(out.id, []), src.path, line)
        if files.verifications is not None:
            missing = [a for a in verified_by_answer if a not in seen_ids]
            if missing:
                raise DatasetError(
                    f"has no row for id {missing[0]!r}, which {files.verifications.name} "
                    f"verified ({len(missing)} such id(s)): the files come from different runs",
                    file=src.path,
                    field="id",
                )
    return sentences, claims, verifications


def _medscore_check_output(
    out: _MedScoreOutput, verified: list[tuple[str, dict[str, Any]]], path: Path, line: int
) -> None:
    """output.jsonl must list the verified claims, and report their mean MedScore score."""
    texts = [c.claim for c in out.claims]
    if texts != [t for t, _ in verified]:
        raise DatasetError(
            f"lists {len(texts)} claim(s) but verifications.jsonl has {len(verified)} for this "
            "id (or other texts): the files come from different runs",
            file=path,
            line=line,
            field="claims",
        )
    scores = [r.get("score") for _, r in verified]
    if not all(isinstance(s, int | float) for s in scores):
        return  # MedScore could not have averaged these; nothing to compare
    numbers = [float(s) for s in scores if isinstance(s, int | float)]
    expected = sum(numbers) / len(numbers) if numbers else None
    if (expected is None) != (out.score is None) or (
        expected is not None and out.score is not None and abs(expected - out.score) > 1e-9
    ):
        raise DatasetError(
            f"{out.score!r} is not the mean of the claims' MedScore scores ({expected!r})",
            file=path,
            line=line,
            field="score",
        )


def medscore_response_ids(directory_or_files: str | Path | Sequence[str | Path]) -> list[str]:
    """Every response id the MedScore files name, in first-seen order.

    output.jsonl lists responses whose `claims` is empty; the per-claim records cannot
    show them, yet they are 0-claim responses and must count in the 0-claim rate.
    """
    files = _medscore_files(directory_or_files)
    ids: dict[str, None] = {}
    for path in (files.output, files.decompositions, files.verifications):
        if path is None:
            continue
        for _, row in _read_jsonl(path, allow_empty=True).rows:
            if row.get("id") is not None:
                ids[str(row["id"])] = None
    return list(ids)


def medscore_reported_scores(output_path: str | Path) -> dict[str, float | None]:
    """MedScore's per-response score from output.jsonl (None when it verified no claim).

    `output_path`: the file or MedScore's output folder. Compare with assay's
    recomputation from `import_medscore_outputs` records.
    """
    given = Path(output_path).expanduser()
    file = _member(given, MEDSCORE_OUTPUTS, "MedScore output") if given.is_dir() else given
    src = _read_jsonl(file, allow_empty=True)
    scores: dict[str, float | None] = {}
    seen: dict[str, int] = {}
    for line, row in src.rows:
        out = _validate(_MedScoreOutput, row, src.path, line)
        _check_unique(out.id, seen, src.path, line, "id")
        scores[out.id] = out.score
    return scores
