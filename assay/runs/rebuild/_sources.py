"""A run's datasets found again as the run read them: the manifest's entry, the spec
block it came from (column mapping, delimiter), and the file on this machine.

Shared by `assay view` (an item's variables next to its judgments) and `assay verify`
(requests re-rendered from the dataset rows), so both read a dataset one way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.manifest import DatasetInfo, Manifest
from assay.datasets import BUILTIN_DATASETS, ItemsDatasetOptions
from assay.datasets._load import BUILTIN_DATA_DIR
from assay.runs.store._inputs_snapshot import input_copy


def dataset_info(manifest: Manifest, name: str) -> DatasetInfo | None:
    """The manifest's entry of dataset `name` (judging or factuality datasets)."""
    infos = list(manifest.datasets)
    if manifest.factuality is not None:
        infos += manifest.factuality.datasets
    return next((d for d in infos if d.name == name), None)


def spec_entry(
    manifest: Manifest, info: DatasetInfo, *, factuality: bool = False
) -> dict[str, Any]:
    """The spec's `[[datasets]]` block the manifest entry came from (column mapping)."""
    spec = manifest.spec if isinstance(manifest.spec, dict) else {}
    if factuality:
        spec = spec.get("factuality") or {}
    blocks = spec.get("datasets") if isinstance(spec, dict) else None
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        path = str(block.get("path", ""))
        if block.get("name") == info.name or ("name" not in block and Path(path).stem == info.name):
            return block
    return {}


def items_options(manifest: Manifest, info: DatasetInfo) -> ItemsDatasetOptions:
    """The items options the run read the file with (columns, task, delimiter), without
    its path: a block that no longer validates reads with the defaults."""
    block = {k: v for k, v in spec_entry(manifest, info).items() if k != "path"}
    try:
        options = ItemsDatasetOptions.model_validate({**block, "path": ""})
    except ValidationError:
        options = ItemsDatasetOptions(path="")
    delimiter = getattr(info, "delimiter", None)
    if options.delimiter is None and isinstance(delimiter, str):
        options = options.model_copy(update={"delimiter": delimiter})
    return options


def answers_options(
    manifest: Manifest, info: DatasetInfo, run_dir: Path | None = None
) -> tuple[str, str | None]:
    """(format, evidence file) an answers dataset was read with: the evidence file of its
    spec block is relative to the spec's folder, as the run resolved it. Given the run
    directory, a file with the bytes the manifest's `inputs` recorded for it comes first
    (its recorded path, or the run directory's copy when the author's folder is gone)."""
    block = spec_entry(manifest, info, factuality=True)
    evidence = block.get("evidence_file")
    if isinstance(evidence, str) and manifest.spec_path:
        evidence = str(Path(manifest.spec_path).parent / evidence)
    recorded = _recorded_evidence(manifest, block, run_dir)
    evidence = str(recorded) if recorded is not None else evidence
    fmt = str(info.format or block.get("format") or "auto")
    return fmt, evidence if isinstance(evidence, str) else None


def _recorded_evidence(
    manifest: Manifest, block: dict[str, Any], run_dir: Path | None
) -> Path | None:
    """The evidence file of `block` as the manifest's `inputs` recorded it, if here."""
    fact = manifest.spec.get("factuality") if isinstance(manifest.spec, dict) else None
    blocks = fact.get("datasets") if isinstance(fact, dict) else None
    if run_dir is None or not block or not isinstance(blocks, list):
        return None
    index = next((i for i, b in enumerate(blocks) if b is block), None)
    field = f"factuality.datasets[{index}].evidence_file"
    entry = next((e for e in manifest.inputs if e.field == field), None)
    return None if entry is None else input_copy(run_dir, entry)


def resolve_dataset(run_dir: Path, info: DatasetInfo) -> Path | None:
    """The file the manifest names (relative: to the run directory); a bundled dataset
    recorded by another install's path is this install's copy."""
    if not info.path:
        return None
    path = Path(info.path).expanduser()
    path = path if path.is_absolute() else run_dir / path
    if not path.exists() and path.name in BUILTIN_DATASETS.values():
        return BUILTIN_DATA_DIR / path.name
    return path


__all__ = ["answers_options", "dataset_info", "items_options", "resolve_dataset", "spec_entry"]
