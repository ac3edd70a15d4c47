"""How the ForceCheck baselines' cues behave on public corpora nobody here wrote.

The word lists were written against the bundled demo pairs; this measures them, frozen,
on public labelled text (read in its original released format, not shipped with assay)
and prints the demo figures beside them. See docs/reference/baselines.md for results.

* ``yu2019``: Yu, Li and Wang (2019), EMNLP, ``data/pubmed_causal_language_use.csv`` of
  github.com/junwang4/causal-language-use-in-science (``sentence,label``; 0 no
  relationship, 1 direct causal, 2 conditional causal, 3 correlational). Per cue family:
  fires per gold label; precision / recall for the class it should find against the one
  it should not (causal verbs: direct vs correlational; hedges: conditional vs direct).
* ``insciout``: Wright and Augenstein (2021), EMNLP, ``data/insciout_test.jsonl`` of
  github.com/copenlu/scientific-exaggeration-detection (abstract vs press-release
  conclusions, strength 0-3, same / exaggerates / downplays). forcecheck-axis per axis
  (evidence = abstract, claim = press release) and every baseline's 'unsupported' as
  detectors of ``exaggerates``; MVR-style ordering (a tie is a violation) of the two
  statements of pairs whose strengths differ by forcecheck-rule's claim-only penalty
  (forcecheck-axis is not ordered: against itself the abstract never fires).

Usage::

    python benchmarks/bench_baselines.py --corpus PATH [--format auto|yu2019|insciout]
                                         [--no-demo] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay.core.judging import JudgeItem
from assay.judges import _baseline_cues as cues
from assay.judges._baseline_text import prep
from assay.judges._baselines import BASELINES, ForceCheckAxisJudge, ForceCheckRuleJudge

DEMO = Path(__file__).resolve().parents[1] / "assay" / "data" / "forcebench_demo.jsonl"
YU_LABELS = {0: "none", 1: "direct", 2: "conditional", 3: "correlational"}
RULE = ForceCheckRuleJudge()
AXIS = ForceCheckAxisJudge()


def _rule_class(name: str) -> Callable[[str], bool]:
    return lambda text: name in RULE.cues(text)


def _regex(regex: Any) -> Callable[[str], bool]:
    return lambda text: bool(regex.search(prep(text)))


#: (baseline, cue family, detector, gold class it should find, class it should not).
FAMILIES: list[tuple[str, str, Callable[[str], bool], str, str]] = [
    ("forcecheck-rule", "causal", _rule_class("causal"), "direct", "correlational"),
    ("forcecheck-rule", "certainty", _rule_class("certainty"), "direct", "conditional"),
    ("forcecheck-rule", "universal", _rule_class("universal"), "direct", "correlational"),
    ("forcecheck-rule", "recency", _rule_class("recency"), "direct", "correlational"),
    ("forcecheck-rule", "exact_number", _rule_class("exact_number"), "direct", "correlational"),
    ("forcecheck-rule", "any cue", lambda t: bool(RULE.cues(t)), "direct", "correlational"),
    ("forcecheck-axis", "association", _regex(cues.ASSOC_RE), "correlational", "direct"),
    ("forcecheck-axis", "hedge", _regex(cues.HEDGE_RE), "conditional", "direct"),
    ("forcecheck-axis", "booster", _regex(cues.BOOSTER_RE), "direct", "conditional"),
    ("forcecheck-axis", "generaliser", _regex(cues.GENERALISER_RE), "direct", "correlational"),
]


class CorpusError(Exception):
    """A corpus file that is not in the expected released format."""


def read_yu2019(path: Path) -> list[tuple[str, str]]:
    """(sentence, gold label name) rows of Yu et al. 2019's released CSV."""
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or {"sentence", "label"} - set(reader.fieldnames):
            raise CorpusError(f"{path}: expected a CSV header 'sentence,label'")
        rows = []
        for line, row in enumerate(reader, start=2):
            label = (row["label"] or "").strip()
            if not label.isdigit() or int(label) not in YU_LABELS:
                raise CorpusError(f"{path}:{line}: field 'label': expected 0-3, got {label!r}")
            rows.append((row["sentence"], YU_LABELS[int(label)]))
    return rows


def read_jsonl(path: Path, fields: Iterable[str]) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file, each checked for `fields`."""
    rows = []
    for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{line}: not JSON ({exc.msg})") from None
        missing = [f for f in fields if f not in row]
        if missing:
            raise CorpusError(f"{path}:{line}: field {missing[0]!r} missing")
        rows.append(row)
    return rows


INSCIOUT_FIELDS: tuple[str, ...] = ("press_release_conclusion", "press_release_strength")
INSCIOUT_FIELDS += ("abstract_conclusion", "abstract_strength", "exaggeration_label")


def _pr(tp: int, fired: int, positives: int, negatives: int) -> dict[str, float | None]:
    """Precision and recall of a cue as a detector, and the precision of guessing."""
    both = positives + negatives
    return {
        "base_rate": round(positives / both, 3) if both else None,
        "precision": round(tp / fired, 3) if fired else None,
        "recall": round(tp / positives, 3) if positives else None,
    }


def yu2019_table(rows: list[tuple[str, str]]) -> dict[str, Any]:
    """Per cue family: fires per gold label, precision / recall for its target class."""
    totals = {name: sum(1 for _, g in rows if g == name) for name in YU_LABELS.values()}
    out = []
    for judge, family, fires, pos, neg in FAMILIES:
        counts = dict.fromkeys(YU_LABELS.values(), 0)
        for text, gold in rows:
            if fires(text):
                counts[gold] += 1
        pr = _pr(counts[pos], counts[pos] + counts[neg], totals[pos], totals[neg])
        row: dict[str, Any] = {"baseline": judge, "family": family, "fires": counts}
        out.append({**row, "detects": f"{pos} vs {neg}", **pr})
    return {"corpus": "yu2019", "n": len(rows), "labels": totals, "rows": out}


def _penalty(judge: ForceCheckRuleJudge | ForceCheckAxisJudge, claim: str, ev: str) -> float:
    _, features = judge.score(JudgeItem(claim=claim, evidence=ev))
    return float(features["penalty_total"])


def _ordering(
    pairs: list[tuple[str, str, str]], judges: tuple[ForceCheckRuleJudge | ForceCheckAxisJudge, ...]
) -> dict[str, Any]:
    """MVR-style: (evidence, weaker, stronger) -> violation when penalty(stronger) <= weaker."""
    out: dict[str, Any] = {"n": len(pairs)}
    for judge in judges:
        ties = violations = 0
        for ev, weak, strong in pairs:
            p_weak, p_strong = _penalty(judge, weak, ev), _penalty(judge, strong, ev)
            ties += p_weak == p_strong
            violations += p_strong <= p_weak
        out[judge.name] = {
            "mvr": round(violations / len(pairs), 3) if pairs else None,
            "ties": ties,
            "violations": violations,
        }
    return out


def verdict_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every baseline, default parameters: 'unsupported' as an exaggeration detector."""
    labels = ("same", "exaggerates", "downplays")
    exaggerates = sum(1 for r in rows if r["exaggeration_label"] == "exaggerates")
    out = []
    for name, cls in BASELINES.items():
        judge = cls()
        flagged = dict.fromkeys(labels, 0)
        scores: dict[str, list[float]] = {lab: [] for lab in labels}
        for r in rows:
            item = JudgeItem(claim=r["press_release_conclusion"], evidence=r["abstract_conclusion"])
            j = judge.judge(item)
            scores[r["exaggeration_label"]].append(j.score or 0.0)
            flagged[r["exaggeration_label"]] += j.label == "unsupported"
        mean = {k: round(sum(v) / len(v), 3) if v else None for k, v in scores.items()}
        pr = _pr(
            flagged["exaggerates"], sum(flagged.values()), exaggerates, len(rows) - exaggerates
        )
        out.append({"baseline": name, "unsupported": flagged, "mean_score": mean, **pr})
    return out


def insciout_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """forcecheck-axis per axis as an exaggeration detector; ordering by claim penalty."""
    labels = ("same", "exaggerates", "downplays")
    totals = {lab: sum(1 for r in rows if r["exaggeration_label"] == lab) for lab in labels}
    counts = {axis: dict.fromkeys(labels, 0) for axis in (*AXIS.AXES, "any axis")}
    moves: dict[str, dict[str, int]] = {}
    pairs = []
    for r in rows:
        ev, claim = r["abstract_conclusion"], r["press_release_conclusion"]
        _, features = AXIS.score(JudgeItem(claim=claim, evidence=ev))
        fired = [*features["axes_fired"], *(["any axis"] if features["axes_fired"] else [])]
        a, p = int(r["abstract_strength"]), int(r["press_release_strength"])
        move = moves.setdefault(f"{a}->{p}", dict.fromkeys(("pairs", *counts), 0))
        move["pairs"] += 1
        for axis in fired:
            counts[axis][r["exaggeration_label"]] += 1
            move[axis] += 1
        if a != p:
            weak, strong = (r["abstract_conclusion"], claim) if a < p else (claim, ev)
            pairs.append((ev, weak, strong))
    table = []
    for axis, c in counts.items():
        hits = sum(c.values())
        pr = _pr(c["exaggerates"], hits, totals["exaggerates"], len(rows) - totals["exaggerates"])
        table.append({"baseline": "forcecheck-axis", "family": axis, "fires": c, **pr})
    return {
        "corpus": "insciout",
        "n": len(rows),
        "labels": totals,
        "rows": table,
        "by_strength": dict(sorted(moves.items())),
        "verdicts": verdict_rows(rows),
        "ordering": _ordering(pairs, (RULE,)),
    }


def demo_table(path: Path = DEMO) -> dict[str, Any]:
    """The same cue families and axis checks on the bundled demo pairs."""
    pairs = read_jsonl(path, ("evidence", "calibrated_claim", "raised_claim", "axis"))
    fams = []
    for judge, family, fires, _, _ in FAMILIES:
        cal = sum(fires(p["calibrated_claim"]) for p in pairs)
        rai = sum(fires(p["raised_claim"]) for p in pairs)
        fams.append({"baseline": judge, "family": family, "calibrated": cal, "raised": rai})
    axes = {
        a: {"calibrated": 0, "raised": 0, "raised_own_axis": 0, "own_axis_pairs": 0}
        for a in AXIS.AXES
    }
    for p in pairs:
        axes[p["axis"]]["own_axis_pairs"] += 1
        for member in ("calibrated", "raised"):
            fired = AXIS.score(JudgeItem(claim=p[f"{member}_claim"], evidence=p["evidence"]))
            for axis in fired[1]["axes_fired"]:
                axes[axis][member] += 1
                if member == "raised" and axis == p["axis"]:
                    axes[axis]["raised_own_axis"] += 1
    triples = [(p["evidence"], p["calibrated_claim"], p["raised_claim"]) for p in pairs]
    ordering = _ordering(triples, (RULE, AXIS))
    return dict(corpus="forcebench-demo", n=len(pairs), families=fams, axes=axes, ordering=ordering)


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _md(title: str, head: list[str], rows: list[list[Any]], left: int = 1) -> list[str]:
    """A titled markdown table; the first `left` columns are text, the rest numbers."""
    sep = "|" + "---|" * left + "---:|" * (len(head) - left)
    lines = [" | ".join(str(c) for c in row) for row in rows]
    return [title, "", f"| {' | '.join(head)} |", sep, *(f"| {line} |" for line in lines)]


def _heads(labels: dict[str, int]) -> list[str]:
    return [f"{k} (n={v})" for k, v in labels.items()]


def render_yu(res: dict[str, Any]) -> list[str]:
    labels = res["labels"]
    rows = [
        [r["baseline"], r["family"], r["detects"], *(r["fires"][k] for k in labels)]
        + [_cell(r[k]) for k in ("base_rate", "precision", "recall")]
        for r in res["rows"]
    ]
    return _md(
        f"Yu et al. 2019, {res['n']} sentences: sentences where the cue fires, per gold label",
        ["baseline", "cue family", "detects", *_heads(labels), "base rate", "precision", "recall"],
        rows,
        left=3,
    )


def render_insciout(res: dict[str, Any]) -> list[str]:
    labels, axes = res["labels"], [*AXIS.AXES, "any axis"]
    rows = [
        [r["family"], *(r["fires"][k] for k in labels)]
        + [_cell(r[k]) for k in ("base_rate", "precision", "recall")]
        for r in res["rows"]
    ]
    out = _md(
        f"InSciOut test, {res['n']} pairs: forcecheck-axis (evidence = abstract conclusion, "
        "claim = press-release conclusion), pairs where the axis fires, per gold label",
        ["axis", *_heads(labels), "base rate", "precision (exaggerates)", "recall (exaggerates)"],
        rows,
    )
    moves = [[m, c["pairs"], *(c[a] for a in axes)] for m, c in res["by_strength"].items()]
    out += [
        "",
        *_md(
            "The same by gold strength, abstract -> press release (0 no relationship, "
            "1 correlational, 2 conditional causal, 3 causal): pairs, and pairs where each "
            "axis fires",
            ["strengths", "pairs", *axes],
            moves,
        ),
    ]
    verdicts = [
        [v["baseline"], *(f"{v['unsupported'][k]} ({_cell(v['mean_score'][k])})" for k in labels)]
        + [_cell(v["precision"]), _cell(v["recall"])]
        for v in res["verdicts"]
    ]
    out += [
        "",
        *_md(
            "Every baseline, default parameters, same pairs: pairs judged 'unsupported' "
            "(mean score in brackets), and 'unsupported' as a detector of exaggerates",
            ["baseline", *_heads(labels), "precision", "recall"],
            verdicts,
        ),
    ]
    return [*out, "", *_render_ordering(res["ordering"], "pairs whose gold strengths differ")]


def _render_ordering(o: dict[str, Any], what: str) -> list[str]:
    rows = [[k, _cell(v["mvr"]), v["ties"], v["violations"]] for k, v in o.items() if k != "n"]
    title = f"Ordering by claim-side penalty, {o['n']} {what} (tie = violation):"
    return _md(title, ["baseline", "MVR", "ties", "violations"], rows)


def render_demo(res: dict[str, Any]) -> list[str]:
    n = res["n"]
    fams = [[r["baseline"], r["family"], r["calibrated"], r["raised"]] for r in res["families"]]
    out = _md(
        f"Bundled demo set, {n} pairs: claims where the cue fires",
        ["baseline", "cue family", f"calibrated (n={n})", f"raised (n={n})"],
        fams,
        left=2,
    )
    axes = [
        [a, c["calibrated"], c["raised"], f"{c['raised_own_axis']}/{c['own_axis_pairs']}"]
        for a, c in res["axes"].items()
    ]
    out += [
        "",
        *_md(
            "forcecheck-axis on the demo set: claims where each axis fires",
            ["axis", "calibrated", "raised", "raised, own-axis pairs"],
            axes,
        ),
    ]
    return [*out, "", *_render_ordering(res["ordering"], "demo pairs")]


def detect_format(path: Path) -> str:
    """yu2019 for a CSV whose header has sentence and label; insciout for JSON Lines."""
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
    if first.lstrip().startswith("{"):
        return "insciout"
    if "sentence" in first and "label" in first:
        return "yu2019"
    raise CorpusError(f"{path}: cannot tell the format; pass --format yu2019|insciout")


def run(corpus: Path, fmt: str, demo: bool) -> dict[str, Any]:
    """Every table for `corpus` (and the demo set unless `demo` is false)."""
    fmt = detect_format(corpus) if fmt == "auto" else fmt
    if fmt == "yu2019":
        result = yu2019_table(read_yu2019(corpus))
    else:
        result = insciout_table(read_jsonl(corpus, INSCIOUT_FIELDS))
    return {"corpus": result, "demo": demo_table() if demo else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, required=True, help="the corpus file, as released")
    ap.add_argument("--format", default="auto", choices=("auto", "yu2019", "insciout"))
    ap.add_argument("--no-demo", action="store_true", help="skip the bundled demo tables")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    try:
        res = run(args.corpus, args.format, not args.no_demo)
    except (CorpusError, OSError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    c = res["corpus"]
    lines = render_yu(c) if c["corpus"] == "yu2019" else render_insciout(c)
    if res["demo"] is not None:
        lines += ["", *render_demo(res["demo"])]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
