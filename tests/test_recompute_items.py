"""`assay recompute` counts an items run's judgments where they are: item_judgments.jsonl.

Every run creates judgments.jsonl up front; an items-only run leaves it empty. The
planned judgments of a run are its ForceBench pair members and its items-dataset
judgments together, so a finished items run must stay complete after a recompute, and
a line missing from item_judgments.jsonl must make it incomplete, naming that file.
"""

from __future__ import annotations

import json
from pathlib import Path

from _cli import invoke

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compare-items.toml"


def _run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    code, _, err = invoke(["run", str(EXAMPLE), "--output-dir", str(out), "--no-progress"])
    assert code == 0, err
    assert (out / "judgments.jsonl").read_bytes() == b""  # the items run's empty pairs file
    return out


def test_a_finished_items_run_stays_complete_after_a_recompute(tmp_path: Path) -> None:
    run = _run(tmp_path)
    code, _, err = invoke(["recompute", str(run)])
    assert code == 0, err
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and not manifest.get("incomplete")
    assert metrics.get("complete", True) is True


def test_a_missing_item_judgment_makes_the_recompute_say_incomplete(tmp_path: Path) -> None:
    run = _run(tmp_path)
    records = run / "item_judgments.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    records.write_text("".join(lines[:-1]), encoding="utf-8")
    code, _, err = invoke(["recompute", str(run)])
    assert code != 0
    planned = len(lines)
    assert f"item_judgments.jsonl: {planned - 1} of {planned} planned judgments recorded" in err
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "interrupted"
