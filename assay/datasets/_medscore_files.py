"""MedScore's released output files: which file is which, and the models of their rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import Field

from assay.datasets._rows import RowId, SourceRow
from assay.errors import DatasetError

MEDSCORE_DECOMPOSITIONS = "decompositions.jsonl"
MEDSCORE_VERIFICATIONS = "verifications.jsonl"
MEDSCORE_OUTPUTS = ("output.jsonl", "medscore_output.jsonl")

MedScoreEvidence = None | str | list[dict[str, Any]]


class MedScoreSentenceRow(SourceRow):
    """What every per-claim MedScore row names: the response and the sentence."""

    id: RowId
    sentence_id: int
    sentence: str | None = None


class MedScoreDecompositionRow(MedScoreSentenceRow):
    """decompositions.jsonl: one claim of a sentence (or a sentence with `claim: null`)."""

    claim: str | None = None
    claim_id: int | None = None


class MedScoreVerificationRow(MedScoreSentenceRow):
    """verifications.jsonl: one verified claim; `raw` and `score` are read separately."""

    claim: str
    claim_id: int
    evidence: MedScoreEvidence = None


class MedScoreOutputClaimRow(SourceRow):
    """One entry of an output.jsonl row's `claims`."""

    claim: str
    sentence: str | None = None
    evidence: MedScoreEvidence = None


class MedScoreOutputRow(SourceRow):
    """output.jsonl: one response, its verified claims and MedScore's mean score."""

    id: RowId
    score: float | None = None
    claims: list[MedScoreOutputClaimRow] = Field(default_factory=list)


@dataclass
class MedScoreFiles:
    """The MedScore files found; any of them may be absent."""

    decompositions: Path | None = None
    verifications: Path | None = None
    output: Path | None = None

    def any(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))


_FOLDER_NAMES = {
    "decompositions": (MEDSCORE_DECOMPOSITIONS,),
    "verifications": (MEDSCORE_VERIFICATIONS,),
    "output": MEDSCORE_OUTPUTS,
}


def medscore_files(directory_or_files: str | Path | Sequence[str | Path]) -> MedScoreFiles:
    """MedScore's output folder, or a list of its files, as the files it holds."""
    if isinstance(directory_or_files, str | Path):
        given = Path(directory_or_files).expanduser()
        if given.is_dir():
            return _files_in_folder(given)
        paths = [given]
    else:
        paths = [Path(p).expanduser() for p in directory_or_files]
    found = MedScoreFiles()
    for p in paths:
        attr = _medscore_kind(p)
        if getattr(found, attr) is not None:
            raise DatasetError(f"two MedScore {attr} files given", file=p)
        setattr(found, attr, p)
    if not found.any():
        raise DatasetError("no MedScore output files given")
    return found


def _files_in_folder(folder: Path) -> MedScoreFiles:
    found = MedScoreFiles()
    for attr, names in _FOLDER_NAMES.items():
        present = [folder / n for n in names if (folder / n).is_file()]
        if present:
            setattr(found, attr, present[0])
    if not found.any():
        raise DatasetError(
            "no MedScore output files (decompositions.jsonl, verifications.jsonl, "
            "output.jsonl or medscore_output.jsonl) in this folder",
            file=folder,
        )
    return found


def _medscore_kind(p: Path) -> str:
    """Which MedScore file `p` is, by the end of its name."""
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
