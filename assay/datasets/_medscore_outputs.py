"""MedScore's released outputs as assay's sentence, claim and verification records.

So that MedScore's scores can be recomputed (and checked) without calling a model.
Field mappings and assumptions: docs/how-to/import-datasets.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from assay.core.outcomes import Status
from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord
from assay.datasets._jsonl import member, read_jsonl
from assay.datasets._medscore_files import (
    MEDSCORE_OUTPUTS,
    MedScoreDecompositionRow,
    MedScoreFiles,
    MedScoreOutputRow,
    MedScoreVerificationRow,
    medscore_files,
)
from assay.datasets._medscore_verdicts import medscore_verdict
from assay.datasets._records import VerdictFields
from assay.datasets._rows import check_unique
from assay.errors import DatasetError

M = TypeVar("M", bound=BaseModel)
ClaimKey = tuple[str, int, int]  # MedScore's (id, sentence_id, claim_id)
MedScoreRecords = tuple[list[SentenceRecord], list[ClaimRecord], list[VerificationRecord]]


def import_medscore_outputs(
    directory_or_files: str | Path | Sequence[str | Path],
    *,
    dataset: str = "medscore",
    decomposer_id: str = "medscore",
    verifier_id: str = "medscore",
    decomposer_model: str | None = None,
    verifier_model: str | None = None,
) -> MedScoreRecords:
    """MedScore's released per-claim files as assay sentence, claim and verification records.

    `directory_or_files`: MedScore's `output_dir`, or any of its files
    (`decompositions.jsonl`, `verifications.jsonl`, `output.jsonl` /
    `medscore_output.jsonl`). Claim ids become `<id>:s<sentence_id>:c<claim_id>`.
    Verdicts are read strictly from MedScore's `raw` text (see `medscore_verdict`).

    Cross-checks, each a DatasetError naming file:line and field: every verification
    matches a decomposed claim (same text); each output.jsonl row lists the same claims as
    verifications.jsonl and its `score` is the mean of their MedScore scores. Without
    decompositions.jsonl, sentences and claims are rebuilt from the verifications (sentences
    with no claims are then unknown); with output.jsonl alone, verifications come from its
    `claims` (ids `<id>:c<k>`, no sentence id) and no sentence or claim records are made.
    """
    files = medscore_files(directory_or_files)
    producers = (decomposer_id, verifier_id, decomposer_model, verifier_model)
    run = _MedScoreRun(files, dataset, *producers)
    for path, read in (
        (files.decompositions, run.read_decompositions),
        (files.verifications, run.read_verifications),
        (files.output, run.read_output),
    ):
        if path is not None:
            read(path)
    return run.sentences, run.claims, run.verifications


def assay_claim_id(answer_id: str, sentence_id: int, claim_id: int) -> str:
    return f"{answer_id}:s{sentence_id}:c{claim_id}"


@dataclass
class _MedScoreRun:
    """The records built while reading one MedScore run's files, in file order."""

    files: MedScoreFiles
    dataset: str
    decomposer_id: str
    verifier_id: str
    decomposer_model: str | None
    verifier_model: str | None
    sentences: list[SentenceRecord] = field(default_factory=list)
    claims: list[ClaimRecord] = field(default_factory=list)
    verifications: list[VerificationRecord] = field(default_factory=list)
    sentence_index: dict[tuple[str, int], tuple[int, SentenceRecord]] = field(default_factory=dict)
    decomposed: dict[ClaimKey, tuple[int, str]] = field(default_factory=dict)
    verified: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)

    def read_decompositions(self, path: Path) -> None:
        for line, _, d in _validated(path, MedScoreDecompositionRow):
            first_line, sentence = self._sentence(d.id, d.sentence_id, d.sentence or "", line)
            if sentence.sentence != (d.sentence or ""):
                raise DatasetError(
                    f"differs from the same sentence's row on line {first_line}",
                    file=path,
                    line=line,
                    field="sentence",
                )
            if d.claim is None:
                continue
            if d.claim_id is None:
                raise DatasetError(
                    "missing for a non-null claim", file=path, line=line, field="claim_id"
                )
            key = (d.id, d.sentence_id, d.claim_id)
            first = self.decomposed.get(key)
            _check_new_claim(key, first[0] if first else None, path, line)
            self.decomposed[key] = (line, d.claim)
            self._claim(key, d.claim, sentence)

    def read_verifications(self, path: Path) -> None:
        seen: dict[ClaimKey, int] = {}
        for line, row, v in _validated(path, MedScoreVerificationRow):
            key = (v.id, v.sentence_id, v.claim_id)
            _check_new_claim(key, seen.get(key), path, line)
            seen[key] = line
            if self.files.decompositions is not None:
                decomposed = self.decomposed.get(key)
                _check_decomposed(self.files.decompositions, decomposed, key, v.claim, path, line)
            else:  # rebuilt from the verifications: sentences without claims are unknown
                _, sentence = self._sentence(v.id, v.sentence_id, v.sentence or "", line)
                self._claim(key, v.claim, sentence)
            self._verdict(row, v.id, assay_claim_id(*key), v.sentence_id, v.claim, v.evidence)
            self.verified.setdefault(v.id, []).append((v.claim, row))

    def read_output(self, path: Path) -> None:
        seen: dict[str, int] = {}
        for line, row, out in _validated(path, MedScoreOutputRow):
            check_unique(out.id, seen, path, line, "id")
            if self.files.verifications is not None:
                _check_output_row(out, self.verified.get(out.id, []), path, line)
                continue
            for k, (c, c_row) in enumerate(zip(out.claims, row["claims"], strict=True)):
                self._verdict(c_row, out.id, f"{out.id}:c{k}", None, c.claim, c.evidence)
        if self.files.verifications is not None:
            missing = [a for a in self.verified if a not in seen]
            if missing:
                raise DatasetError(
                    f"has no row for id {missing[0]!r}, which {self.files.verifications.name} "
                    f"verified ({len(missing)} such id(s)): the files come from different runs",
                    file=path,
                    field="id",
                )

    def _sentence(
        self, answer_id: str, sentence_id: int, text: str, line: int
    ) -> tuple[int, SentenceRecord]:
        """The sentence's record (made on its first row) and that row's line."""
        key = (answer_id, sentence_id)
        if key not in self.sentence_index:
            record = SentenceRecord(
                dataset=self.dataset,
                answer_id=answer_id,
                sentence_id=sentence_id,
                sentence=text,
                decomposer_id=self.decomposer_id,
                model=self.decomposer_model,
                status=Status.OK,
            )
            self.sentence_index[key] = (line, record)
            self.sentences.append(record)
        return self.sentence_index[key]

    def _claim(self, key: ClaimKey, text: str, sentence: SentenceRecord) -> None:
        sentence.n_claims += 1
        self.claims.append(
            ClaimRecord(
                dataset=self.dataset,
                answer_id=key[0],
                sentence_id=key[1],
                claim_id=assay_claim_id(*key),
                claim=text,
                decomposer_id=self.decomposer_id,
                model=self.decomposer_model,
            )
        )

    def _verdict(
        self,
        row: dict[str, Any],
        answer_id: str,
        claim_id: str,
        sentence_id: int | None,
        claim: str,
        evidence: object,
    ) -> None:
        ids = (self.dataset, answer_id, claim_id, claim, self.verifier_id, self.verifier_model)
        where = VerdictFields(*ids, sentence_id=sentence_id)
        self.verifications.append(medscore_verdict(row, where, evidence))


def _validated(path: Path, model: type[M]) -> Iterator[tuple[int, dict[str, Any], M]]:
    """The rows of one MedScore file (which may be empty), validated as `model`."""
    return read_jsonl(path, allow_empty=True).validated(model)


def _check_new_claim(key: ClaimKey, first_line: int | None, path: Path, line: int) -> None:
    if first_line is not None:
        raise DatasetError(
            f"duplicate claim (id, sentence_id, claim_id) {key} (first on line {first_line})",
            file=path,
            line=line,
            field="claim_id",
        )


def _check_decomposed(
    decompositions: Path,
    decomposed: tuple[int, str] | None,
    key: ClaimKey,
    claim: str,
    path: Path,
    line: int,
) -> None:
    """A verified claim must be one of decompositions.jsonl's, with the same text."""
    if decomposed is None:
        raise DatasetError(
            f"claim {key} is not in {decompositions.name}", file=path, line=line, field="claim_id"
        )
    if decomposed[1] != claim:
        raise DatasetError(
            f"differs from {decompositions.name} line {decomposed[0]}",
            file=path,
            line=line,
            field="claim",
        )


def _check_output_row(
    out: MedScoreOutputRow, verified: list[tuple[str, dict[str, Any]]], path: Path, line: int
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
    files = medscore_files(directory_or_files)
    ids: dict[str, None] = {}
    for path in (files.output, files.decompositions, files.verifications):
        if path is None:
            continue
        for _, row in read_jsonl(path, allow_empty=True).rows:
            if row.get("id") is not None:
                ids[str(row["id"])] = None
    return list(ids)


def medscore_reported_scores(output_path: str | Path) -> dict[str, float | None]:
    """MedScore's per-response score from output.jsonl (None when it verified no claim).

    `output_path`: the file or MedScore's output folder. Compare with assay's
    recomputation from `import_medscore_outputs` records.
    """
    given = Path(output_path).expanduser()
    file = member(given, MEDSCORE_OUTPUTS, "MedScore output") if given.is_dir() else given
    src = read_jsonl(file, allow_empty=True)
    scores: dict[str, float | None] = {}
    seen: dict[str, int] = {}
    for line, _, out in src.validated(MedScoreOutputRow):
        check_unique(out.id, seen, src.path, line, "id")
        scores[out.id] = out.score
    return scores
