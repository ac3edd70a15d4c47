"""Juries in a run: three offline baseline judges and two juries over them, visible as
judges in the run's metrics, `assay compare`, the report's JSON, the Python frames and
the viewer's index; recomputed without growing the file on resume and by `assay
recompute`; spec errors named by file and field."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from starlette.testclient import TestClient

from assay.compare import compare_runs, report_frames
from assay.core.records import ItemJudgmentRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, iter_jsonl, read_json
from assay.errors import SpecError
from assay.runs import RunOptions, run_spec
from assay.view.index import JudgmentQuery, ViewIndex, run_id
from assay.view.server import create_app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "items" / "claims.csv"
MEMBERS = ["baseline:token-overlap", "baseline:entity-overlap", "baseline:forcecheck-rule"]
JURIES = f"""
[[juries]]
name = "jury"
members = {json.dumps(MEMBERS)}

[[juries]]
name = "fitted"
members = {json.dumps(MEMBERS)}
vote = "weighted"
fit_on = "dev"
"""


def _spec(tmp: Path, juries: str = JURIES, split: bool = True) -> Path:
    with EXAMPLE.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for i, row in enumerate(rows):
        row["part"] = "dev" if i % 2 == 0 else "test"
    with (tmp / "claims.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    baselines = "".join(f'[[baselines]]\nname = "{m.split(":")[1]}"\n' for m in MEMBERS)
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""
name = "juries"
bootstrap = 200
[[datasets]]
kind = "items"
name = "claims"
path = "claims.csv"
gold_label_column = "label"
{'split_column = "part"' if split else ""}
variables = {{ claim = "response", evidence = "context" }}
{baselines}
{juries}
""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path) -> Path:
    outcome = run_spec(spec, RunOptions(output_dir=str(out), use_cache=False, progress=False))
    assert outcome.status == "complete", outcome.message
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("juries")
    return _run(_spec(tmp), tmp / "run")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    metrics = read_json(run_dir / "metrics.json")
    return {r["judge_id"]: r for r in metrics["items"]["rows"]}


def test_juries_are_judges_of_the_run_with_no_request(run: Path) -> None:
    records = list(iter_jsonl(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord))
    jury = [r for r in records if r.judge_id == "jury"]
    assert len(jury) == 16 and all(r.jury is not None and r.model is None for r in jury)
    assert all(r.request_key is None and r.attempts == 0 for r in jury)
    fitted = [r for r in records if r.judge_id == "fitted"]
    assert len(fitted) == 8 and {r.jury.fit_on for r in fitted if r.jury} == {"dev"}
    rows = _rows(run)
    assert rows["jury"]["n_items"] == 16 and rows["jury"]["evaluated_on"] is None
    assert rows["fitted"]["n_items"] == 8 and "'dev'" in rows["fitted"]["evaluated_on"]
    assert rows["fitted"]["coverage"] == 1.0


def test_a_majority_jury_matches_the_members_vote(run: Path) -> None:
    records = list(iter_jsonl(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord))
    by: dict[str, dict[str, str | None]] = {}
    for r in records:
        by.setdefault(r.item_id, {})[r.judge_id] = r.label
    for labels in by.values():
        votes = [labels[m] for m in MEMBERS]
        winner = max(votes, key=lambda v: (votes.count(v), -votes.index(v)))
        assert labels["jury"] == winner


def test_compare_report_frames_and_viewer_show_the_juries(run: Path) -> None:
    code, out, err = invoke(["compare", str(run), "--metric", "accuracy"])
    assert code == 0, err
    assert "jury " in out and "fitted" in out
    code, out, err = invoke(["report", str(run), "-f", "json"])
    assert code == 0, err
    judges = {r["judge_id"] for r in json.loads(out)["items"]["rows"]}
    assert {"jury", "fitted"} <= judges
    report = compare_runs([run])
    frames = report_frames(report)
    assert {"jury", "fitted"} <= set(frames["ablation"]["judge"])
    panel = {m for row in report.panels for m in row.members}  # juries repeat their members
    assert set(MEMBERS) <= panel and not panel & {"jury", "fitted"}
    with ViewIndex([run.parent]) as index:
        page = index.query(run_id(run), JudgmentQuery(judge=["fitted"], page_size=100))
    assert page.total == 8 and {r.judge_id for r in page.rows} == {"fitted"}


def test_resume_and_recompute_leave_the_jury_records_as_they_are(run: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(run, tmp_path / "copy")
    spec = Path(read_json(copy / "manifest.json")["spec_path"])
    before = _sha(copy / ITEM_JUDGMENTS_FILE)
    _run(spec, copy)
    assert _sha(copy / ITEM_JUDGMENTS_FILE) == before
    for command in ("recompute", "reparse"):
        code, _, err = invoke([command, str(copy)])
        assert code == 0, err
        assert _sha(copy / ITEM_JUDGMENTS_FILE) == before, command


def test_recompute_votes_again_after_a_members_record_changes(run: Path, tmp_path: Path) -> None:
    """A later line of a member (as a redo would append) changes the jury's verdict."""
    copy = shutil.copytree(run, tmp_path / "copy")
    records = list(iter_jsonl(copy / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord))
    item = next(r.item_id for r in records if r.judge_id == "jury")
    flips = []
    for r in records:
        if r.item_id == item and r.judge_id in MEMBERS[:2]:
            label = "supported" if r.label == "unsupported" else "unsupported"
            flips.append(r.model_copy(update={"label": label}))
    with (copy / ITEM_JUDGMENTS_FILE).open("a", encoding="utf-8") as fh:
        fh.writelines(r.model_dump_json() + "\n" for r in flips)
    code, _, err = invoke(["recompute", str(copy)])
    assert code == 0, err
    latest = {r.key: r for r in iter_jsonl(copy / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)}
    jury = next(r for k, r in latest.items() if k[1] == item and k[3] == "jury")
    assert jury.label == flips[0].label and jury.jury is not None
    assert sum(1 for k in latest if k[3] == "jury") == 16  # rewritten, not appended
    lines = (copy / ITEM_JUDGMENTS_FILE).read_text(encoding="utf-8").splitlines()
    assert sum('"judge_id":"jury"' in line for line in lines) == 16


def _error(tmp: Path, juries: str, split: bool = True) -> str:
    with pytest.raises(SpecError) as info:
        run_spec(_spec(tmp, juries, split), RunOptions(output_dir=str(tmp / "out"), progress=False))
    return str(info.value)


@pytest.mark.parametrize(
    ("juries", "field", "words"),
    [
        ('[[juries]]\nname = "j"\nmembers = ["baseline:token-overlap", "gpt"]',
         "juries[0].members", "no items judge 'gpt'"),
        ('[[juries]]\nname = "baseline:citation-presence"\nmembers = ["baseline:token-overlap", '
         '"baseline:entity-overlap"]\n[[baselines]]\nname = "citation-presence"',
         "juries[0].name", "has the id of a judge"),
        ('[[juries]]\nname = "j"\nmembers = ["baseline:token-overlap", '
         '"baseline:entity-overlap"]\nvote = "weighted"\nfit_on = "train"',
         "juries[0].fit_on", "no item with gold in split 'train'"),
        ('[[juries]]\nname = "j"\nmembers = ["baseline:token-overlap", '
         '"baseline:entity-overlap"]\nvote = "weighted"',
         "juries[0]", "exactly one of fit_on or weights"),
    ],
)  # fmt: skip
def test_spec_errors_name_the_file_and_field(
    tmp_path: Path, juries: str, field: str, words: str
) -> None:
    message = _error(tmp_path, juries)
    assert words in message and field in message and "spec.toml" in message
    assert "\n" not in message


def test_a_fit_split_needs_a_split_column(tmp_path: Path) -> None:
    juries = (
        '[[juries]]\nname = "j"\nmembers = ["baseline:token-overlap", '
        '"baseline:entity-overlap"]\nvote = "weighted"\nfit_on = "dev"'
    )
    assert "set split_column" in _error(tmp_path, juries, split=False)


def test_juries_need_an_items_dataset(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[[datasets]]\npath = "builtin:forcebench-mini"\n[[baselines]]\nname = "token-overlap"\n'
        '[[juries]]\nname = "j"\nmembers = ["baseline:token-overlap", "x"]\n',
        encoding="utf-8",
    )
    code, _, err = invoke(["validate", str(spec)])
    assert code != 0 and "juries" in err and 'kind = "items"' in err


def test_reports_say_where_a_fitted_jury_is_judged(run: Path) -> None:
    for fmt in ("table", "markdown", "html"):
        code, out, err = invoke(["report", str(run), "-f", fmt])
        assert code == 0, err
        if fmt == "html":  # written to a file, whose path is printed
            out = Path(out.strip()).read_text(encoding="utf-8").replace("&#39;", "'")
        assert "fitted: items not in split 'dev'" in out, fmt


def test_juries_sit_out_of_the_judge_panels(run: Path) -> None:
    panels = read_json(run / "metrics.json")["items"].get("panels", [])
    members = {m for panel in panels for m in panel["members"]}
    assert set(MEMBERS) <= members and not members & {"jury", "fitted"}


def test_the_viewers_item_page_shows_how_the_jury_voted(run: Path) -> None:
    token = "jury-view-token-0123456789"
    app = create_app([run.parent], token=token, read_only=True, annotator="t")
    with TestClient(app, headers={"X-Assay-Token": token}) as client:
        page = client.get(f"/runs/{run_id(run)}/items/claims/c04")
    assert page.status_code == 200
    html = page.text
    assert "A jury: no model was asked" in html and "weights fitted on split dev" in html
    assert html.count('class="jury"') == 2  # jury and fitted; c04 is a test item
