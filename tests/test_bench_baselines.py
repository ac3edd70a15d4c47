"""benchmarks/bench_baselines.py on tiny corpora in the released formats, counted by hand.

CI has no copy of the public corpora (they are GPL-3.0 and not shipped), so these tests
write a few rows in exactly the released formats and check every figure the script
prints for them against counts worked out by hand from the frozen lexicons.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_baselines.py"

# Yu et al. 2019 format: CSV "sentence,label"; 0 none, 1 direct, 2 conditional, 3 correlational.
YU_CSV = """sentence,label
Smoking causes lung cancer.,1
Coffee intake was associated with lower mortality.,3
Exercise may reduce the risk of falls.,2
Vitamin D supplementation did not change bone density in 120 adults.,0
Statins definitely reduce cardiovascular events.,1
"""


def _insciout_row(abstract: str, a: int, press: str, p: int, label: str) -> str:
    return json.dumps(
        {
            "original_file_id": "x",
            "press_release_conclusion": press,
            "press_release_strength": p,
            "abstract_conclusion": abstract,
            "abstract_strength": a,
            "exaggeration_label": label,
        }
    )


INSCIOUT = "\n".join(
    [
        _insciout_row(
            "Coffee intake was associated with lower mortality.",
            1,
            "Coffee causes longer life.",
            3,
            "exaggerates",
        ),
        _insciout_row(
            "Exercise may reduce falls in older adults.",
            2,
            "Exercise may reduce falls in older adults.",
            2,
            "same",
        ),
        _insciout_row(
            "Statins definitely lower cholesterol.",
            3,
            "Statins might lower cholesterol.",
            2,
            "downplays",
        ),
    ]
)


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def _json(path: Path, *extra: str) -> dict[str, Any]:
    done = _bench("--corpus", str(path), "--json", *extra)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_yu2019_counts_by_hand(tmp_path: Path) -> None:
    corpus = tmp_path / "pubmed_causal_language_use.csv"
    corpus.write_text(YU_CSV, encoding="utf-8")
    res = _json(corpus, "--no-demo")
    assert res["demo"] is None
    c = res["corpus"]
    assert c["corpus"] == "yu2019" and c["n"] == 5
    assert c["labels"] == {"none": 1, "direct": 2, "conditional": 1, "correlational": 1}
    rows = {(r["baseline"], r["family"]): r for r in c["rows"]}
    # "causes" (row 1) is the only causal verb: "reduce" and "lower" are not in the list.
    causal = rows["forcecheck-rule", "causal"]
    assert causal["fires"] == {"none": 0, "direct": 1, "conditional": 0, "correlational": 0}
    assert (causal["precision"], causal["recall"], causal["base_rate"]) == (1.0, 0.5, 0.667)
    # "definitely" (row 5): a certainty word and a booster.
    for key in (("forcecheck-rule", "certainty"), ("forcecheck-axis", "booster")):
        assert rows[key]["fires"]["direct"] == 1 and sum(rows[key]["fires"].values()) == 1
        assert (rows[key]["precision"], rows[key]["recall"]) == (1.0, 0.5)
    # "120 adults" (row 4, no relationship) is the only exact number: never in the
    # detected pair, so precision is undefined and recall 0.
    exact = rows["forcecheck-rule", "exact_number"]
    assert exact["fires"] == {"none": 1, "direct": 0, "conditional": 0, "correlational": 0}
    assert (exact["precision"], exact["recall"]) == (None, 0.0)
    anycue = rows["forcecheck-rule", "any cue"]
    assert anycue["fires"] == {"none": 1, "direct": 2, "conditional": 0, "correlational": 0}
    assoc = rows["forcecheck-axis", "association"]
    assert assoc["fires"] == {"none": 0, "direct": 0, "conditional": 0, "correlational": 1}
    assert (assoc["precision"], assoc["recall"]) == (1.0, 1.0)
    hedge = rows["forcecheck-axis", "hedge"]  # "may" (row 3)
    assert hedge["fires"] == {"none": 0, "direct": 0, "conditional": 1, "correlational": 0}
    assert (hedge["precision"], hedge["recall"], hedge["base_rate"]) == (1.0, 1.0, 0.333)
    for family in ("universal", "recency"):
        assert sum(rows["forcecheck-rule", family]["fires"].values()) == 0
    assert sum(rows["forcecheck-axis", "generaliser"]["fires"].values()) == 0


def test_insciout_counts_by_hand(tmp_path: Path) -> None:
    corpus = tmp_path / "insciout_test.jsonl"
    corpus.write_text(INSCIOUT + "\n", encoding="utf-8")
    c = _json(corpus, "--no-demo")["corpus"]
    assert c["corpus"] == "insciout" and c["n"] == 3
    assert c["labels"] == {"same": 1, "exaggerates": 1, "downplays": 1}
    rows = {r["family"]: r for r in c["rows"]}
    # Only pair 1 fires, on relation: "associated" in the abstract, "causes" in the claim.
    for axis in ("relation", "any axis"):
        assert rows[axis]["fires"] == {"same": 0, "exaggerates": 1, "downplays": 0}
        assert (rows[axis]["precision"], rows[axis]["recall"]) == (1.0, 1.0)
        assert rows[axis]["base_rate"] == 0.333
    for axis in ("modality", "scope", "temporal", "numeric"):
        assert sum(rows[axis]["fires"].values()) == 0 and rows[axis]["precision"] is None
    zero = dict.fromkeys(("relation", "modality", "scope", "temporal", "numeric", "any axis"), 0)
    assert c["by_strength"] == {
        "1->3": {"pairs": 1, **zero, "relation": 1, "any axis": 1},
        "2->2": {"pairs": 1, **zero},
        "3->2": {"pairs": 1, **zero},
    }
    # Verdicts (claim = press release, evidence = abstract). Pair 1: 1 of the claim's 4
    # content tokens (coffee; cause, longer, life missing) -> 0.25; rule 0.25 - 0.15
    # (causal); axis 0.25 - 0.3 (relation) -> 0; "Coffee" opens the sentence, so no
    # entity and entity-overlap falls back to 0.25. Pairs 2 and 3 share every content
    # token and fire nothing: 1.0 everywhere.
    verdicts = {v["baseline"]: v for v in c["verdicts"]}
    assert verdicts["citation-presence"]["unsupported"] == {
        "same": 0,
        "exaggerates": 0,
        "downplays": 0,
    }
    assert verdicts["citation-presence"]["precision"] is None
    exaggerated_score = {
        "token-overlap": 0.25,
        "entity-overlap": 0.25,
        "forcecheck-rule": 0.1,
        "forcecheck-axis": 0.0,
    }
    for name, score in exaggerated_score.items():
        v = verdicts[name]
        assert v["unsupported"] == {"same": 0, "exaggerates": 1, "downplays": 0}, name
        assert v["mean_score"] == {"same": 1.0, "exaggerates": score, "downplays": 1.0}, name
        assert (v["precision"], v["recall"]) == (1.0, 1.0)
    # Pairs 1 and 3 differ in strength; the stronger has the rule cue both times
    # ("causes"; "definitely"), so no violation and no tie.
    assert c["ordering"] == {
        "n": 2,
        "forcecheck-rule": {"mvr": 0.0, "ties": 0, "violations": 0},
    }


def test_markdown_tables_and_demo_side_by_side(tmp_path: Path) -> None:
    corpus = tmp_path / "yu.csv"
    corpus.write_text(YU_CSV, encoding="utf-8")
    done = _bench("--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    row = "| forcecheck-rule | causal | direct vs correlational | 0 | 1 | 0 | 0 |"
    assert row + " 0.67 | 1.00 | 0.50 |" in out
    assert "Bundled demo set, 60 pairs" in out and "| relation |" in out


def test_bad_corpus_is_one_line_error(tmp_path: Path) -> None:
    corpus = tmp_path / "bad.csv"
    corpus.write_text("sentence,label\nA claim.,7\n", encoding="utf-8")
    done = _bench("--corpus", str(corpus), "--no-demo")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: {corpus}:2: field 'label': expected 0-3, got '7'"
    other = tmp_path / "notes.txt"
    other.write_text("hello\n", encoding="utf-8")
    done = _bench("--corpus", str(other))
    assert done.returncode == 2 and "--format yu2019|insciout" in done.stderr
