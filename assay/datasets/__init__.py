"""Datasets: ForceBench pairs and their loaders."""

from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.pairs import Axis, ForcePair, Member
from assay.datasets._importers import (
    AnswersDataset,
    import_medscore_outputs,
    load_answers,
    load_expertqa_claims,
    load_wice_reference_verdicts,
    medscore_reported_scores,
    medscore_response_ids,
    read_true_false,
)
from assay.datasets._load import (
    BUILTIN_DATASETS,
    LoadedDataset,
    load_pairs,
    resolve_dataset_path,
)

__all__ = [
    "AnswerItem",
    "GoldClaim",
    "Passage",
    "BUILTIN_DATASETS",
    "Axis",
    "ForcePair",
    "LoadedDataset",
    "Member",
    "load_pairs",
    "resolve_dataset_path",
    "AnswersDataset",
    "import_medscore_outputs",
    "load_answers",
    "load_expertqa_claims",
    "load_wice_reference_verdicts",
    "medscore_reported_scores",
    "medscore_response_ids",
    "read_true_false",
]
