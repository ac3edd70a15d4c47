"""A session killed before it wrote its manifest (`kill -9`: the manifest still says
`running`, its spend unwritten) does not reset the spend: a resumed run counts at least
what the records show, so the caps hold across the crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_budget import records, run, write_spec

from assay.runs.store._spend import recorded_spend
from assay.testing import FakeOpenAIServer


def _as_if_killed(tmp: Path) -> None:
    """The manifest as a session leaves it when killed: `running`, no spend of its own."""
    path = tmp / "out" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["status"] = "running"
    manifest.pop("budget", None)
    path.write_text(json.dumps(manifest), encoding="utf-8")


def test_the_records_spend_counts_after_a_killed_session(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url)
        first = run(spec, tmp_path, max_requests=6)
        sent = server.stats.total
        kept = records(tmp_path)
        _as_if_killed(tmp_path)
        again = run(spec, tmp_path, max_requests=6)
        assert server.stats.total == sent  # the cap was spent before the crash
        more = run(spec, tmp_path, max_requests=sent + 3)
        assert server.stats.total == sent + 3
    assert first.status == again.status == more.status == "budget_exhausted"
    usd, requests = recorded_spend(tmp_path / "out")
    assert requests == sent + 3
    assert usd == pytest.approx(sum(r.usage.cost_usd for r in records(tmp_path)))
    assert len(kept) == sent


def test_a_cleanly_ended_session_keeps_the_manifests_spend(tmp_path: Path) -> None:
    """Not `running`: the manifest's figures stand (the records are not read)."""
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url)
        run(spec, tmp_path, max_requests=4)
        run(spec, tmp_path, max_requests=8)
        assert server.stats.total == 8
