"""The pair table built from columns (`_Outcomes`, ~10 bytes a judgment) equals the
table of the straightforward definition: the latest record per (pair, member, judge),
a pair failed when a member is missing, unscored or not ok."""

from __future__ import annotations

import math
import random
from typing import Any

import pandas as pd
import pytest

from assay.metrics._force_pairs import PAIR_COLUMNS, pair_table

STATUSES = ["ok", "ok", "ok", "parse_error", "api_error", "refusal"]


def _records(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(rng.randint(1, 40)):
        dataset = rng.choice(["d1", "d2"])
        for member in ("calibrated", "raised"):
            for judge in rng.sample(["j-a", "j-b", "j-c"], rng.randint(0, 3)):
                for _ in range(rng.choice([1, 1, 1, 2])):  # some keys recorded twice
                    out.append(
                        {
                            "dataset": dataset,
                            "pair_id": f"p{i}",
                            "member": member,
                            "judge_id": judge,
                            "axis": rng.choice(["scope", "numeric", None]),
                            "severity": rng.choice([1, 2, 3, None]),
                            "status": rng.choice(STATUSES),
                            "score": rng.choice([None, 0.0, 0.25, 0.5, 1.0, rng.random()]),
                        }
                    )
    rng.shuffle(out)
    return out


def _reference(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    latest: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    labels: dict[tuple[str, str], list[Any]] = {}
    for r in records:
        latest[(r["dataset"], r["pair_id"], r["member"], r["judge_id"])] = r
        seen = labels.setdefault((r["dataset"], r["pair_id"]), [None, None])
        seen[0] = r["axis"] if seen[0] is None else seen[0]
        seen[1] = r["severity"] if seen[1] is None else seen[1]
    judges = sorted({r["judge_id"] for r in records})
    rows = []
    for judge in judges:
        for dataset, pair_id in sorted(labels):
            cal = latest.get((dataset, pair_id, "calibrated", judge))
            raised = latest.get((dataset, pair_id, "raised", judge))
            ok = all(
                m is not None and m["score"] is not None and m["status"] == "ok"
                for m in (cal, raised)
            )
            rows.append(
                (
                    judge,
                    dataset,
                    pair_id,
                    *labels[(dataset, pair_id)],
                    math.nan if cal is None or cal["score"] is None else cal["score"],
                    math.nan if raised is None or raised["score"] is None else raised["score"],
                    None if cal is None else cal["status"],
                    None if raised is None else raised["status"],
                    not ok,
                    int(raised["score"] >= cal["score"]) if ok else 1,  # type: ignore[index]
                    cal["score"] - raised["score"] if ok else 0.0,  # type: ignore[index]
                )
            )
    return rows


def _plain(value: Any) -> Any:
    if value is pd.NA or value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value.item() if hasattr(value, "item") else value


@pytest.mark.parametrize("seed", range(25))
def test_columns_equal_the_definition(seed: int) -> None:
    records = _records(random.Random(seed))
    table = pair_table(records)
    assert list(table.columns) == PAIR_COLUMNS
    got = [tuple(_plain(v) for v in row) for row in table.itertuples(index=False)]
    want = [tuple(_plain(v) for v in row) for row in _reference(records)]
    assert got == want
    assert str(table["severity"].dtype) == "Int64" and table["failed"].dtype == bool


def test_bootstrap_cis_do_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory per chunk is bounded (`_MAX_CELLS`); the draws, and so the CIs, are the
    same bit for bit whatever the bound."""
    import numpy as np

    import assay.metrics._bootstrap as bs
    import assay.metrics._resampling as rs

    sample = np.random.default_rng(2).random((5000, 2))
    found = set()
    for cells in (1 << 24, 1 << 20, 65_536, 12_345):
        monkeypatch.setattr(rs, "_MAX_CELLS", cells)
        lo, hi = bs.bootstrap_mean_cis(sample, n_boot=400, seed=[1, 2, 3])
        found.add((*lo.tolist(), *hi.tolist()))
    assert len(found) == 1


@pytest.mark.parametrize("seed", range(10))
def test_metrics_from_columns_equal_the_pair_table_means(seed: int) -> None:
    """force_metrics works on the columns, not the DataFrame: its point estimates are the
    pair table's group means."""
    from assay.metrics import force_metrics

    records = _records(random.Random(seed))
    table = pair_table(records)
    rows = force_metrics(records, n_boot=0).rows
    assert rows
    for row in rows:
        sub = table[table["judge_id"] == row.judge_id]
        if row.dataset != "all":
            sub = sub[sub["dataset"] == row.dataset]
        if row.group_by == "axis":
            axis = sub["axis"].where(sub["axis"].notna(), "unknown")
            sub = sub[axis == row.group]
        elif row.group_by == "severity":
            sev = sub["severity"].astype("object").where(sub["severity"].notna(), None)
            sub = sub[[("unrated" if s is None else str(s)) == row.group for s in sev]]
        assert row.n == len(sub) and row.n_failed == int(sub["failed"].sum())
        assert row.mvr == pytest.approx(sub["violation"].mean(), abs=1e-12)
        assert row.fs == pytest.approx(sub["margin"].mean(), abs=1e-12)
