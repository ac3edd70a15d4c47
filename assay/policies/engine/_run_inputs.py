"""What a policy reads from a run directory: answers, claims and verification records through
`assay.core.rundir` (last line wins, torn last line skipped), plus the rows of the answers dataset
the manifest names (question, evidence passages, the optional dataset fields of
docs/reference/policies/integration.md#dataset-fields). The run directory is never modified.

Every record set is put in key order before use, so the order of distinct input lines
never changes an output; `input_sha256` hashes the canonical records consumed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core.answer_fields import RESPONSE_FIELDS, ResponseFields
from assay.core.answers import Passage
from assay.core.records import AnswerRecord, ClaimRecord, GateRecord, VerificationRecord
from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    GATES_FILE,
    VERIFICATIONS_FILE,
    latest,
    read_manifest,
)
from assay.datasets._rows import validate_row
from assay.errors import DatasetError, SpecError, first_problem
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._provenance import (
    GateProvenance,
    VerifierInfo,
    VerifierProvenance,
    gate_provenance,
    verifier_provenance,
)

_DIGITS = re.compile(r"(\d+)")
SPLITS = ("train", "dev", "test")


def claim_order(claim: ClaimRecord) -> tuple[int, list[tuple[int, str]]]:
    """Sentence id, then the claim's position: digits in its id compare as numbers."""
    parts = _DIGITS.split(claim.claim_id)
    return (claim.sentence_id, [(int(p), "") if p.isdigit() else (-1, p) for p in parts])


class DatasetRow(BaseModel):
    """One answers-dataset row: its fields as given, the file and line (for errors)."""

    model_config = ConfigDict(frozen=True)

    fields: dict[str, Any]
    file: str
    line: int

    def passages(self) -> list[Passage]:
        """The row's evidence passages (none when absent or not a list; an item that is
        not an object with a text is skipped; a bad known field or an id given twice, which
        would make a scored pair ambiguous, is a `DatasetError`)."""
        found = self.fields.get("evidence")
        if not isinstance(found, list):
            return []
        out: list[Passage] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(found):
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                passage = self._passage(i, {"id": item.get("id", f"p{i}"), **item})
                if passage.id in seen:
                    message = f"passage id {passage.id!r} is also evidence.{seen[passage.id]}"
                    field = f"evidence.{i}.id"
                    raise DatasetError(message, file=self.file, line=self.line, field=field)
                seen[passage.id] = i
                out.append(passage)
        return out

    def _passage(self, index: int, item: dict[str, Any]) -> Passage:
        try:
            return Passage.model_validate(item)
        except ValidationError as exc:
            problem = first_problem(exc, typo_first=False)  # flat fields: loc[0] names one
            where = ".".join(map(str, ("evidence", index, *problem.loc[:1])))
            raise DatasetError(problem.msg, file=self.file, line=self.line, field=where) from None


class RunAnswer(BaseModel):
    """One response of the run with its claims in record order and its dataset row."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    answer_id: str
    question: str | None = None
    record: AnswerRecord | None = Field(default=None, description="Its answers.jsonl line.")
    claims: list[ClaimRecord] = Field(default_factory=list)
    row: DatasetRow | None = None


class RunInputs(BaseModel):
    """Everything a policy reads from one run directory, in canonical order."""

    model_config = ConfigDict(frozen=True)

    run_id: str | None
    split: str | None = Field(default=None, description="Only answers of this split (--split).")
    verifier_ids: list[str]
    answers: list[RunAnswer]
    verifications: dict[str, dict[str, VerificationRecord]] = Field(
        description="verifier_id -> 'dataset/answer_id/claim_id' -> record"
    )
    datasets: list[dict[str, Any]] = Field(
        default_factory=list, description="name and sha256 of each answers dataset read"
    )
    lexicons: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="verifier_id -> {lexicon@version: sha256} it used"
    )
    gates: dict[str, dict[tuple[str, str], GateRecord]] = Field(
        default_factory=dict, description="gate_id -> (dataset, question_id) -> record"
    )
    verifier_provenance: dict[str, VerifierProvenance] = Field(
        default_factory=dict, description="verifier_id -> its model and retriever (manifest)"
    )
    input_sha256: dict[str, str]

    def verifier(self, verifier_id: str) -> VerifierProvenance:
        """What the run manifest says produced a verifier's records (its id alone when the
        manifest does not describe it)."""
        found = self.verifier_provenance.get(verifier_id)
        return found or VerifierProvenance(info=VerifierInfo(verifier_id=verifier_id))

    def gate(self, gate_id: str) -> GateProvenance:
        """The reranker and retriever a gate's records name."""
        return gate_provenance(gate_id, self.gates.get(gate_id, {}).values())

    def verification(self, verifier: str, claim: ClaimRecord) -> VerificationRecord | None:
        return self.verifications.get(verifier, {}).get(_claim_key(claim))

    def resolve_verifier(self, wanted: str | None, *, file: str) -> str:
        """The verifier a policy reads: the named one, or the run's only one."""
        if wanted is None:
            if len(self.verifier_ids) == 1:
                return self.verifier_ids[0]
            found = ", ".join(self.verifier_ids) or "none"
            raise SpecError(
                f"name the verifier to read (the run has {found})", file=file, field="verifier"
            )
        if wanted not in self.verifier_ids:
            found = ", ".join(self.verifier_ids) or "none"
            raise SpecError(
                f"verifier {wanted!r} is not in the run (it has {found})",
                file=file,
                field="verifier",
            )
        return wanted


def restrict_to_split(run: RunInputs, split: str | None) -> RunInputs:
    """Only the answers whose recorded `split` is `split` (every answer when None)."""
    if split is None:
        return run
    if split not in SPLITS:
        raise SpecError(f"use one of {', '.join(SPLITS)}; got {split!r}", field="--split")
    kept = [a for a in run.answers if split_of(a) == split]
    return run.model_copy(update={"answers": kept, "split": split})


def split_of(answer: RunAnswer) -> str | None:
    """The answer's recorded split (its record's, else its dataset row's)."""
    if answer.record is not None and answer.record.split is not None:
        return answer.record.split
    value = answer.row.fields.get("split") if answer.row else None
    return str(value) if value is not None else None


def _gates(run_dir: Path) -> dict[str, dict[tuple[str, str], GateRecord]]:
    records: dict[Any, GateRecord] = latest(run_dir / GATES_FILE, GateRecord)
    out: dict[str, dict[tuple[str, str], GateRecord]] = {}
    for key in sorted(records):
        record = records[key]
        out.setdefault(record.gate_id, {})[(record.dataset, record.question_id)] = record
    return out


def _lexicons_of(verifier: dict[str, Any]) -> dict[str, str]:
    """The `{name@version: sha256}` lexicons a verifier's scored pairs used (manifest)."""
    pairs = verifier.get("pairs")
    found = pairs.get("lexicons") if isinstance(pairs, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _claim_key(claim: ClaimRecord | VerificationRecord) -> str:
    return f"{claim.dataset}/{claim.answer_id}/{claim.claim_id}"


def _dump(records: dict[Any, Any]) -> list[Any]:
    return [records[k].model_dump(mode="json") for k in sorted(records)]


def read_dataset_rows(path: Path) -> dict[str, DatasetRow]:
    """Rows of a JSONL answers dataset by id (a later row with the same id wins)."""
    rows: dict[str, DatasetRow] = {}
    if path.suffix != ".jsonl" or not path.is_file():
        return rows
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"not valid JSON: {exc.msg}", file=path, line=line_no) from None
            if isinstance(value, dict) and isinstance(value.get("id"), str | int):
                _check_known_fields(value, path, line_no)
                rows[str(value["id"])] = DatasetRow(fields=value, file=str(path), line=line_no)
    return rows


def _check_known_fields(value: dict[str, Any], path: Path, line: int) -> None:
    """The dataset response fields of a row are validated (unknown ones are ignored): a
    bad value is one line naming file, line and field (`gold_action = "maybe"`)."""
    validate_row(ResponseFields, {k: value[k] for k in RESPONSE_FIELDS if k in value}, path, line)
    DatasetRow(fields=value, file=str(path), line=line).passages()  # names evidence.<i>.<field>


def _dataset_rows(run_dir: Path, manifest_factuality: Any) -> dict[tuple[str, str], DatasetRow]:
    out: dict[tuple[str, str], DatasetRow] = {}
    for info in getattr(manifest_factuality, "datasets", []) or []:
        path = Path(str(getattr(info, "path", "") or ""))
        if not path.is_absolute():
            path = run_dir / path
        for item_id, row in read_dataset_rows(path).items():
            out[(str(info.name), item_id)] = row
    return out


def read_run(run_dir: Path) -> RunInputs:
    """The run's answers, claims, verifications and dataset rows."""
    manifest = read_manifest(run_dir)
    answers: dict[tuple[str, str], AnswerRecord] = latest(run_dir / ANSWERS_FILE, AnswerRecord)
    claims: dict[Any, ClaimRecord] = latest(run_dir / CLAIMS_FILE, ClaimRecord)
    verifs: dict[Any, VerificationRecord] = latest(run_dir / VERIFICATIONS_FILE, VerificationRecord)
    rows = _dataset_rows(run_dir, manifest.factuality)
    by_answer: dict[tuple[str, str], list[ClaimRecord]] = {}
    for claim in claims.values():
        by_answer.setdefault((claim.dataset, claim.answer_id), []).append(claim)
    keys = sorted(set(answers) | set(by_answer))
    run_answers = [
        RunAnswer(
            dataset=k[0],
            answer_id=k[1],
            question=answers[k].question if k in answers else None,
            record=answers.get(k),
            claims=sorted(by_answer.get(k, []), key=claim_order),
            row=rows.get(k),
        )
        for k in keys
    ]
    verifications: dict[str, dict[str, VerificationRecord]] = {}
    for key in sorted(verifs):
        record = verifs[key]
        verifications.setdefault(record.verifier_id, {})[_claim_key(record)] = record
    gates = _gates(run_dir)
    section = manifest.factuality
    verifier_blocks = [v for v in (section.verifiers if section else []) if v.get("id")]
    ids = [str(v["id"]) for v in verifier_blocks]
    return RunInputs(
        run_id=manifest.run_id,
        verifier_ids=sorted(set(ids) | set(verifications)),
        answers=run_answers,
        verifications=verifications,
        datasets=[
            {"name": d.name, "sha256": d.sha256} for d in (section.datasets if section else [])
        ],
        lexicons={str(v["id"]): _lexicons_of(v) for v in verifier_blocks if _lexicons_of(v)},
        verifier_provenance={str(v["id"]): verifier_provenance(v) for v in verifier_blocks},
        gates=gates,
        input_sha256={
            GATES_FILE: canonical_sha256(
                [r.model_dump(mode="json") for g in sorted(gates) for r in gates[g].values()]
            ),
            ANSWERS_FILE: canonical_sha256(_dump(answers)),
            CLAIMS_FILE: canonical_sha256(_dump(claims)),
            VERIFICATIONS_FILE: canonical_sha256(_dump(verifs)),
        },
    )


__all__ = [
    "SPLITS",
    "DatasetRow",
    "RunAnswer",
    "RunInputs",
    "claim_order",
    "read_dataset_rows",
    "read_run",
    "restrict_to_split",
    "split_of",
]
