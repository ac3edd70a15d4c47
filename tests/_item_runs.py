"""Items run directories written directly, as the items stage writes them: a manifest,
items.jsonl (gold and raters) and item_judgments.jsonl (through the record models)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.core.records import ItemJudgmentRecord, ItemRecord


def write_item_run(
    run_dir: Path,
    name: str,
    items: Iterable[Mapping[str, Any]],
    judgments: Iterable[Mapping[str, Any]],
) -> Path:
    """`items`/`judgments`: record fields; `dataset` defaults to "d", status to "ok"."""
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"name": name}), encoding="utf-8")
    with (run_dir / "items.jsonl").open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(ItemRecord.model_validate({"dataset": "d", **item}).model_dump_json() + "\n")
    with (run_dir / "item_judgments.jsonl").open("w", encoding="utf-8") as fh:
        for j in judgments:
            record = ItemJudgmentRecord.model_validate({"dataset": "d", "status": "ok", **j})
            fh.write(record.model_dump_json() + "\n")
    return run_dir


def labelled(
    judge: str, labels: Sequence[str | None], ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One judge's label per item (`item-0`, ...); None is a parse error."""
    ids = ids or [f"item-{i}" for i in range(len(labels))]
    return [
        {"item_id": i, "judge_id": judge, "label": lab}
        if lab is not None
        else {"item_id": i, "judge_id": judge, "status": "parse_error"}
        for i, lab in zip(ids, labels, strict=True)
    ]


def gold_items(labels: Sequence[str], ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    ids = ids or [f"item-{i}" for i in range(len(labels))]
    return [{"item_id": i, "gold_label": g} for i, g in zip(ids, labels, strict=True)]
