"""Juries (`[[juries]]`, Verga et al. 2024): votes against a plain pandas/numpy
recomputation on generated data, ties, missing members and the quorum, pairwise votes,
weights fitted on a dev split and judged on the rest, and the spec's checks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from sklearn.metrics import accuracy_score

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.errors import SpecError
from assay.juries import JurySpec, check_juries, jury_records
from assay.juries._vote import plurality, round_half_up
from assay.metrics import item_metrics

LABELS = ["supported", "partial", "unsupported"]


def _rec(item: str, judge: str, **fields: Any) -> ItemJudgmentRecord:
    return ItemJudgmentRecord.model_validate(
        {"dataset": "d", "item_id": item, "judge_id": judge, "status": "ok", **fields}
    )


def _generated(
    n_items: int, members: Sequence[str], seed: int, missing: float = 0.2
) -> tuple[list[ItemRecord], list[ItemJudgmentRecord], pd.DataFrame]:
    """Items with gold, each member's label (some missing: parse errors or no record)
    and the same votes as a DataFrame (None where absent), items x members."""
    rng = np.random.default_rng(seed)
    gold = rng.choice(LABELS, n_items)
    items = [
        ItemRecord(
            dataset="d", item_id=f"i{i}", gold_label=str(g), split="dev" if i % 3 else "test"
        )
        for i, g in enumerate(gold)
    ]
    records, table = [], {}
    for m, member in enumerate(members):
        right = 0.4 + 0.15 * m  # members of different skill
        labels = np.where(rng.random(n_items) < right, gold, rng.choice(LABELS, n_items))
        gone = rng.random(n_items) < missing
        column: list[str | None] = []
        for i, (label, absent) in enumerate(zip(labels, gone, strict=True)):
            if absent and i % 2:
                records.append(_rec(f"i{i}", member, status="parse_error"))
            if absent:
                column.append(None)  # a failed judgment or none at all: no vote
                continue
            records.append(_rec(f"i{i}", member, label=str(label), score=LABELS.index(label) / 2))
            column.append(str(label))
        table[member] = column
    return items, records, pd.DataFrame(table, index=[it.item_id for it in items])


def _by_item(records: Sequence[ItemJudgmentRecord], judge: str) -> dict[str, Any]:
    return {r.item_id: r for r in records if r.judge_id == judge}


def _pandas_plurality(row: pd.Series, weights: dict[str, float] | None) -> Any:
    """The independent form of the rule: group the present votes, sum their weights,
    take the greatest; among ties, the label of the first member (column order)."""
    present = row.dropna()
    w = pd.Series({m: (weights or {}).get(m, 1.0) for m in present.index})
    totals = w.groupby(present).sum()
    tied = totals.index[np.isclose(totals, totals.max())]
    return next(label for label in present if label in set(tied))


MEMBERS = ["j0", "j1", "j2", "j3", "j4"]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("quorum", [None, 1, 5])
def test_majority_agrees_with_a_pandas_recomputation(seed: int, quorum: int | None) -> None:
    items, records, table = _generated(200, MEMBERS, seed)
    jury = JurySpec(name="jury", members=MEMBERS, min_members=quorum)
    got = _by_item(jury_records(items, records, [jury]), "jury")
    need = quorum or 3
    for item_id, row in table.iterrows():
        if row.notna().sum() < need:
            assert item_id not in got  # below the quorum: no verdict, no record
            continue
        assert got[item_id].label == _pandas_plurality(row, None)
        assert got[item_id].jury.votes == row.dropna().to_dict()
    assert len(got) == int((table.notna().sum(axis=1) >= need).sum())


@pytest.mark.parametrize("seed", [3, 4])
def test_explicit_weights_agree_with_a_pandas_recomputation(seed: int) -> None:
    items, records, table = _generated(200, MEMBERS, seed)
    weights = dict(
        zip(MEMBERS, np.random.default_rng(seed).uniform(0.1, 2, 5).tolist(), strict=True)
    )
    jury = JurySpec(name="w", members=MEMBERS, vote="weighted", weights=weights, min_members=1)
    got = _by_item(jury_records(items, records, [jury]), "w")
    for item_id, row in table.iterrows():
        if row.notna().any():
            assert got[item_id].label == _pandas_plurality(row, weights)
            present = row.dropna().index
            scores = [LABELS.index(row[m]) / 2 for m in present]
            expected = np.average(scores, weights=[weights[m] for m in present])
            assert got[item_id].score == pytest.approx(expected)


def test_mean_of_scores_agrees_with_numpy() -> None:
    rng = np.random.default_rng(7)
    raw = rng.integers(1, 6, size=(200, 3)).astype(float)
    raw[rng.random(raw.shape) < 0.25] = np.nan
    items = [ItemRecord(dataset="d", item_id=f"i{i}", gold_score=3.0) for i in range(200)]
    records = [
        _rec(
            f"i{i}",
            f"m{j}",
            label=str(int(raw[i, j])),
            raw_score=raw[i, j],
            score=(raw[i, j] - 1) / 4,
        )
        for i in range(200)
        for j in range(3)
        if not np.isnan(raw[i, j])
    ]
    jury = JurySpec(name="avg", members=["m0", "m1", "m2"], vote="mean", min_members=2)
    got = _by_item(jury_records(items, records, [jury]), "avg")
    present = (~np.isnan(raw)).sum(axis=1)
    means = np.array(
        [np.nanmean(row) if k >= 2 else np.nan for row, k in zip(raw, present, strict=True)]
    )
    for i in range(200):
        if present[i] < 2:
            assert f"i{i}" not in got
            continue
        r = got[f"i{i}"]
        assert r.raw_score == pytest.approx(means[i])
        assert r.score == pytest.approx((means[i] - 1) / 4)
        assert r.label == str(math.floor(means[i] + 0.5))  # rounded half up


def test_rounding_half_up_not_to_even() -> None:
    assert [round_half_up(x) for x in (2.5, 3.5, 2.49, -0.5)] == [3, 4, 2, 0]


@pytest.mark.parametrize(
    ("votes", "weights", "winner"),
    [
        (["yes", "no"], None, "yes"),  # 1-1: the first member's
        (["no", "yes", "yes", "no"], None, "no"),  # 2-2: first member among the tied
        (["a", "b", "c", "b", "c"], None, "b"),  # b and c tie; member 2 said b
        (["yes", "no", "no"], [2.0, 1.0, 1.0], "yes"),  # 2 vs 2: first member
        (["yes", "no", "no"], [1.0, 1.0, 1.0], "no"),
    ],
)
def test_ties_go_to_the_earliest_member_among_the_tied(
    votes: list[str], weights: list[float] | None, winner: str
) -> None:
    assert plurality(votes, weights) == winner


def test_a_member_without_an_ok_judgment_does_not_vote() -> None:
    items = [ItemRecord(dataset="d", item_id="x", gold_label="yes")]
    records = [
        _rec("x", "a", status="api_error"),
        _rec("x", "b", label="no"),
        _rec("x", "c", label="yes"),
    ]
    tie = jury_records(items, records, [JurySpec(name="j", members=["a", "b", "c"])])
    assert [(r.label, r.jury.votes) for r in tie] == [("no", {"b": "no", "c": "yes"})]
    strict = JurySpec(name="j", members=["a", "b", "c"], min_members=3)
    assert jury_records(items, records, [strict]) == []


def test_pairwise_juries_vote_on_preferences_in_each_order() -> None:
    items = [ItemRecord(dataset="d", item_id="p", pairwise=True, gold_preference="A")]
    records = [
        _rec("p", "a", order="ab", label="a", preference="A"),
        _rec("p", "b", order="ab", label="a", preference="A"),
        _rec("p", "c", order="ab", label="tie", preference="tie"),
        _rec("p", "a", order="ba", label="a", preference="B"),
        _rec("p", "b", order="ba", label="b", preference="A"),
        _rec("p", "c", order="ba", label="b", preference="A"),
    ]
    got = jury_records(items, records, [JurySpec(name="j", members=["a", "b", "c"])])
    assert {(r.order, r.preference, r.label) for r in got} == {("ab", "A", "a"), ("ba", "A", "b")}
    report = item_metrics(items, [*records, *got], n_boot=0)
    row = next(r for r in report.rows if r.judge_id == "j")
    assert row.stats["position_consistency"] == 1.0 and row.stats["accuracy"] == 1.0


def test_weights_fitted_on_dev_are_log_odds_of_accuracy_and_judged_on_test() -> None:
    items, records, table = _generated(600, MEMBERS, seed=11, missing=0.1)
    gold = pd.Series({it.item_id: it.gold_label for it in items})
    dev = [it.item_id for it in items if it.split == "dev"]
    jury = JurySpec(name="fit", members=MEMBERS, vote="weighted", fit_on="dev")
    got = jury_records(items, records, [jury])
    # the weights: max(0, ln((K-1) p / (1-p))), p = (correct + 1) / (n + 2) on dev
    raw = {}
    for m in MEMBERS:
        votes = table.loc[dev, m].dropna()
        p = ((votes == gold[votes.index]).sum() + 1) / (len(votes) + 2)
        raw[m] = max(0.0, math.log(2 * p / (1 - p)))  # K = 3 labels
    total = sum(raw.values())
    assert got[0].jury.weights == pytest.approx({m: w / total for m, w in raw.items()}, abs=1e-6)
    assert got[0].jury.fit_on == "dev" and {r.item_id for r in got}.isdisjoint(dev)
    report = item_metrics(items, [*records, *got], n_boot=0)
    row = next(r for r in report.rows if r.judge_id == "fit")
    test = [it for it in items if it.split != "dev"]
    assert row.n_items == len(test) and "dev" in (row.evaluated_on or "")
    labels = {r.item_id: r.label for r in got}
    scored = [it for it in test if it.item_id in labels]
    expected = accuracy_score(
        [it.gold_label for it in scored], [labels[it.item_id] for it in scored]
    )
    assert row.stats["accuracy"] == pytest.approx(expected)
    # the better members weigh more: skill grows with the member's index
    weights = got[0].jury.weights or {}
    assert weights["j4"] > weights["j0"]


def test_fitted_on_gold_scores_the_weights_are_inverse_mse() -> None:
    rng = np.random.default_rng(5)
    truth = rng.uniform(1, 5, 120)
    noise = {"a": 0.2, "b": 1.0, "c": 2.0}
    items = [
        ItemRecord(
            dataset="d", item_id=f"i{i}", gold_score=float(t), split="dev" if i < 60 else "test"
        )
        for i, t in enumerate(truth)
    ]
    values = {m: truth + rng.normal(0, s, truth.size) for m, s in noise.items()}
    records = [
        _rec(f"i{i}", m, raw_score=float(v[i])) for m, v in values.items() for i in range(120)
    ]
    jury = JurySpec(name="w", members=list(noise), vote="weighted", fit_on="dev")
    got = jury_records(items, records, [jury])
    inv = {m: 1 / np.mean((v[:60] - truth[:60]) ** 2) for m, v in values.items()}
    total = sum(inv.values())
    assert got[0].jury.weights == pytest.approx({m: w / total for m, w in inv.items()}, abs=1e-6)
    w = np.array([got[0].jury.weights[m] for m in noise])
    first = got[0]
    stack = np.array([values[m][int(first.item_id[1:])] for m in noise])
    assert first.raw_score == pytest.approx(float(np.average(stack, weights=w)))


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"members": ["a"]}, "at least 2"),
        ({"members": ["a", "a"]}, "listed twice"),
        ({"vote": "weighted"}, "exactly one of fit_on or weights"),
        ({"vote": "weighted", "fit_on": "dev", "weights": {"a": 1, "b": 1}}, "exactly one"),
        ({"vote": "weighted", "weights": {"a": 1}}, "missing ['b']"),
        ({"vote": "weighted", "weights": {"a": 0, "b": 0}}, "at least one > 0"),
        ({"fit_on": "dev"}, "weighted"),
        ({"min_members": 3}, "exceeds"),
        ({"name": "x#1"}, "pattern"),
        ({"vote": "median"}, "majority"),
    ],
)
def test_the_block_is_checked(block: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        JurySpec.model_validate({"name": "j", "members": ["a", "b"], **block})


def test_records_of_other_statuses_are_never_written() -> None:
    items, records, _ = _generated(50, MEMBERS, seed=9)
    got = jury_records(items, records, [JurySpec(name="j", members=MEMBERS)])
    assert got and all(r.status is Status.OK and r.request_key is None for r in got)
    assert all("request_key" not in r.model_dump() and r.model is None for r in got)


def _check(jury: JurySpec, items: list[ItemRecord], judges_of: dict[str, list[str]]) -> str:
    with pytest.raises(SpecError) as info:
        check_juries([jury], items, judges_of, "spec.toml")
    return str(info.value)


def test_the_run_checks_refuse_what_cannot_vote() -> None:
    single = [ItemRecord(dataset="s", item_id="1", gold_label="yes", split="dev")]
    pair = [ItemRecord(dataset="p", item_id="1", pairwise=True, gold_preference="A")]
    judges = {"s": ["a", "b"], "p": ["x", "y"]}
    mean = JurySpec(name="j", members=["x", "y"], vote="mean")
    assert "juries[0].vote" in _check(mean, single + pair, judges)
    mixed = JurySpec(name="j", members=["a", "x"])
    assert "judge no items dataset together" in _check(mixed, single + pair, judges)
    every = JurySpec(name="j", members=["a", "b"], vote="weighted", fit_on="dev")
    assert "none left to judge it on" in _check(every, single, judges)
    check_juries([JurySpec(name="j", members=["x", "y"])], single + pair, judges, "spec.toml")
