"""A battery of malformed inputs through the real CLI entry point (`assay.cli.main`).

Every case must end with a non-zero exit, no traceback, and exactly one stderr line
`error: ...` naming the file (and line or field where there is one), and must leave no
run directory behind that a later `--resume` could mistake for a run.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke
from _item_runs import write_item_run

ROW: dict[str, object] = dict(id="p1", evidence="X was linked to Y.", axis="relation")
ROW |= dict(calibrated_claim="X is associated with Y.", raised_claim="X causes Y.", severity=2)
GOOD_LINE = json.dumps(ROW)
RUN_FILES = ("manifest.json", "judgments.jsonl", "metrics.json", "verifications.jsonl")
PROMPT = """+++
id = "my-judge"
version = 1
task = "judge"
variables = ["evidence", "claim"]
output_schema = "SupportVerdict"
labels = ["fully_supported", "unsupported"]
[scores]
fully_supported = 1.0
unsupported = 0.0
+++
=== user ===
{{ evidence }} / {{ claim }}
"""

# A case writes its inputs into a fresh directory and returns (argv, needles): the
# arguments of `assay`, and the strings its one error line must contain.
Argv = tuple[list[str], list[str]]
Case = Callable[[Path], Argv]
# Cases run as if these modules were not installed (the `local` extra).
WITHOUT_LOCAL_EXTRA = {"nli-local-without-extra", "hf-judge-without-extra"}


def _w(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _spec(d: Path, body: str, *, dataset: str = "builtin:forcebench-demo", top: str = "") -> Path:
    head = f'name = "t"\noutput_dir = "{d / "out"}"\n{top}'
    if dataset:
        head += f'[[datasets]]\npath = "{dataset}"\n'
    return _w(d / "spec.toml", head + body)


BASELINE = '[[baselines]]\nname = "token-overlap"\n'
DEMO_RUN = Path(__file__).parent / "fixtures" / "runs_v0_1" / "demo"


def _demo_run(d: Path, name: str) -> Path:
    """A copy of the v0.1 demo run (ForceBench pairs and factuality) named `name`."""
    run = Path(shutil.copytree(DEMO_RUN, d / name))
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    _w(run / "manifest.json", json.dumps({**manifest, "name": name}))
    return run


def _labelled_run(d: Path) -> Path:
    """An items run: two judges on two labelled items."""
    judgments = [{"item_id": f"i{k}", "judge_id": j, "label": "yes"} for j in "AB" for k in (0, 1)]
    items = [{"item_id": f"i{k}", "gold_label": "yes"} for k in (0, 1)]
    return write_item_run(d / "labelled", "labelled", items, judgments)


LOOPBACK = 'api_base = "http://127.0.0.1:9/v1"\n'


def _run(
    d: Path, body: str, *needles: str, dataset: str = "builtin:forcebench-demo", top: str = ""
) -> Argv:
    """`assay run` on a spec; the error names the spec unless a needle names another file."""
    spec = _spec(d, body, dataset=dataset, top=top)
    names_file = any(n.split(":")[0].endswith((".jsonl", ".csv")) for n in needles)
    return ["run", str(spec), "--no-progress"], [*([] if names_file else ["spec.toml"]), *needles]


def _dataset(d: Path, name: str, content: str | bytes, *needles: str) -> Argv:
    path = d / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        _w(path, content)
    return ["validate", str(path)], [name, *needles]


def _prompt_case(d: Path, text: str, *needles: str, ref: str = "my-judge@1") -> Argv:
    _w(d / "prompts" / "p.prompt", text)
    return ["prompts", "show", ref, "--prompt-dir", str(d / "prompts")], ["p.prompt", *needles]


def _baseline_run(d: Path) -> Path:
    """A real, complete run directory to damage."""
    spec = _spec(d / "src", BASELINE)
    assert invoke(["run", str(spec), "--no-progress"])[0] == 0
    return d / "src" / "out"


def _corrupt_middle_line(d: Path) -> Argv:
    run = _baseline_run(d)
    lines = (run / "judgments.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = '{"dataset": "x", "pair_id": \n'
    (run / "judgments.jsonl").write_text("".join(lines), encoding="utf-8")
    return ["recompute", str(run)], ["judgments.jsonl:6"]


def _resume_corrupt_manifest(d: Path) -> Argv:
    run = _baseline_run(d)
    (run / "manifest.json").write_text('{"name": "t", ', encoding="utf-8")
    spec = d / "src" / "spec.toml"
    return ["run", str(spec), "--no-progress"], ["manifest.json:1", "damaged", "--output-dir"]


def _imported_run(d: Path) -> Argv:
    rows = [{"id": "a1", "sentence_id": 0, "sentence": "S.", "claim": "C.", "claim_id": 0}]
    verif = [{**rows[0], "evidence": "E.", "raw": "True", "score": 1.0}]
    _w(d / "ms" / "decompositions.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    _w(d / "ms" / "verifications.jsonl", "".join(json.dumps(r) + "\n" for r in verif))
    code, _, err = invoke(["import-medscore", str(d / "ms"), "--output-dir", str(d / "imp")])
    assert code == 0, err
    return ["reparse", str(d / "imp")], ["imp", "MedScore", "import"]


def _dataset_dir(d: Path) -> Argv:
    (d / "pairs.jsonl").mkdir()
    return ["validate", str(d / "pairs.jsonl")], ["pairs.jsonl", "directory"]


def _empty_dir(d: Path) -> Argv:
    (d / "empty").mkdir()
    return ["report", str(d / "empty")], ["empty", "manifest.json"]


GOLD_CSV = "id,response,context,label,r1\nc1,A causes B.,A was linked to B.,yes,supported\n"
GOLD_CSV += "c2,B is C.,B was linked to C.,no,unsupported\n"
RATER_CSV = "id,response,context,label,r1\nc1,A causes B.,A was linked to B.,supported,yes\n"
RATER_CSV += "c2,B is C.,B was linked to C.,unsupported,no\n"


def _gold_case(d: Path, csv: str, extra: str, command: str, *needles: str) -> Argv:
    """An items dataset whose gold or rater labels are not the baseline's labels."""
    _w(d / "claims.csv", csv)
    body = f'kind = "items"\ngold_label_column = "label"\nraters = ["r1"]\n{extra}'
    body += 'variables = { claim = "response", evidence = "context" }\n' + BASELINE
    spec = _spec(d, body, dataset=str(d / "claims.csv"))
    flags = ["--no-progress"] if command == "run" else []
    return [command, str(spec), *flags], list(needles)


def _html_into_directory(d: Path) -> Argv:
    (d / "page.html").mkdir()
    run = _baseline_run(d)
    return ["report", str(run), "-f", "html", "-o", str(d / "page.html")], ["page.html"]


def _spec_output_dir_is_a_file(d: Path) -> Argv:
    _w(d / "out", "not a directory")
    return ["run", str(_spec(d, BASELINE))], ["spec.toml", "output_dir", "existing file"]


def _local_model_dir(d: Path) -> Path:
    _w(d / "nli" / "config.json", "{}")
    return d / "nli"


def _judge_with(prompts: str) -> str:
    return f'[[judges]]\nmodels = ["openai/x"]\nprompts = [{prompts}]\n{LOOPBACK}'


FACT = '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'

_POLICY_ARGS = {"apply": ["--policy", "p.toml"], "compare": ["--a", "x", "--b", "y"]}
_STEPS = ", ".join(f'"{k / 100:.2f}"' for k in range(101))  # 101 values
_BIG_GRID = f"grid = {{ a = [{_STEPS}], b = [{_STEPS}], c = ['0.1', '0.2'] }}\n"
_BIG_GRID += '[[objectives]]\nmetric = "coverage"\n'

CASES: dict[str, Case] = {
    # ---- datasets (assay validate, and through a spec) ---------------------------------
    "dataset-bad-json-line": lambda d: _dataset(
        d, "pairs.jsonl", GOOD_LINE + "\n{not json\n", "pairs.jsonl:2"
    ),
    "dataset-missing-field": lambda d: _dataset(
        d,
        "pairs.jsonl",
        json.dumps({k: v for k, v in ROW.items() if k != "raised_claim"}) + "\n",
        "pairs.jsonl:1",
        "raised_claim",
    ),
    "dataset-bad-axis": lambda d: _dataset(
        d, "pairs.jsonl", json.dumps({**ROW, "axis": "color"}) + "\n", "pairs.jsonl:1", "axis"
    ),
    "dataset-csv-missing-column": lambda d: _dataset(
        d, "pairs.csv", "id,evidence,calibrated_claim,axis\np1,E,C,relation\n", "raised_claim"
    ),
    "dataset-empty-file": lambda d: _dataset(d, "pairs.jsonl", ""),
    "dataset-not-utf8": lambda d: _dataset(d, "pairs.jsonl", b'{"id": "\xff\xfe"}\n'),
    "dataset-is-a-directory": _dataset_dir,
    "dataset-unknown-builtin-in-spec": lambda d: _run(
        d, BASELINE, "datasets[0].path", "nope", dataset="builtin:nope"
    ),
    "answers-unknown-format-in-spec": lambda d: _run(
        d,
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo", format = "weird" }]\n'
        'verifiers = [{ kind = "overlap" }]\n',
        "factuality.datasets[0]",
        "weird",
        dataset="",
    ),
    "dataset-missing-in-spec": lambda d: _run(
        d, BASELINE, "nope.jsonl", dataset=str(d / "nope.jsonl")
    ),
    "dataset-bad-row-in-spec": lambda d: _run(
        d,
        BASELINE,
        "bad.jsonl:1",
        "axis",
        dataset=str(_w(d / "bad.jsonl", json.dumps({**ROW, "axis": 7}) + "\n")),
    ),
    # ---- specs ---------------------------------------------------------------------------
    "spec-toml-syntax": lambda d: _run(d, "[[baselines]\nname = 'x'\n", "TOML"),
    "spec-unknown-key": lambda d: _run(d, BASELINE, "'bootstrapp'", top="bootstrapp = 10\n"),
    "spec-unknown-key-in-block": lambda d: _run(d, BASELINE + "parms = {}\n", "baselines[0].parms"),
    "spec-wrong-type": lambda d: _run(d, BASELINE, "'seed'", "integer", top='seed = "zero"\n'),
    "spec-models-empty": lambda d: _run(
        d, '[[judges]]\nmodels = []\nprompts = ["force-aware@1"]\n', "judges[0].models"
    ),
    "spec-unknown-prompt": lambda d: _run(
        d, _judge_with('"force-aware@1", "no-such@1"'), "judges[0].prompts[1]", "no-such@1"
    ),
    "spec-unknown-baseline": lambda d: _run(
        d, '[[baselines]]\nname = "no-such-baseline"\n', "baselines[0]"
    ),
    "spec-unknown-verifier-kind": lambda d: _run(
        d, FACT + 'verifiers = [{ kind = "oracle" }]\n', "factuality.verifiers[0]", dataset=""
    ),
    "spec-bootstrap-negative": lambda d: _run(d, BASELINE, "'bootstrap'", top="bootstrap = -5\n"),
    "spec-block-initial-wait-negative": lambda d: _run(
        d, _judge_with('"generic-support@1"') + "initial_wait_s = -1\n", "judges[0].initial_wait_s"
    ),
    # Every size parameter has an upper bound, checked at load.
    "spec-bootstrap-too-large": lambda d: _run(
        d, BASELINE, "'bootstrap'", "100000", top="bootstrap = 1000000000\n"
    ),
    "compare-n-boot-too-large": lambda d: (
        ["compare", str(d), "--n-boot", "100001"],
        ["--n-boot", "less than or equal to 100000"],
    ),
    # Compare of runs with nothing to compare.
    "compare-runs-share-no-item": lambda d: (
        ["compare", str(_labelled_run(d)), str(_demo_run(d, "demo"))],
        ["runs labelled (2 items), demo (60 ForceBench pairs", "no item in common"],
    ),
    "compare-reference-shares-no-metric": lambda d: (
        ["compare", str(_demo_run(d, "demo")), "--reference", "baseline:overlap"]
        + ["--metric", "mvr"],
        ["--reference 'baseline:overlap'", "shares no metric", "its metrics: none"],
    ),
    "compare-reference-bare-id-of-two-runs": lambda d: (
        ["compare", str(_demo_run(d, "a")), str(_demo_run(d, "b"))]
        + ["--reference", "baseline:token-overlap"],
        ["did you mean a/baseline:token-overlap or b/baseline:token-overlap"],
    ),
    **{
        f"policies-{cmd}-resamples-too-large": (
            lambda d, c=cmd: (
                ["policies", c, str(d), *_POLICY_ARGS[c], "--resamples", "100001"],
                ["--resamples", "less than or equal to 100000"],
            )
        )
        for cmd in ("apply", "compare")
    },
    "policies-apply-workers-too-many": lambda d: (
        ["policies", "apply", str(d), "--policy", "p.toml", "--workers", "1000"],
        ["--workers", "less than or equal to 64"],
    ),
    "policies-tune-grid-too-large": lambda d: (
        [
            "policies",
            "tune",
            str(d),
            "--policy",
            str(_w(d / "p.toml", "")),  # a grid is read before the policy file and run
            "--name",
            "x",
            "--grid",
            str(_w(d / "grid.toml", _BIG_GRID)),
        ],
        ["grid.toml", "grid", "20402 candidates", "10000"],
    ),
    "spec-duplicate-dataset-names": lambda d: _run(
        d, '[[datasets]]\npath = "builtin:forcebench-demo"\n' + BASELINE, "name"
    ),
    "spec-missing-file": lambda d: (["run", str(d / "absent.toml")], ["absent.toml"]),
    "spec-judge-with-verify-prompt": lambda d: _run(
        d,
        _judge_with('"force-aware@1", "verify-context@1"'),
        "judges[0].prompts[1]",
        'task = "judge"',
    ),
    "spec-verifier-with-judge-prompt": lambda d: _run(
        d,
        FACT + 'verifiers = [{ kind = "context", model = "openai/x", prompt = '
        '"force-aware@1", api_base = "http://127.0.0.1:9/v1" }]\n',
        "factuality.verifiers[0]",
        'task = "verify"',
        dataset="",
    ),
    "spec-decomposer-with-judge-prompt": lambda d: _run(
        d,
        FACT + 'decomposer = { kind = "llm", model = "openai/x", prompt = "force-aware@1", '
        'api_base = "http://127.0.0.1:9/v1" }\nverifiers = [{ kind = "overlap" }]\n',
        "factuality.decomposer.prompt",
        'task = "decompose"',
        dataset="",
    ),
    "spec-no-work": lambda d: _run(d, "", "judges", dataset="builtin:forcebench-demo"),
    "nli-local-without-extra": lambda d: _run(
        d,
        FACT + f'verifiers = [{{ kind = "nli-local", model = "hf-nli/{_local_model_dir(d)}" }}]\n',
        "factuality.verifiers[0]",
        "pip install 'assay[local]'",
        dataset="",
    ),
    "hf-judge-without-extra": lambda d: _run(
        d,
        f'[[judges]]\nmodels = ["hf/{_local_model_dir(d)}"]\nprompts = ["force-aware@1"]\n',
        "judges[0].models[0]",
        "pip install 'assay[local]'",
    ),
    "spec-output-dir-is-a-file": _spec_output_dir_is_a_file,
    "verifier-without-api-key": lambda d: _run(
        d,
        FACT + 'verifiers = [{ kind = "context", model = "openai/gpt-4o-mini" }]\n',
        "openai/gpt-4o-mini",
        "OPENAI_API_KEY",
        dataset="",
    ),
    # ---- prompts ---------------------------------------------------------------------------
    "prompt-bad-front-matter": lambda d: _prompt_case(
        d, PROMPT.replace('task = "judge"', "task = judge"), "front matter"
    ),
    "prompt-no-front-matter": lambda d: _prompt_case(d, "=== user ===\nhi\n", "front matter"),
    "prompt-undeclared-variable": lambda d: _prompt_case(
        d, PROMPT + "{{ question }}\n", "question"
    ),
    "prompt-same-version-different-bytes": lambda d: _prompt_case(
        d, PROMPT.replace("my-judge", "force-aware"), "force-aware@1", ref="force-aware@1"
    ),
    "prompt-unknown-task": lambda d: _prompt_case(
        d, PROMPT.replace('task = "judge"', 'task = "rank"'), "task"
    ),
    "prompt-missing-user-section": lambda d: _prompt_case(
        d, PROMPT.replace("=== user ===", "=== system ==="), "user"
    ),
    # ---- run directories -------------------------------------------------------------------
    "report-on-a-file": lambda d: (["report", str(_w(d / "f.txt", "x"))], ["f.txt", "run dir"]),
    "report-on-empty-dir": _empty_dir,
    "report-on-missing-dir": lambda d: (["report", str(d / "nothing")], ["nothing"]),
    "report-corrupt-manifest": lambda d: (
        ["report", str(_w(d / "r" / "manifest.json", '{"name": ').parent)],
        ["manifest.json:1", "damaged"],
    ),
    "recompute-on-a-file": lambda d: (
        ["recompute", str(_w(d / "f.txt", "x"))],
        ["f.txt", "run dir"],
    ),
    "reparse-corrupt-manifest": lambda d: (
        ["reparse", str(_w(d / "r" / "manifest.json", "[1, 2]").parent)],
        ["manifest.json", "JSON object"],
    ),
    "recompute-corrupt-judgments-middle-line": _corrupt_middle_line,
    "resume-with-corrupt-manifest": _resume_corrupt_manifest,
    "reparse-imported-medscore-run": _imported_run,
    # ---- CLI arguments ---------------------------------------------------------------------
    "report-html-output-is-a-directory": _html_into_directory,
    "report-unknown-format": lambda d: (
        ["report", str(_baseline_run(d)), "-f", "pdf"],
        ["--format", "pdf", "html"],
    ),
    "render-missing-data-file": lambda d: (
        ["prompts", "render", "force-aware@1", "--data", str(d / "row.json")],
        ["row.json"],
    ),
    "render-data-not-an-object": lambda d: (
        ["prompts", "render", "force-aware@1", "--data", str(_w(d / "row.json", "[1]"))],
        ["row.json", "object"],
    ),
    "render-missing-variable": lambda d: (
        ["prompts", "render", "force-aware@1", "--data", str(_w(d / "row.json", "{}"))],
        ["row.json", "evidence"],
    ),
    "run-output-dir-is-a-file": lambda d: (
        ["run", str(_spec(d, BASELINE)), "--output-dir", str(_w(d / "f.txt", "x"))],
        ["f.txt", "existing file", "--output-dir"],
    ),
    "run-cache-dir-is-a-file": lambda d: (
        [
            "run",
            str(_spec(d, _judge_with('"force-aware@1"'))),
            "--cache-dir",
            str(_w(d / "c.txt", "x")),
        ],
        ["c.txt", "cache directory", "--cache-dir"],
    ),
    "cache-info-cache-dir-is-a-file": lambda d: (
        ["cache", "info", "--cache-dir", str(_w(d / "c.txt", "x"))],
        ["c.txt", "cache directory"],
    ),
    "import-medscore-output-is-a-file": lambda d: (
        ["import-medscore", str(d), "--output-dir", str(_w(d / "f.txt", "x"))],
        ["f.txt", "existing file", "--output-dir"],
    ),
    "import-medscore-source-missing": lambda d: (
        ["import-medscore", str(d / "gone"), "--output-dir", str(d / "imp")],
        ["gone", "folder not found"],
    ),
    "import-medscore-corrupt-source": lambda d: (
        [
            "import-medscore",
            str(_w(d / "ms" / "decompositions.jsonl", "{oops\n").parent),
            "--output-dir",
            str(d / "imp"),
        ],
        ["decompositions.jsonl:1", "JSON"],
    ),
    "run-unknown-option": lambda d: (["run", "x.toml", "--bogus"], ["--bogus", "--help"]),
    # A second writer of a run directory (here: this process holds it).
    "recompute-while-another-writes": lambda d: (
        ["recompute", str(_locked_run(d / "run"))],
        [str(d / "run"), "another assay process (pid", "is writing this run directory"],
    ),
    # Gold that does not fit the judge's labels.
    **{
        f"items-gold-not-judge-labels-{command}": (
            lambda d, c=command: _gold_case(
                d, GOLD_CSV, "", c, "claims.csv:2", "'label'", "'yes', 'no'", "gold_map"
            )
        )
        for command in ("run", "validate")
    },
    "items-rater-not-judge-labels": lambda d: _gold_case(
        d,
        RATER_CSV,
        "",
        "run",
        "claims.csv:2",
        "'r1'",
        "rater values 'yes', 'no'",
        "supported, unsupported",
    ),
    "items-gold-map-to-unknown-label": lambda d: _gold_case(
        d, GOLD_CSV, 'gold_map = { yes = "true", no = "unsupported" }\n', "run", "'true'"
    ),
    "items-gold-map-keys-collide": lambda d: _gold_case(
        d,
        GOLD_CSV,
        'gold_map = { yes = "supported", " YES" = "unsupported" }\n',
        "validate",
        "spec.toml",
        "datasets[0].gold_map",
        "same value",
    ),
}


def _blank_flag(d: Path, *argv: str) -> Argv:
    """A path option or argument given as '' or blank: a usage error naming it."""
    return [a.replace("SPEC", str(_spec(d, BASELINE))).replace("DIR", str(d)) for a in argv], [
        "empty or only whitespace"
    ]


def _items_spec(d: Path, csv: str, block: str, *needles: str) -> Argv:
    """An items run over `claims.csv` whose `response` column is the variable `claim`."""
    _w(d / "claims.csv", csv)
    body = 'kind = "items"\ngold_label_column = "label"\n' + block
    body += 'variables = { claim = "response", evidence = "context" }\n' + BASELINE
    return _run(d, body, *needles, dataset=str(d / "claims.csv"))


CLAIMS = "id,response,context,label\nc1,A causes B.,A was linked to B.,supported\n"


def _cache_env_file(d: Path) -> Argv:
    """ASSAY_CACHE_DIR (set by CASE_ENV) names a file; the run calls no model."""
    return ["run", str(_spec(d, BASELINE)), "--no-progress"], ["c.txt", "ASSAY_CACHE_DIR"]


# Inputs that must not be taken literally.
LITERAL_INPUT_CASES: dict[str, Case] = {
    "run-output-dir-empty": lambda d: _blank_flag(d, "run", "SPEC", "--output-dir", ""),
    "run-output-dir-blank": lambda d: _blank_flag(d, "run", "SPEC", "--output-dir", "  "),
    "run-cache-dir-empty": lambda d: _blank_flag(d, "run", "SPEC", "--cache-dir", ""),
    "run-spec-empty": lambda d: _blank_flag(d, "run", ""),
    "report-output-empty": lambda d: _blank_flag(d, "report", "DIR", "-o", ""),
    "compare-output-blank": lambda d: _blank_flag(d, "compare", "DIR", "-o", " "),
    "cache-info-cache-dir-empty": lambda d: _blank_flag(d, "cache", "info", "--cache-dir", ""),
    "prompts-list-prompt-dir-empty": lambda d: _blank_flag(
        d, "prompts", "list", "--prompt-dir", ""
    ),
    "policies-apply-policy-empty": lambda d: _blank_flag(
        d, "policies", "apply", "DIR", "--policy", ""
    ),
    "validate-empty-path": lambda d: _blank_flag(d, "validate", " "),
    "spec-output-dir-blank": lambda d: (
        [
            "run",
            str(
                _w(
                    d / "spec.toml",
                    'output_dir = " "\n[[datasets]]\npath = "builtin:forcebench-demo"\n' + BASELINE,
                )
            ),
        ],
        ["spec.toml", "'output_dir'", "empty"],
    ),
    "spec-dataset-path-empty": lambda d: _run(
        d, BASELINE, "datasets[0].path", "empty", dataset=" "
    ),
    "spec-retrieval-corpus-blank": lambda d: _run(
        d,
        FACT + '[[factuality.verifiers]]\nkind = "retrieval"\nmodel = "openai/x"\ncorpus = " "\n',
        "factuality.verifiers[0].corpus",
        "empty",
        dataset="",
    ),
    "spec-prompt-dirs-blank": lambda d: _run(
        d, BASELINE, "prompt_dirs[0]", "empty", top='prompt_dirs = [" "]\n'
    ),
    "spec-prompt-dirs-missing": lambda d: _run(
        d, BASELINE, "prompt_dirs[0]", "nope", "not found", top='prompt_dirs = ["nope"]\n'
    ),
    "run-spec-is-a-directory": lambda d: (["run", str(d)], [str(d), "is a directory"]),
    "run-cache-dir-is-a-file-no-model": lambda d: (
        ["run", str(_spec(d, BASELINE)), "--cache-dir", str(_w(d / "c.txt", "x"))],
        ["c.txt", "cache directory", "--cache-dir"],
    ),
    "run-cache-env-is-a-file": _cache_env_file,
    "items-empty-mapped-cell": lambda d: _items_spec(
        d, CLAIMS + "c2,,A was linked to B.,supported\n", "", "claims.csv:3", "'response'", "empty"
    ),
    "items-empty-mapped-cell-prompted-judge": lambda d: (
        _w(d / "claims.csv", CLAIMS + "c2,A causes B.,,supported\n"),
        _run(
            d,
            'kind = "items"\nvariables = { claim = "response", evidence = "context" }\n'
            + _judge_with('"force-aware@1"')
            + 'api_key_env = "HOME"\n',
            "claims.csv:3",
            "'context'",
            "(variable 'evidence') is empty",
            dataset=str(d / "claims.csv"),
        ),
    )[1],
    "items-csv-wrong-delimiter": lambda d: _items_spec(
        d, CLAIMS.replace(",", ";"), 'delimiter = ","\n', "claims.csv", "';'-separated", "delimiter"
    ),
    "items-csv-bad-delimiter": lambda d: _items_spec(
        d, CLAIMS, 'delimiter = ",,"\n', "datasets[0].delimiter", "one character"
    ),
}
CASES |= LITERAL_INPUT_CASES


def _policies_run(d: Path, *args: str) -> Argv:
    """`assay policies ARGS` over a real factuality run and a policy file (its
    options are checked before any output is written); RUN and P.TOML are substituted."""
    spec = f'name = "p"\noutput_dir = "{d / "run"}"\n{FACT}'
    spec += 'decomposer = { kind = "sentence" }\nverifiers = [{ kind = "overlap" }]\n'
    assert invoke(["run", str(_w(d / "spec.toml", spec)), "--no-progress"])[0] == 0
    policy = '[[policies]]\nname = "fc"\nkind = "fail_closed"\n'
    _w(d / "p.toml", policy + '[[policies]]\nname = "cs"\nkind = "claim_selective"\n')
    paths = {"RUN": str(d / "run"), "P.TOML": str(d / "p.toml")}
    return ["policies", *(paths.get(a, a) for a in args)], []


def _with(argv: Argv, *needles: str) -> Argv:
    return argv[0], [*argv[1], *needles]


_SWEEP = ("sweep", "RUN", "--policy", "P.TOML", "--name")
POLICY_OUTPUT_CASES: dict[str, Case] = {
    "policies-sweep-range-reversed": lambda d: _with(
        _policies_run(d, *_SWEEP, "fc", "--from", "0.9", "--to", "0.6"), "--from", "0.9 is above"
    ),
    "policies-sweep-from-above-default-to": lambda d: _with(
        _policies_run(d, *_SWEEP, "cs", "--from", "0.95"), "--from", "0.90 (support's default)"
    ),
    "policies-sweep-step-larger-than-range": lambda d: _with(
        _policies_run(d, *_SWEEP, "fc", "--from", "0.6", "--to", "0.7", "--step", "0.5"),
        "--step",
        "larger than the range",
    ),
    "policies-sweep-step-infinite": lambda d: _with(
        _policies_run(d, *_SWEEP, "cs", "--step", "inf"), "--step", "'inf'"
    ),
    "policies-apply-by-unknown": lambda d: _with(
        _policies_run(d, "apply", "RUN", "--policy", "P.TOML", "--name", "cs", "--by", "colour"),
        "--by",
        "colour",
    ),
    "policies-apply-split-without-answers": lambda d: _with(
        _policies_run(d, "apply", "RUN", "--policy", "P.TOML", "--split", "test"),
        "--split",
        "'test'",
        "it has",
    ),
    "policies-compare-metrics-empty": lambda d: (
        ["policies", "compare", str(d), "--a", "x", "--b", "y", "--metrics", ""],
        ["--metrics"],
    ),
    "policies-tune-write-policy-missing-folder": lambda d: (
        ["policies", "tune", str(d), "--policy", "p.toml", "--name", "x"]
        + ["--write-policy", str(d / "nowhere" / "t.toml")],
        ["--write-policy", "nowhere"],
    ),
    "policies-apply-random-state-negative": lambda d: (
        ["policies", "apply", str(d), "--policy", "p.toml", "--random-state", "-1"],
        ["--random-state", "greater than or equal to 0"],
    ),
    "policies-export-output-replaces-a-run-file": lambda d: (
        ["policies", "export", str(d), "--name", "x", "-o", str(_w(d / "verdicts.jsonl", "{}\n"))],
        ["--output", "verdicts.jsonl", "run directory"],
    ),
    "policies-export-output-is-a-directory": lambda d: (
        ["policies", "export", str(d), "--name", "x", "-o", str(d)],
        ["--output", "directory"],
    ),
}
CASES |= POLICY_OUTPUT_CASES
# Environment variables a case runs under: {case: {name: value with DIR for its folder}}.
CASE_ENV = {"run-cache-env-is-a-file": {"ASSAY_CACHE_DIR": "DIR/c.txt"}}


_HELD: list[object] = []  # writer locks held for the rest of the session


def _locked_run(run: Path) -> Path:
    """A run directory whose writer lock another writer (in this process) holds."""
    from assay.core.rundir_lock import WriterLock

    _w(run / "manifest.json", '{"status": "complete"}\n')
    lock = WriterLock(run, command="assay run", fix="wait for it to finish")
    lock.acquire()
    _HELD.append(lock)
    return run


def _run_state(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.name in RUN_FILES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_is_one_actionable_line(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("ASSAY_PROMPT_PATH", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if name in WITHOUT_LOCAL_EXTRA:
        for module in ("torch", "transformers"):
            monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    for var, value in CASE_ENV.get(name, {}).items():
        monkeypatch.setenv(var, value.replace("DIR", str(tmp_path)))
        _w(tmp_path / "c.txt", "x")
    argv, needles = CASES[name](tmp_path)
    before = _run_state(tmp_path)
    code, out, err = invoke(argv)
    assert code != 0, out + err
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one stderr line:\n{err}"
    line = lines[0]
    assert line.startswith("error: "), line
    assert "internal error" not in line, line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    assert _run_state(tmp_path) == before, "left run files behind"


def test_battery_is_big_enough() -> None:
    assert len(CASES) >= 30
