"""Datasets: ForceBench pairs, items (any columns, optional gold), answers to score (one
importer per source format), and MedScore's, ExpertQA's and WiCE's released claims and
verdicts as core records.

The built-in answers importers register in `assay.core.registry.IMPORTERS` when
`_builtin_importers` is imported (the registry does it on its first read); names are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (PEP 562)
    from assay.core.answers import AnswerItem, GoldClaim, Passage
    from assay.core.pairs import Axis, ForcePair, Member
    from assay.datasets._answers import AnswersDataset, AnswersImporter, SourceProbe, detects
    from assay.datasets._answers_jsonl import read_answers_jsonl
    from assay.datasets._expertqa import load_expertqa_claims, read_expertqa
    from assay.datasets._importers import (
        FORMATS,
        answer_formats,
        detect_format,
        import_answers,
        load_answers,
    )
    from assay.datasets._items import Item, ItemsDataset, ItemsDatasetOptions, load_items
    from assay.datasets._jsonl import JsonlFile, json_lines, json_objects, read_jsonl
    from assay.datasets._load import (
        BUILTIN_DATASETS,
        LoadedDataset,
        load_pairs,
        resolve_dataset_path,
    )
    from assay.datasets._medscore_files import (
        MEDSCORE_DECOMPOSITIONS,
        MEDSCORE_OUTPUTS,
        MEDSCORE_VERIFICATIONS,
    )
    from assay.datasets._medscore_input import read_medscore_input
    from assay.datasets._medscore_outputs import (
        import_medscore_outputs,
        medscore_reported_scores,
        medscore_response_ids,
    )
    from assay.datasets._medscore_verdicts import read_true_false
    from assay.datasets._pairs_file import PairsFile, scan_pairs
    from assay.datasets._rows import check_unique
    from assay.datasets._tabular import (
        CSV_SUFFIXES,
        JSONL_SUFFIXES,
        PARQUET_SUFFIXES,
        TABLE_SUFFIXES,
        Delimiter,
        table_rows,
    )
    from assay.datasets._wice import read_wice
    from assay.datasets._wice_verdicts import load_wice_reference_verdicts

_SOURCES = {  # where each lazily imported name lives
    "assay.core.answers": ("AnswerItem", "GoldClaim", "Passage"),
    "assay.core.pairs": ("Axis", "ForcePair", "Member"),
    "assay.datasets._answers": ("AnswersDataset", "AnswersImporter", "SourceProbe", "detects"),
    "assay.datasets._answers_jsonl": ("read_answers_jsonl",),
    "assay.datasets._expertqa": ("load_expertqa_claims", "read_expertqa"),
    "assay.datasets._importers": (
        "FORMATS",
        "answer_formats",
        "detect_format",
        "import_answers",
        "load_answers",
    ),
    "assay.datasets._items": ("Item", "ItemsDataset", "ItemsDatasetOptions", "load_items"),
    "assay.datasets._jsonl": ("JsonlFile", "json_lines", "json_objects", "read_jsonl"),
    "assay.datasets._load": (
        "BUILTIN_DATASETS",
        "LoadedDataset",
        "load_pairs",
        "resolve_dataset_path",
    ),
    "assay.datasets._medscore_files": (
        "MEDSCORE_DECOMPOSITIONS",
        "MEDSCORE_OUTPUTS",
        "MEDSCORE_VERIFICATIONS",
    ),
    "assay.datasets._medscore_input": ("read_medscore_input",),
    "assay.datasets._medscore_outputs": (
        "import_medscore_outputs",
        "medscore_reported_scores",
        "medscore_response_ids",
    ),
    "assay.datasets._medscore_verdicts": ("read_true_false",),
    "assay.datasets._pairs_file": ("PairsFile", "scan_pairs"),
    "assay.datasets._rows": ("check_unique",),
    "assay.datasets._tabular": (
        "CSV_SUFFIXES",
        "JSONL_SUFFIXES",
        "PARQUET_SUFFIXES",
        "TABLE_SUFFIXES",
        "Delimiter",
        "table_rows",
    ),
    "assay.datasets._wice": ("read_wice",),
    "assay.datasets._wice_verdicts": ("load_wice_reference_verdicts",),
}
_lazy = LazyNames(__name__, _SOURCES, globals())

__all__ = [
    "AnswerItem",
    "GoldClaim",
    "Passage",
    "BUILTIN_DATASETS",
    "CSV_SUFFIXES",
    "JSONL_SUFFIXES",
    "Axis",
    "ForcePair",
    "LoadedDataset",
    "PairsFile",
    "scan_pairs",
    "Member",
    "load_pairs",
    "resolve_dataset_path",
    "AnswersDataset",
    "AnswersImporter",
    "SourceProbe",
    "detects",
    "FORMATS",
    "answer_formats",
    "detect_format",
    "import_answers",
    "load_answers",
    "read_answers_jsonl",
    "read_expertqa",
    "read_medscore_input",
    "read_wice",
    "JsonlFile",
    "json_lines",
    "json_objects",
    "read_jsonl",
    "check_unique",
    "Item",
    "ItemsDataset",
    "ItemsDatasetOptions",
    "load_items",
    "PARQUET_SUFFIXES",
    "TABLE_SUFFIXES",
    "table_rows",
    "Delimiter",
    "MEDSCORE_DECOMPOSITIONS",
    "MEDSCORE_OUTPUTS",
    "MEDSCORE_VERIFICATIONS",
    "import_medscore_outputs",
    "load_expertqa_claims",
    "load_wice_reference_verdicts",
    "medscore_reported_scores",
    "medscore_response_ids",
    "read_true_false",
]


def __getattr__(name: str) -> Any:
    """Import a name's module on first use: a spec that names a delimiter or items
    options does not load every importer."""
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
