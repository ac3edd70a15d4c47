"""The failure budget applies to every stage on its own (judge, items, decompose,
verify, gate): a stage over its limit ends the run `failed` (exit 1), naming the stage,
with everything recorded kept; and a report whose table is empty says why, in every
format."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import test_items_run as items_run
from _cli import invoke
from test_factuality_run import ANSWERS, responder, write_spec

from assay.runs import read_json
from assay.testing import Behavior, FakeOpenAIServer, http_error, reply

N_SENTENCES = 6  # of ANSWERS
PAIRS = """
[[datasets]]
name = "pairs"
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
"""


def _unparsable(body: dict[str, Any]) -> Behavior:
    return reply("Sorry, the sentence is unclear to me")


def _run(spec: Path, out: Path) -> tuple[int, str, str]:
    return invoke(["run", str(spec), "--output-dir", str(out), "--no-progress", "--no-cache"])


def test_every_decomposition_failing_fails_the_run(tmp_path: Path) -> None:
    """6 of 6 sentences unparsable: not `complete` with an empty table. The 120
    judgments of a ForceBench baseline in the same run do not dilute the budget."""
    with FakeOpenAIServer(responder=_unparsable) as srv:
        code, out, err = _run(write_spec(tmp_path, srv.base_url, extra=PAIRS), tmp_path / "run")
    assert code == 1, out + err
    manifest = read_json(tmp_path / "run" / "manifest.json")
    assert manifest["status"] == "failed"
    message = manifest["message"]
    # the stage stops at its first failure over the limit; calls in flight still land
    pattern = rf"decompose: (\d) of {N_SENTENCES} sentences failed \(parse_error \1\)"
    found = re.match(pattern, message)
    assert found, message
    assert "failure limit of 0" in message and message in out + err
    lines = (tmp_path / "run" / "sentences.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == int(found.group(1)) >= 1  # every failure kept
    assert (tmp_path / "run" / "metrics.json").exists()
    assert read_json(tmp_path / "run" / "metrics.json")["forcebench"]["rows"]


def _verifier_down(body: dict[str, Any]) -> Behavior:
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    return http_error(401) if "Statement:" in text else responder(body)


def test_a_stage_over_its_own_limit_fails_though_the_run_as_a_whole_is_under(
    tmp_path: Path,
) -> None:
    """The LLM verifier fails on every claim (401): at most 5 of 136 planned over the
    whole run is under 5%, but any of the verify stage's 10 is over its limit of 0."""
    with FakeOpenAIServer(responder=_verifier_down) as srv:
        code, out, err = _run(write_spec(tmp_path, srv.base_url, extra=PAIRS), tmp_path / "run")
    assert code == 1, out + err
    message = read_json(tmp_path / "run" / "manifest.json")["message"]
    assert re.match(r"verify: (\d) of 10 verifications failed \(api_error \1\)", message), message
    assert "--retry-errors" in message


@pytest.fixture(scope="module")
def undecomposed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A factuality run whose every decomposition failed (failure budget lifted so
    that it completes): its factuality table is empty."""
    tmp = tmp_path_factory.mktemp("undecomposed")
    with FakeOpenAIServer(responder=_unparsable) as srv:
        spec = write_spec(tmp, srv.base_url, extra="[failure]\nmax_failed_fraction = 1.0\n")
        code, out, err = _run(spec, tmp / "run")
    assert code == 0, out + err
    return tmp / "run"


WHY = f"no claim to verify: {N_SENTENCES} of {N_SENTENCES} sentences failed to decompose"


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "html"])
def test_an_empty_table_says_why_in_every_format(undecomposed: Path, fmt: str) -> None:
    target = undecomposed / f"report.{fmt}"
    code, _, err = invoke(["report", str(undecomposed), "-f", fmt, "-o", str(target)])
    assert code == 0, err
    text = target.read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(text)["factuality"]["empty"].startswith(WHY)
    elif fmt == "csv":
        frame = pd.read_csv(io.StringIO(text))
        (row,) = frame[frame["section"] == "factuality"].to_dict("records")
        assert row["group"].startswith(WHY) and row["metric"] == "rows" and row["value"] == 0
    else:
        assert WHY in text
    assert "parse_error" in text and len(ANSWERS) == 3


def test_items_failures_are_weighed_against_the_items_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One of 12 item judgments fails (401): over the items stage's limit of 0, though
    1 of 132 over the whole run (120 ForceBench judgments) is under 5%."""
    monkeypatch.setenv(items_run.KEY_ENV, "sk-items-test-key-123456")

    def one_down(body: dict[str, Any]) -> Behavior:
        text = body["messages"][-1]["content"]
        return http_error(401) if "Aspirin" in text else items_run._says_supported(body)

    items_run._single_csv(tmp_path)
    with FakeOpenAIServer(responder=one_down) as srv:
        spec = items_run._spec(tmp_path, srv.base_url, items_run.SINGLE + PAIRS)
        code, out, err = _run(spec, tmp_path / "run")
    assert code == 1, out + err
    message = read_json(tmp_path / "run" / "manifest.json")["message"]
    assert message.startswith("items: 1 of 12 item judgments failed (api_error 1)"), message


def test_the_summary_line_of_a_run_stopped_before_verifying_is_not_blank(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_unparsable) as srv:
        code, out, err = _run(write_spec(tmp_path, srv.base_url), tmp_path / "run")
    assert code == 1, out + err
    assert f"failed: no judgment or verification recorded → {tmp_path / 'run'}" in out


def test_the_report_of_a_failed_run_says_it_failed_and_why(tmp_path: Path) -> None:
    """table and markdown show the run's status message when it did not complete (its
    tables are what was recorded, not a finished result)."""
    with FakeOpenAIServer(responder=_unparsable) as srv:
        _run(write_spec(tmp_path, srv.base_url, extra=PAIRS), tmp_path / "run")
    message = read_json(tmp_path / "run" / "manifest.json")["message"]
    code, table, err = invoke(["report", str(tmp_path / "run")])
    assert code == 0, err
    assert table.splitlines()[1] == f"failed: {message}"
    code, markdown, err = invoke(["report", str(tmp_path / "run"), "-f", "markdown"])
    assert markdown.startswith(f"> **failed: {message}**\n")
