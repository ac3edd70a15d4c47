"""Small run directories of every unit for the view index tests, written through the
record models (so every line has the shape the run stages write)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.core.records import ItemJudgmentRecord, JudgmentRecord, VerificationRecord


def append(path: Path, model: type[BaseModel], rows: Iterable[Mapping[str, Any]]) -> None:
    """Each row validated by `model` and appended as one line."""
    with path.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(model.model_validate(row).model_dump_json() + "\n")


def manifest(run_dir: Path, **fields: Any) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "manifest.json").write_text(json.dumps({"name": run_dir.name, **fields}))


def item(item_id: str, judge: str, label: str | None, **more: Any) -> dict[str, Any]:
    """One item judgment of dataset "d"; label None is a parse error."""
    row: dict[str, Any] = {"dataset": "d", "item_id": item_id, "judge_id": judge, **more}
    if label is None:
        row.setdefault("status", "parse_error")
        row.setdefault("error", "no label in the answer")
    else:
        row.setdefault("status", "ok")
        row["label"] = label
    return row


def pair(pair_id: str, judge: str, cal: float | None, raised: float | None) -> list[dict[str, Any]]:
    """Both members of a ForceBench pair; a None score is a parse error."""
    rows = []
    for member, score in (("calibrated", cal), ("raised", raised)):
        status = "ok" if score is not None else "parse_error"
        rows.append({"dataset": "fb", "pair_id": pair_id, "member": member, "judge_id": judge,
                     "status": status, "score": score, "label": None})  # fmt: skip
    return rows


def write_pairs(run_dir: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    manifest(run_dir)
    append(run_dir / "judgments.jsonl", JudgmentRecord, rows)
    return run_dir


def write_claims(run_dir: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    manifest(run_dir)
    base = {"dataset": "f", "claim": "a claim", "status": "ok"}
    append(run_dir / "verifications.jsonl", VerificationRecord, ({**base, **r} for r in rows))
    return run_dir


def write_items(
    run_dir: Path, items: Iterable[Mapping[str, Any]], judgments: Iterable[Mapping[str, Any]]
) -> Path:
    """items.jsonl lines are plain (dataset "d" by default), judgments through the model."""
    manifest(run_dir)
    with (run_dir / "items.jsonl").open("w", encoding="utf-8") as fh:
        for it in items:
            fh.write(json.dumps({"dataset": "d", **it}) + "\n")
    append(run_dir / "item_judgments.jsonl", ItemJudgmentRecord, judgments)
    return run_dir
