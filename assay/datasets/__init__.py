"""Datasets: ForceBench pairs and their loaders."""

from assay.datasets._answers import AnswerItem, GoldClaim, Passage
from assay.datasets._forcebench import Axis, ForcePair, Member
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
]
