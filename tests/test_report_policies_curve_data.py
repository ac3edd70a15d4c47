"""The policies charts of the HTML report say what they show: the
risk–coverage curve and the applied point (diamond) each name the answers they were
computed on, a curve from another split or another configuration than the applied
policy's is flagged, and the action-mix legend has one colour per action, the colour
its bar segments are drawn in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _policies_cli_helpers import assay, lines, write_text
from test_policies_safe_outputs import POLICIES, ROWS, _row

from assay.policies.report._data import MixRow, policy_reports
from assay.report._policies_html import mix_chart, policies_section

pytest_plugins = ["_policies_fixtures"]  # run_dir, policy_file (base_run, policies_text below)


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _policies_fixtures import make_gold_run, write_gates

    run = make_gold_run(tmp_path_factory.mktemp("curve_data"), [_row(*r) for r in ROWS])
    scores = {"g1": 0.9, "g2": 0.5, "g3": 0.25, "g4": 0.05, "g5": 0.7, "g6": 0.8}
    write_gates(run, scores, "gold")
    return run


@pytest.fixture
def policies_text() -> str:
    return POLICIES


def _ok(*args: object) -> None:
    code, _, err = assay(*args)
    assert code == 0, err


def _article(run_dir: Path, name: str) -> str:
    """The HTML of policy `name`'s panel in the report's policies section."""
    html = str(policies_section(policy_reports(run_dir)))
    for article in html.split('<article class="policy"')[1:]:
        if re.search(rf"<h3>{re.escape(name)} <span", article):
            return article
    raise AssertionError(f"no panel for {name}")


def _caption(article: str) -> str:
    found = re.search(r'<figure class="policy-curve">.*?</figure>', article, re.S)
    assert found, article
    return found.group(0)


def test_a_sweep_on_a_split_against_a_point_on_all_answers_says_so(
    run_dir: Path, policy_file: Path
) -> None:
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    _ok("policies", "sweep", run_dir, "--policy", policy_file, "--name", "cert", "--split", "dev")
    (cert,) = [r for r in policy_reports(run_dir) if r.name == "cert"]
    assert cert.curve is not None
    assert (cert.curve.sweep_on, cert.curve.applied_on) == ("split dev", "all answers")
    figure = _caption(_article(run_dir, "cert"))
    assert "on split dev (sweep.jsonl)" in figure
    assert "diamond: the applied thresholds on all answers" in figure
    assert 'class="note warn curve-mismatch"' in figure
    assert "not the same answers" in figure


def test_a_curve_and_point_on_the_same_split_need_no_warning(
    run_dir: Path, policy_file: Path
) -> None:
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0, "--split", "dev")
    for name in ("gate", "cert", "render"):
        figure = _caption(_article(run_dir, name))  # computed from the run's records
        assert "on split dev (computed" in figure and "applied thresholds on split dev" in figure
        assert "curve-mismatch" not in figure
        _ok("policies", "sweep", run_dir, "--policy", policy_file, "--name", name, "--split", "dev")
        figure = _caption(_article(run_dir, name))  # read from sweep.jsonl
        assert "on split dev (sweep.jsonl)" in figure and "curve-mismatch" not in figure


def test_a_sweep_of_another_configuration_says_so(run_dir: Path, policy_file: Path) -> None:
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    other = write_text(
        run_dir.parent / "other.toml", POLICIES.replace('conflict = "0.55"', 'conflict = "0.45"')
    )
    _ok("policies", "sweep", run_dir, "--policy", other, "--name", "cert")
    figure = _caption(_article(run_dir, "cert"))
    assert 'class="note warn curve-mismatch"' in figure and "another configuration" in figure


def _legend_and_fills(svg_and_legend: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    legend = dict(
        (label, colour)
        for colour, label in re.findall(
            r'<span class="swatch" style="background-color:([^"]+)"></span>([^<]+)</span>',
            svg_and_legend,
        )
    )
    segment = (
        r'<title>[^<]*? ([\w-]+): \d+ of \d+ [^<]*</title><rect class="mix"[^>]*fill="([^"]+)"'
    )
    segments = re.findall(segment, svg_and_legend)
    return legend, segments


def test_the_action_mix_legend_has_one_colour_per_action(run_dir: Path, policy_file: Path) -> None:
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    for name in ("cert", "gate", "render"):
        figure = re.search(
            r'<figure class="policy-mix">.*?</figure>', _article(run_dir, name), re.S
        )
        assert figure, name
        legend, segments = _legend_and_fills(figure.group(0))
        assert len(legend) >= 2 and segments, (name, figure.group(0))
        assert len(set(legend.values())) == len(legend), (name, legend)
        assert all(legend[label] == fill for label, fill in segments), (name, legend, segments)


def test_every_action_of_every_kind_gets_its_own_colour() -> None:
    labels = {
        "response outcome": ["answer_full", "answer_partial", "conflict", "abstain", "refuse"],
        "gate outcome": ["pass", "abstain", "refuse"],
        "claim decision": [
            "assert",
            "qualify",
            "dispute",
            "withhold",
            "x1",
            "x2",
            "x3",
            "x4",
            "x5",
        ],
    }
    rows = [
        MixRow(of=of, label=lab, count=1, total=len(ls)) for of, ls in labels.items() for lab in ls
    ]
    chart = mix_chart(rows)
    legend = dict(chart.legend)
    assert sorted(legend) == sorted({lab for ls in labels.values() for lab in ls})
    assert len(set(legend.values())) == len(legend)
    for bar in chart.bars:
        for segment in bar.segments:
            label = segment.tip.split(":")[0].removeprefix(bar.title + " ")
            assert segment.fill == legend[label]


def test_a_sweep_file_that_does_not_name_its_answers_is_flagged(
    run_dir: Path, policy_file: Path
) -> None:
    """A sweep.jsonl written before points named their split (or edited by hand)."""
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    _ok("policies", "sweep", run_dir, "--policy", policy_file, "--name", "render")
    path = run_dir / "policies/render/sweep.jsonl"
    old = [{k: v for k, v in p.items() if k in ("params", "metrics")} for p in lines(path)]
    path.write_text("".join(json.dumps(p) + "\n" for p in old), encoding="utf-8")
    figure = _caption(_article(run_dir, "render"))
    assert "on unrecorded answers (sweep.jsonl)" in figure
    assert 'class="note warn curve-mismatch"' in figure and "does not record" in figure


def test_a_sweep_of_records_changed_since_apply_says_so(run_dir: Path, policy_file: Path) -> None:
    _ok("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    gates = run_dir / "gates.jsonl"
    first = gates.read_text(encoding="utf-8").splitlines()[0]
    with gates.open("a", encoding="utf-8") as fh:  # a later gate record for g1, lower score
        fh.write(first.replace("0.9", "0.2") + "\n")
    _ok("policies", "sweep", run_dir, "--policy", policy_file, "--name", "gate")
    figure = _caption(_article(run_dir, "gate"))
    assert 'class="note warn curve-mismatch"' in figure and "other records" in figure
