"""Which items a run holds, and whether each is pairwise: what an adjudication is checked
against before it is written (a label for an item the run never judged is a typo)."""

from __future__ import annotations

import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from assay.core.records import Order
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE, iter_jsonl

__all__ = ["item_kind"]

Kinds = dict[tuple[str, str], bool]  # (dataset, item_id) -> pairwise


class _ItemRow(BaseModel):
    """The fields of an items.jsonl line this check needs."""

    model_config = ConfigDict(extra="ignore")
    dataset: str
    item_id: str
    pairwise: bool = False


class _JudgedItem(BaseModel):
    """The fields of an item_judgments.jsonl line this check needs: an order means pairwise."""

    model_config = ConfigDict(extra="ignore")
    dataset: str
    item_id: str
    order: Order | None = None


_CACHE: dict[Path, tuple[tuple[int, int], Kinds]] = {}
_CACHE_LOCK = threading.Lock()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def _scan(path: Path) -> Kinds:
    kinds: Kinds = {}
    if path.name == ITEMS_FILE:
        for row in iter_jsonl(path, _ItemRow):
            kinds[(row.dataset, row.item_id)] = row.pairwise
    else:
        for judged in iter_jsonl(path, _JudgedItem):
            key = (judged.dataset, judged.item_id)
            kinds[key] = kinds.get(key, False) or judged.order is not None
    return kinds


def _kinds(path: Path) -> Kinds:
    """The items one file names; re-read only when the file changed (a server checks
    every POST, and a run may still be appending to item_judgments.jsonl)."""
    key = path.resolve()
    stamp = _stamp(path)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    kinds = _scan(path)
    with _CACHE_LOCK:
        _CACHE[key] = (stamp, kinds)
    return kinds


def item_kind(run_dir: Path, dataset: str, item_id: str) -> bool | None:
    """Whether the item is pairwise; None when the run holds no such item. items.jsonl
    holds a run's whole universe; item_judgments.jsonl is read only for an item without
    a row there (a run written before items.jsonl, or one that lost it)."""
    key = (dataset, item_id)
    found = _kinds(run_dir / ITEMS_FILE).get(key)
    if found is None:
        found = _kinds(run_dir / ITEM_JUDGMENTS_FILE).get(key)
    return found
