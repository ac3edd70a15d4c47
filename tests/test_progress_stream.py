"""Progress bars are for the terminal, not for the results: they draw on stderr, so
`assay run ... > out.txt` keeps only the tables and the status line."""

from __future__ import annotations

from pathlib import Path

from tests._cli import invoke

REPO = Path(__file__).resolve().parents[1]


def test_progress_bars_draw_on_stderr_not_stdout(tmp_path: Path) -> None:
    code, out, err = invoke(
        ["run", str(REPO / "examples" / "demo.toml"), "--output-dir", str(tmp_path / "r")]
    )
    assert code == 0, err
    assert "━" not in out and "judging" not in out, out
    assert "complete:" in out  # the results stay on stdout
    assert "judging" in err and "600/600" in err  # the bars are drawn, on stderr


def test_no_progress_draws_nothing(tmp_path: Path) -> None:
    code, out, err = invoke(
        [
            "run",
            str(REPO / "examples" / "demo.toml"),
            "--output-dir",
            str(tmp_path / "r"),
            "--no-progress",
        ]
    )
    assert code == 0, err
    assert "judging" not in out + err
