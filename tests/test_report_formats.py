"""`assay report` formats, -o, per-dataset columns, uncut numbers, and exact prompt text."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import AssayError
from assay.report import print_tables, tidy_frame
from assay.runs import METRICS_FILE, Runner, RunOptions, load_spec, read_json

BOTH_SPEC = Path(__file__).parents[1] / "examples/demo.toml"
LONG = "openai/" + "very-long-judge-name-" * 4 + "v"  # about 100 characters
TEXT_FORMATS = ("table", "json", "csv", "markdown")


@pytest.fixture(scope="module")
def both_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("both") / "run"
    options = RunOptions(output_dir=str(out), progress=False, use_cache=False)
    assert Runner(load_spec(BOTH_SPEC), options).run().status == "complete"
    return out


def _force_row(judge: str, dataset: str | None, mvr: float, ci: bool = True) -> dict[str, Any]:
    lo, hi = (mvr - 0.0512, mvr + 0.0734) if ci else (None, None)
    row = {"judge_id": judge, "group_by": "overall", "group": "all", "n": 40, "n_failed": 3}
    row |= {"mvr": mvr, "mvr_lo": lo, "mvr_hi": hi, "fs": mvr / 7, "fs_lo": lo, "fs_hi": hi}
    return row | ({"dataset": dataset} if dataset else {})


def _fact_row(verifier: str, dataset: str | None, macro: float) -> dict[str, Any]:
    row = {"verifier_id": verifier, "n_responses": 9, "zero_claim_rate": 0.125, "n_claims": 31}
    row |= {"n_scored": 30, "n_unscored": 1, "macro": macro, "macro_lo": macro - 0.1}
    row |= {"macro_hi": macro + 0.1, "micro": macro / 2, "micro_lo": None, "micro_hi": None}
    return row | ({"dataset": dataset} if dataset else {})


def _hand_run(tmp_path: Path, *, datasets: bool, judge: str = LONG) -> Path:
    """A run directory whose metrics.json is written by hand (the shape per-dataset runs
    will write: rows with a `dataset`, "all" for pooled)."""
    names = ["pubmed-claims", "legal-claims", "all"] if datasets else [None]
    force = [
        _force_row(f"{judge}-{k}", d, 0.1234567 + 0.2 * k + 0.01 * i, ci=k != 1)
        for i, d in enumerate(names)
        for k in range(3)
    ]
    fact = [_fact_row(f"{judge}-verifier", d, 0.4567891 + 0.1 * i) for i, d in enumerate(names)]
    metrics = {"forcebench": {"rows": force}, "factuality": {"scores": {"rows": fact}}}
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"name": "hand", "status": "complete"}))
    (run / METRICS_FILE).write_text(json.dumps(metrics))
    return run


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, ["report", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _shown_numbers(metrics: dict[str, Any]) -> list[str]:
    """Every estimate and CI bound of metrics.json at the precision the tables show."""
    rows = metrics["forcebench"]["rows"] + metrics["factuality"]["scores"]["rows"]
    keys = ("mvr", "mvr_lo", "mvr_hi", "fs", "fs_lo", "fs_hi", "macro", "macro_lo", "macro_hi")
    return [f"{r[k]:.3f}" for r in rows for k in (*keys, "micro") if r.get(k) is not None]


def _assert_numbers_whole(text: str, metrics: dict[str, Any]) -> None:
    assert not re.search(r"\d\.?…", text)  # no number cut to `0.…` (ids may be shortened)
    cells = set(re.split(r"[\s–]+", text))
    missing = [n for n in _shown_numbers(metrics) if n not in cells]
    assert missing == [], text


# ------------------------------------------------------------------------------ csv


def test_csv_is_one_tidy_table_equal_to_metrics_json(both_run: Path) -> None:
    frame = pd.read_csv(io.StringIO(_invoke(str(both_run), "-f", "csv")))
    metrics = read_json(both_run / METRICS_FILE)
    assert set(frame["section"]) == {"forcebench", "factuality"}
    assert set(frame["dataset"]) == {"all"}
    for row in metrics["forcebench"]["rows"]:
        sel = frame[
            (frame["section"] == "forcebench")
            & (frame["judge_or_verifier"] == row["judge_id"])
            & (frame["group_by"] == row["group_by"])
            & (frame["group"].astype(str) == row["group"])
            & (frame["metric"] == "mvr")
        ]
        assert len(sel) == 1
        got = sel.iloc[0]
        assert (got["value"], got["ci_low"], got["ci_high"]) == (
            row["mvr"],
            row["mvr_lo"],
            row["mvr_hi"],
        )
        assert got["n"] == row["n"]
    fact = metrics["factuality"]["scores"]["rows"][0]
    micro = frame[(frame["section"] == "factuality") & (frame["metric"] == "micro")].iloc[0]
    assert (micro["value"], micro["ci_low"], micro["ci_high"], micro["n"]) == (
        fact["micro"],
        fact["micro_lo"],
        fact["micro_hi"],
        fact["n_scored"],
    )
    wide = frame[frame["metric"] == "mvr"].pivot_table(
        index="judge_or_verifier", columns="group", values="value"
    )
    assert wide.shape[0] == len({r["judge_id"] for r in metrics["forcebench"]["rows"]})


def test_csv_per_dataset_and_null_cis_are_empty_cells(tmp_path: Path) -> None:
    run = _hand_run(tmp_path, datasets=True)
    text = _invoke(str(run), "-f", "csv")
    frame = pd.read_csv(io.StringIO(text))
    assert set(frame["dataset"]) == {"pubmed-claims", "legal-claims", "all"}
    micro = frame[frame["metric"] == "micro"]
    assert len(micro) == 3 and micro["ci_low"].isna().all() and micro["value"].notna().all()
    legal = frame[(frame["dataset"] == "legal-claims") & (frame["metric"] == "macro")]
    assert legal["value"].tolist() == [0.4567891 + 0.1]  # unrounded
    assert tidy_frame(read_json(run / METRICS_FILE)).shape[0] == len(frame)


# ------------------------------------------------------------------------------ -o FILE


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_output_file_written_in_every_format(both_run: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "sub" / f"report.{fmt}"
    assert _invoke(str(both_run), "-f", fmt, "-o", str(target)).strip() == str(target)
    written = target.read_text(encoding="utf-8")
    if fmt != "table":
        assert written == _invoke(str(both_run), "-f", fmt)
    else:
        assert "ForceBench" in written and "Factuality" in written and "─" not in written
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


def test_output_into_a_directory_is_one_line_error(both_run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(both_run), "-f", "csv", "-o", str(tmp_path)])
    assert isinstance(result.exception, AssayError)
    message = result.exception.render()
    assert "\n" not in message and str(tmp_path) in message and "directory" in message


# ------------------------------------------------------------------------------ tables


def test_piped_table_is_plain_and_never_cuts_numbers(tmp_path: Path) -> None:
    run = _hand_run(tmp_path, datasets=False)
    out = _invoke(str(run))  # CliRunner: not a terminal
    assert "─" not in out and "\x1b[" not in out
    assert LONG in out  # plain text keeps identifiers whole too
    _assert_numbers_whole(out, read_json(run / METRICS_FILE))


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_terminal_table_never_cuts_numbers(tmp_path: Path, width: int) -> None:
    run = _hand_run(tmp_path, datasets=True)
    metrics = read_json(run / METRICS_FILE)
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True, color_system=None)
    print_tables(console, metrics, str(run), detail=False)
    _assert_numbers_whole(buf.getvalue(), metrics)


def test_wide_terminal_shortens_ids_in_the_middle(tmp_path: Path) -> None:
    run = _hand_run(tmp_path, datasets=False)
    buf = io.StringIO()
    console = Console(file=buf, width=110, force_terminal=True, color_system=None)
    print_tables(console, read_json(run / METRICS_FILE), "run", detail=False)
    out = buf.getvalue()
    assert "─" in out and LONG not in out  # a rich table, with ids shortened …
    assert re.search(r"openai/very-lo\S*…\S*v-0", out)  # … keeping both ends


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_per_dataset_rows_shown_with_dataset_column(tmp_path: Path, fmt: str) -> None:
    run = _hand_run(tmp_path, datasets=True)
    out = _invoke(str(run), "-f", fmt)
    header = next(line for line in out.splitlines() if "judge" in line and "MVR" in line)
    assert header.lstrip("| ").startswith("dataset")
    for name in ("pubmed-claims", "legal-claims"):
        assert len(re.findall(rf"^\|? ?{name} ", out, flags=re.M)) == 4  # 3 judges, 1 verifier
    _assert_numbers_whole(out.replace("|", " "), read_json(run / METRICS_FILE))


def test_single_dataset_has_no_dataset_column_and_null_ci_is_a_dash(tmp_path: Path) -> None:
    run = _hand_run(tmp_path, datasets=False)
    for fmt in ("table", "markdown"):
        out = _invoke(str(run), "-f", fmt)
        assert not any(line.lstrip("| ").startswith("dataset") for line in out.splitlines())
        row = next(line for line in out.splitlines() if line.lstrip("| ").startswith(LONG + "-1"))
        assert "—" in row and "nan" not in out.lower() and "None" not in out


def test_markdown_parts_are_separate_tables(both_run: Path) -> None:
    out = _invoke(str(both_run), "-f", "markdown")
    assert out.startswith("## ForceBench")
    blocks = [b for b in out.split("\n\n") if b.startswith("| ")]
    assert [b.splitlines()[0].split(" | ")[0] for b in blocks] == ["| judge", "| verifier"]


# ------------------------------------------------------------------------------ prompts

LONG_LINE = "Consider [bold]this[/bold] and [red]that[/] " + "word " * 50 + "{{ claim }} end."
PROMPT = f"""+++
id = "wide"
version = 1
task = "verify"
variables = ["claim"]
labels = ["true", "false"]
+++
=== system ===
Keep   spacing\tand :smile: as written.
=== user ===
{LONG_LINE}
"""


def test_prompts_show_and_render_print_text_exactly(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "wide.v1.prompt").write_text(PROMPT, encoding="utf-8")
    (tmp_path / "row.json").write_text(json.dumps({"claim": "[i]X[/i] causes Y"}))
    runner = CliRunner()
    shown = runner.invoke(app, ["prompts", "show", "wide", "--prompt-dir", str(tmp_path / "p")])
    assert shown.exit_code == 0, shown.output
    assert shown.output.endswith(PROMPT)
    args = ["prompts", "render", "wide", "--data", str(tmp_path / "row.json")]
    rendered = runner.invoke(app, [*args, "--prompt-dir", str(tmp_path / "p")])
    assert rendered.exit_code == 0, rendered.output
    expected = LONG_LINE.replace("{{ claim }}", "[i]X[/i] causes Y")
    assert len(expected) > 200
    assert expected in rendered.output.splitlines()
    assert "Keep   spacing\tand :smile: as written." in rendered.output.splitlines()
