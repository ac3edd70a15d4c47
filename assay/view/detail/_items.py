"""One item of a run (an items row, a pairwise row, a ForceBench pair, a claim): its
variables from the dataset file the run read, its gold, and every judgment of it with
the messages rebuilt. A run's record files are scanned for the item id, not parsed
whole, so an item page costs milliseconds on a 100,000-judgment run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.adjudication import adjudication_history, read_adjudications
from assay.core.manifest import Manifest
from assay.core.pairs import Member
from assay.core.records import ItemJudgmentRecord, ItemRecord, JudgmentRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE, JUDGMENTS_FILE, read_manifest
from assay.view.detail._claims import claim_detail
from assay.view.detail._judgments import judge_entries, judgment_detail, majorities, rebuild
from assay.view.detail._models import ItemDetail, JudgmentDetail
from assay.view.detail._scan import LineIndex, matching_records, matching_rows
from assay.view.detail._sources import Loaded, load_dataset

PAIRWISE_CHOICES = ["A", "B", "tie"]
_ORDERS = ("ab", "ba")
_MEMBERS = (Member.CALIBRATED.value, Member.RAISED.value)


def item_detail(
    run_dir: Path, dataset: str, item_id: str, *, index: LineIndex | None = None
) -> ItemDetail:
    """Item `item_id` of `dataset` in the run at `run_dir` (KeyError when the run has no
    such item). `index` may say where in a record file the item's lines are."""
    manifest = read_manifest(run_dir)
    unit = _unit(run_dir, manifest, dataset)
    if unit == "claim":
        detail = claim_detail(run_dir, manifest, dataset, item_id, index=index)
    elif unit == "pair":
        detail = _pair_detail(run_dir, manifest, dataset, item_id, index)
    else:
        detail = _items_detail(run_dir, manifest, dataset, item_id, index)
    detail.majorities = majorities(detail.judgments)
    detail.adjudication = read_adjudications(run_dir).get((dataset, item_id))
    detail.history = adjudication_history(run_dir, dataset, item_id)
    return detail


def _unit(run_dir: Path, manifest: Manifest, dataset: str) -> str:
    """Which record file judges `dataset`: the manifest's factuality datasets are
    claims, a `kind = "items"` block is items, the rest ForceBench pairs."""
    if manifest.factuality is not None and any(
        d.name == dataset for d in manifest.factuality.datasets
    ):
        return "claim"
    blocks = manifest.spec.get("datasets") if isinstance(manifest.spec, dict) else None
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and block.get("kind") == "items":
            name = block.get("name") or Path(str(block.get("path", ""))).stem
            if name == dataset:
                return "item"
    listed = matching_rows(run_dir / ITEMS_FILE, dataset, {"dataset": dataset})
    try:  # datasets given as Python objects leave no spec block
        return "item" if next(listed, None) is not None else "pair"
    finally:
        listed.close()


def _labels(manifest: Manifest, task: str) -> list[str]:
    """The labels the judges' prompts of `task` declare, in first-seen order."""
    out: list[str] = []
    for entry in manifest.judges:
        prompt = entry.get("prompt") if isinstance(entry, dict) else None
        if isinstance(prompt, dict) and prompt.get("task", "judge") == task:
            out += [str(x) for x in prompt.get("labels") or [] if str(x) not in out]
    return out


# ---- items datasets -------------------------------------------------------------------


def _items_detail(
    run_dir: Path, manifest: Manifest, dataset: str, item_id: str, index: LineIndex | None
) -> ItemDetail:
    where = {"dataset": dataset, "item_id": item_id}
    records = matching_records(
        run_dir / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord, item_id, where, index=index
    )
    rows = matching_records(run_dir / ITEMS_FILE, ItemRecord, item_id, where)
    loaded = load_dataset(run_dir, manifest, dataset, kind="items")
    item = _find_item(loaded, item_id)
    if not records and not rows and item is None:
        raise KeyError(f"no item {item_id!r} in dataset {dataset!r} of {run_dir}")
    row = rows[-1] if rows else None
    pairwise = row.pairwise if row is not None else any(r.order for r in records)
    variables = dict(item.variables) if item is not None else None
    by_variant = _orders(variables) if pairwise and variables is not None else {}
    note = _variables_note(loaded, item, item_id)
    entries = judge_entries(manifest)
    judgments = []
    for record in sorted(records, key=lambda r: (r.judge_id, _ORDERS.index(r.order or "ab"))):
        values = by_variant.get(record.order or "", variables)
        built = rebuild(_identity(entries, record.judge_id), record.prompt_sha256, values, note)
        judgments.append(
            judgment_detail(record, judge_id=record.judge_id, variant=record.order, rebuilt=built)
        )
    return ItemDetail(
        dataset=dataset,
        item_id=item_id,
        unit="item",
        pairwise=pairwise,
        variants=list(_ORDERS) if pairwise else [],
        variables=variables,
        variables_by_variant=by_variant,
        variables_note=note,
        dataset_file=loaded.path,
        gold=_items_gold(row),
        ratings=dict(row.ratings) if row is not None else {},
        labels=PAIRWISE_CHOICES if pairwise else _labels(manifest, "judge"),
        judgments=judgments,
    )


def _orders(variables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What each order rendered with: in `ba` response A and B swap slots (the items
    stage's `variables`)."""
    swapped = dict(variables)
    swapped["response_a"], swapped["response_b"] = (
        variables.get("response_b"),
        variables.get("response_a"),
    )
    return {"ab": dict(variables), "ba": swapped}


def _find_item(loaded: Loaded, item_id: str) -> Any:
    return loaded.by_id.get(item_id)


def _variables_note(loaded: Loaded, item: Any, item_id: str) -> str | None:
    if item is None and loaded.dataset is not None:
        missing = f"item {item_id!r} is not in {loaded.path} now"
        return f"{loaded.note}; {missing}" if loaded.note else f"dataset file changed: {missing}"
    return loaded.note


def _items_gold(row: ItemRecord | None) -> dict[str, Any]:
    if row is None:
        return {}
    gold = {"label": row.gold_label, "score": row.gold_score, "preference": row.gold_preference}
    return {k: v for k, v in gold.items() if v is not None}


def _identity(entries: dict[str, dict[str, Any]], judge_id: str) -> dict[str, Any] | None:
    prompt = entries.get(judge_id, {}).get("prompt")
    return prompt if isinstance(prompt, dict) else None


# ---- ForceBench pairs -----------------------------------------------------------------


def _pair_detail(
    run_dir: Path, manifest: Manifest, dataset: str, pair_id: str, index: LineIndex | None
) -> ItemDetail:
    where = {"dataset": dataset, "pair_id": pair_id}
    records = matching_records(
        run_dir / JUDGMENTS_FILE, JudgmentRecord, pair_id, where, index=index
    )
    loaded = load_dataset(run_dir, manifest, dataset, kind="pairs")
    pair = _find_item(loaded, pair_id)
    if not records and pair is None:
        raise KeyError(f"no pair {pair_id!r} in dataset {dataset!r} of {run_dir}")
    by_member = {m: _pair_variables(pair, Member(m)) for m in _MEMBERS} if pair is not None else {}
    note = _variables_note(loaded, pair, pair_id)
    entries = judge_entries(manifest)
    judgments: list[JudgmentDetail] = []
    for record in sorted(records, key=lambda r: (r.judge_id, _MEMBERS.index(r.member.value))):
        member = record.member.value
        values = by_member.get(member)
        built = rebuild(_identity(entries, record.judge_id), record.prompt_sha256, values, note)
        judgments.append(
            judgment_detail(record, judge_id=record.judge_id, variant=member, rebuilt=built)
        )
    variables = pair.model_dump(mode="json", exclude_none=True) if pair is not None else None
    return ItemDetail(
        dataset=dataset,
        item_id=pair_id,
        unit="pair",
        pairwise=False,
        variants=list(_MEMBERS),
        variables=variables,
        variables_by_variant=by_member,
        variables_note=note,
        dataset_file=loaded.path,
        gold=_pair_gold(pair),
        labels=_labels(manifest, "judge"),
        judgments=judgments,
    )


def _pair_variables(pair: Any, member: Member) -> dict[str, Any]:
    """What a judge saw of one member (`JudgeItem` as `item_of` builds it, rendered as
    `LLMJudge.request_for` does: extras, then claim, evidence and question)."""
    return {"claim": pair.claim(member), "evidence": pair.evidence, "question": pair.question}


def _pair_gold(pair: Any) -> dict[str, Any]:
    """A ForceBench pair's gold is an order: the calibrated claim is warranted by the
    evidence, the raised one overstates it, so a judge should score it lower."""
    gold: dict[str, Any] = {"expected": "calibrated scores above raised"}
    if pair is not None:
        gold.update(axis=pair.axis.value, severity=pair.severity)
    return gold
