"""Every run kind gets a correct report in every format: pairs (ForceBench), items
(single and pairwise), factuality, and a mixed run, each as table, markdown, csv, json
and html (opened in headless Chromium). Correct: the parts the run has and no other,
every judge or verifier with its headline numbers as metrics.json has them, the page
titled for its kind, nothing fetched, no console error, no overflow at 1280 px."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cli import invoke
from _item_runs import write_item_run
from test_report_browser import WIDTH, _open, browser  # noqa: F401  (the fixture)

from assay.runs import read_json

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("table", "markdown", "csv", "json", "html")
KINDS = ("pairs", "items", "pairwise", "factuality", "mixed")
FACT = """
[factuality]
datasets = [{ name = "factuality-demo", path = "builtin:factuality-demo" }]
decomposer = { kind = "sentence" }
verifiers = [
  { kind = "overlap", threshold = 0.7 },
  { kind = "overlap", threshold = 0.3, name = "loose" },
]
"""
ITEMS = """
[[datasets]]
kind = "items"
name = "claims"
path = "claims.csv"
gold_label_column = "label"
raters = ["r1", "r2"]
variables = { claim = "response", evidence = "context" }
"""
PAIRS = """
[[datasets]]
name = "forcebench-demo"
path = "builtin:forcebench-demo"
"""
JUDGES = '\n[[baselines]]\nname = "token-overlap"\n[[baselines]]\nname = "forcecheck-rule"\n'
SPECS = {
    "pairs": PAIRS + JUDGES,
    "items": ITEMS + JUDGES,
    "factuality": FACT,
    "mixed": PAIRS + ITEMS + JUDGES + FACT,
}
SUBTITLES = {
    "pairs": "ForceBench run report",
    "items": "Items run report",
    "pairwise": "Items run report",
    "factuality": "Factuality run report",
    "mixed": "ForceBench + factuality + items run report",
}
TITLES = {  # the table title of each part, in the text formats
    "forcebench": "ForceBench ·",
    "factuality": "Factuality ·",
    "single": "Judges vs gold ·",
    "pairwise": "Pairwise judges ·",
}


def _pairwise(run: Path) -> None:
    items = [
        {"item_id": f"i{k}", "pairwise": True, "gold_preference": "A" if k % 3 else "B"}
        for k in range(12)
    ]
    judgments = [
        {"item_id": f"i{k}", "judge_id": judge, "order": order, "label": label}
        for judge, flip in (("duel", 2), ("fair", 3))
        for k in range(12)
        for order, label in (("ab", "a"), ("ba", "b" if k % flip else "a"))
    ]
    write_item_run(run, "pairwise", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("matrix")
    shutil.copy(ROOT / "examples" / "items" / "claims.csv", base)
    out = {}
    for kind, body in SPECS.items():
        spec = base / f"{kind}.toml"
        spec.write_text(f'name = "{kind}"\nbootstrap = 100\n{body}', encoding="utf-8")
        out[kind] = base / kind
        argv = ["run", str(spec), "--output-dir", str(out[kind]), "--no-progress"]
        code, stdout, err = invoke(argv)
        assert code == 0, stdout + err
    out["pairwise"] = base / "pairwise"
    _pairwise(out["pairwise"])
    return out


Headlines = dict[str, dict[str, dict[str, float]]]


def _headlines(metrics: dict[str, Any]) -> Headlines:
    """table part -> producer -> its headline numbers, from metrics.json."""
    out: Headlines = {}
    for r in (metrics.get("forcebench") or {}).get("rows", []):
        if r["group_by"] == "overall":
            out.setdefault("forcebench", {})[r["judge_id"]] = {"mvr": r["mvr"], "fs": r["fs"]}
    for r in ((metrics.get("factuality") or {}).get("scores") or {}).get("rows", []):
        out.setdefault("factuality", {})[r["verifier_id"]] = {"macro": r["macro"]}
    for r in (metrics.get("items") or {}).get("rows", []):
        names = ("accuracy", "position_consistency") if r["task"] == "pairwise" else ("accuracy",)
        out.setdefault(r["task"], {})[r["judge_id"]] = {n: r[n] for n in names}
    return out


def _text(runs: dict[str, Path], kind: str, fmt: str) -> str:
    target = runs[kind] / f"matrix.{fmt}"
    code, _, err = invoke(["report", str(runs[kind]), "-f", fmt, "-o", str(target)])
    assert code == 0, err
    return target.read_text(encoding="utf-8")


def _check_text(text: str, headlines: Headlines) -> None:
    for part, title in TITLES.items():
        assert (title in text) == (part in headlines), part
    for producers in headlines.values():
        for producer, numbers in producers.items():
            assert producer in text
            for name, value in numbers.items():
                assert f"{value:.3f}" in text, (producer, name)
    assert "empty:" not in text


def _check_csv(text: str, heads: Headlines) -> None:
    frame = pd.read_csv(io.StringIO(text))
    parts = {"single": "items", "pairwise": "items"}
    assert (
        {parts.get(p, p) for p in heads}
        <= set(frame["section"])
        <= {*parts.values(), *heads, "raters", "confusion", "panels"}
    )
    for part, producers in heads.items():
        for producer, numbers in producers.items():
            mine = frame[
                (frame["section"] == parts.get(part, part))
                & (frame["judge_or_verifier"] == producer)
            ]
            for name, value in numbers.items():
                got = mine[(mine["metric"] == name) & (mine["group_by"] == "overall")]["value"]
                assert got.astype(float).tolist()[:1] == [pytest.approx(value)], (producer, name)


def _check_json(text: str, metrics: dict[str, Any]) -> None:
    data = json.loads(text)
    for part in ("forcebench", "factuality", "items"):
        assert data.get(part) == metrics.get(part), part
    assert data["records_sha256"]["stale"] is False


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "html"])
@pytest.mark.parametrize("kind", KINDS)
def test_text_formats(runs: dict[str, Path], kind: str, fmt: str) -> None:
    metrics = read_json(runs[kind] / "metrics.json")
    heads = _headlines(metrics)
    assert heads, "the run has a metric"
    text = _text(runs, kind, fmt)
    if fmt == "csv":
        _check_csv(text, heads)
    elif fmt == "json":
        _check_json(text, metrics)
    else:
        _check_text(text, heads)
        if fmt == "table":
            name = read_json(runs[kind] / "manifest.json")["name"]
            status = read_json(runs[kind] / "manifest.json").get("status") or "unknown"
            assert text.startswith(f"run {name} · status {status}")


@pytest.mark.parametrize("kind", KINDS)
def test_html_in_chromium(browser: Any, runs: dict[str, Path], kind: str) -> None:  # noqa: F811
    _text(runs, kind, "html")
    loaded = _open(browser, runs[kind] / "matrix.html")
    assert [e for e in loaded.console if e["level"] == "SEVERE"] == []
    assert loaded.requests == [loaded.url]
    shown = browser.execute_script("return document.body.innerText")
    name = read_json(runs[kind] / "manifest.json")["name"]
    assert browser.title.startswith(name)
    assert SUBTITLES[kind].lower() in shown.lower()  # shown in capitals (CSS)
    assert "No metrics yet" not in shown
    assert ("forcebench run report" in shown.lower()) == (kind == "pairs")
    heads = _headlines(read_json(runs[kind] / "metrics.json"))
    for producers in heads.values():
        for producer, numbers in producers.items():
            assert producer in shown
            for value in numbers.values():
                assert f"{value:.3f}" in shown, (producer, value)
    headings = browser.execute_script(
        "return [...document.querySelectorAll('h2,h3')].map(h => h.innerText.trim())"
    )
    assert ("Judges compared" in headings) == any(len(p) > 1 for p in heads.values())
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= WIDTH
