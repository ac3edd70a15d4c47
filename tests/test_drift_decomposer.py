"""The decomposer's drift in a re-run (answers split into byte-identical sentences and
claims, the claims count of each run) and `--fail-on-drift`: none against the
deterministic loopback server (exit 0), measured against a server whose decomposition
changes (exit 3, with `--drift-only` too; 0 without the flag)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_factuality_run import responder, run, write_spec

from assay.compare._drift import drift_report
from assay.testing import Behavior, FakeOpenAIServer, reply

DRIFT_EXIT = 3


class Changing:
    """The pipeline's fake model; once `changed`, "Ice is hot." yields one claim."""

    changed = False

    def __call__(self, body: dict[str, Any]) -> Behavior:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        if self.changed and re.search(r'Target sentence:\n"""\nIce is hot\.\n"""', text):
            return reply("- Ice is hot.")
        return responder(body)


@pytest.fixture
def changing() -> Iterator[tuple[FakeOpenAIServer, Changing]]:
    model = Changing()
    with FakeOpenAIServer(responder=model) as srv:
        yield srv, model


def _original(tmp: Path, srv: FakeOpenAIServer) -> Path:
    out = tmp / "run"
    assert run(write_spec(tmp, srv.base_url), out).status == "complete"
    return out


def _claims_by_answer(run_dir: Path) -> dict[str, list[str]]:
    """Each answer's claim texts, read straight from claims.jsonl (file order)."""
    out: dict[str, list[str]] = defaultdict(list)
    for line in (run_dir / "claims.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out[record["answer_id"]].append(record["claim"])
    return out


def test_a_deterministic_decomposer_reruns_with_no_drift_and_exit_0(
    changing: tuple[FakeOpenAIServer, Changing], tmp_path: Path
) -> None:
    srv, _ = changing
    original = _original(tmp_path, srv)
    new = tmp_path / "new"
    argv = ["rerun", str(original), "-o", str(new), "--no-progress", "--fail-on-drift"]
    code, out, err = invoke([*argv, "-f", "json"])
    assert code == 0, out + err
    data = json.loads(out)
    assert data["drift_free"] is True
    (decomposer,) = data["decomposers"]
    assert decomposer["compared"] == 3 and decomposer["only_original"] == 0
    assert decomposer["identical_sentences"] == decomposer["identical_claims"] == 1.0
    assert decomposer["claims_original"] == decomposer["claims_rerun"] == 5
    assert decomposer["changed"] == []
    code, out, err = invoke(["rerun", "--drift-only", str(original), str(new), "--fail-on-drift"])
    assert code == 0, out + err
    assert "identical claims" in out and "no drift:" in out


def test_a_changed_decomposition_is_measured_and_fails_with_fail_on_drift(
    changing: tuple[FakeOpenAIServer, Changing], tmp_path: Path
) -> None:
    srv, model = changing
    original = _original(tmp_path, srv)
    model.changed = True
    new = tmp_path / "new"
    argv = ["rerun", str(original), "-o", str(new), "--no-progress", "--fail-on-drift"]
    code, out, err = invoke(argv)
    assert code == DRIFT_EXIT, out + err
    assert "1 of 1 decomposers split answers otherwise" in out
    assert (new / "metrics.json").is_file()  # the re-run itself completed
    report = drift_report(original, new, n_boot=100)
    (decomposer,) = report.decomposers
    before, after = _claims_by_answer(original), _claims_by_answer(new)
    answers = sorted(set(before) | set(after) | {"a3"})  # a3 has sentences, no claims
    same = [before.get(a, []) == after.get(a, []) for a in answers]
    assert decomposer.compared == len(answers) == 3
    assert decomposer.identical_claims == pytest.approx(sum(same) / len(same))  # 2/3
    assert decomposer.identical_sentences == 1.0  # the same sentences, split otherwise
    assert decomposer.claims_original == sum(map(len, before.values())) == 5
    assert decomposer.claims_rerun == sum(map(len, after.values())) == 4
    assert decomposer.claims_delta == -1 and not decomposer.drift_free
    assert [c.split("/")[1] for c in decomposer.changed] == ["a2"]
    assert not report.drift_free
    drift_only = ["rerun", "--drift-only", str(original), str(new), "-f", "json"]
    code, out, _ = invoke(drift_only)
    assert code == 0 and json.loads(out)["decomposers"][0]["claims_rerun"] == 4
    code, out, _ = invoke([*drift_only, "--fail-on-drift"])
    assert code == DRIFT_EXIT and json.loads(out)["drift_free"] is False
