"""The CLI as users meet it: fast --help, and bad input as one `error:` line, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import invoke_as_process

from assay import __version__

HEAVY = ("litellm", "torch", "transformers")
BUILTIN_REFS = ["force-aware@1", "force-axis-free@1", "force-dummy-axis@1", "generic-support@1"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ASSAY_PROMPT_PATH", None)
    env["COLUMNS"] = "200"
    env["NO_COLOR"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _assay(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`assay ARGS` through `main()` in this process, in `_env()`'s environment and `cwd`.

    `main()` is what the console script runs: the exit status and the `error:` line are the
    same as in a process of their own, without starting one (a second per call). A few tests
    keep `_assay_process` (the real `python -m assay`): help, version, a typo'd spec and the
    non-UTF-8 inputs, where a traceback would come from the interpreter itself."""
    return invoke_as_process([str(a) for a in args], env=_env(), cwd=cwd)


def _assay_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Assert a clean user error: non-zero exit, a single `error:` line naming `needles`."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{proc.stderr}"
    line = lines[0]
    assert line.startswith("error:"), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


def _spec(path: Path, body: str, *, output_dir: Path) -> Path:
    path.write_text(f'name = "t"\noutput_dir = "{output_dir}"\n{body}', encoding="utf-8")
    return path


DEMO_DATASET = '[[datasets]]\npath = "builtin:forcebench-demo"\n'


# ---- help and imports ------------------------------------------------------------------


def test_help(tmp_path: Path) -> None:
    proc = _assay_process("--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for command in ("run", "report", "reparse", "validate", "prompts", "cache", "version"):
        assert command in proc.stdout
    assert proc.stderr == ""


def test_version(tmp_path: Path) -> None:
    proc = _assay_process("version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == __version__


def test_import_does_not_load_heavy_modules(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import assay, assay.cli, assay.errors\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


_HELP_SCRIPT = """
import json, runpy, sys
sys.argv = ["assay", *json.loads(sys.argv[1])]
code = None
try:
    runpy.run_module("assay", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write("RESULT " + json.dumps({{"code": code, "heavy": heavy}}) + "\\n")
"""


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["run", "--help"], ["prompts", "--help"], ["prompts", "list"], ["version"]],
)
def test_cli_commands_do_not_load_heavy_modules(tmp_path: Path, argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _HELP_SCRIPT.format(heavy=HEAVY), json.dumps(argv)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    result_lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("RESULT ")]
    assert result_lines, proc.stderr
    result = json.loads(result_lines[-1].removeprefix("RESULT "))
    assert result["code"] in (0, None), proc.stderr
    assert result["heavy"] == [], f"`assay {' '.join(argv)}` imported {result['heavy']}"


def test_help_importtime_has_no_heavy_modules(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "assay", "--help"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert imported, "no -X importtime output"
    assert "typer" in imported
    assert not imported & set(HEAVY), imported & set(HEAVY)


# ---- working commands ------------------------------------------------------------------


def test_prompts_list(tmp_path: Path) -> None:
    proc = _assay("prompts", "list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for ref in BUILTIN_REFS:
        assert ref in proc.stdout


def test_prompts_show(tmp_path: Path) -> None:
    proc = _assay("prompts", "show", "force-aware", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "force-aware@1" in proc.stdout and "force_calibrated" in proc.stdout


def test_prompts_render(tmp_path: Path) -> None:
    data = tmp_path / "vars.json"
    data.write_text(json.dumps({"evidence": "EVID-123", "claim": "CLAIM-456"}), encoding="utf-8")
    proc = _assay("prompts", "render", "generic-support@1", "--data", data, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "EVID-123" in proc.stdout and "CLAIM-456" in proc.stdout


def test_validate_builtin_demo(tmp_path: Path) -> None:
    proc = _assay("validate", "builtin:forcebench-demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "pairs ok" in proc.stdout
    for axis in ("relation", "modality", "scope", "temporal", "numeric"):
        assert axis in proc.stdout


# ---- bad input: one line, names the location -------------------------------------------


def test_spec_typo_field_in_judges(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "typo.toml",
        DEMO_DATASET + '[[judges]]\nmodles = ["openai/x"]\nprompts = ["generic-support@1"]\n',
        output_dir=tmp_path / "out",
    )
    line = _one_error_line(_assay_process("run", spec, cwd=tmp_path), "typo.toml", "judges[0]")
    # pydantic reports the missing `models` before the unknown `modles`; either names it.
    assert "models" in line or "modles" in line, line
    assert not (tmp_path / "out").exists()


def test_spec_typo_optional_field_in_judges(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "typo2.toml",
        DEMO_DATASET
        + '[[judges]]\nmodels = ["openai/x"]\nprompts = ["generic-support@1"]\n'
        + "temprature = 0.3\n",
        output_dir=tmp_path / "out",
    )
    _one_error_line(_assay("run", spec, cwd=tmp_path), "typo2.toml", "judges[0].temprature")


def test_spec_typo_top_level_field(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "top.toml",
        "bootstrp = 10\n" + DEMO_DATASET + '[[baselines]]\nname = "token-overlap"\n',
        output_dir=tmp_path / "out",
    )
    _one_error_line(_assay("run", spec, cwd=tmp_path), "top.toml", "field 'bootstrp'")


def test_spec_unknown_prompt(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "unk.toml",
        DEMO_DATASET + '[[judges]]\nmodels = ["openai/x"]\nprompts = ["no-such-prompt@1"]\n',
        output_dir=tmp_path / "out",
    )
    line = _one_error_line(
        _assay("run", spec, cwd=tmp_path), "unk.toml", "judges[0].prompts", "no-such-prompt@1"
    )
    assert "generic-support@1" in line  # lists the known prompts
    assert not (tmp_path / "out").exists()


def test_spec_unknown_baseline(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "base.toml",
        DEMO_DATASET + '[[baselines]]\nname = "token-overlap"\n'
        '[[baselines]]\nname = "no-such-baseline"\n',
        output_dir=tmp_path / "out",
    )
    line = _one_error_line(
        _assay("run", spec, cwd=tmp_path), "base.toml", "baselines[1]", "no-such-baseline"
    )
    assert "token-overlap" in line  # lists the known baselines
    assert not (tmp_path / "out").exists()


def test_spec_dataset_with_malformed_row(tmp_path: Path) -> None:
    good = {
        "id": "a",
        "evidence": "E.",
        "calibrated_claim": "C.",
        "raised_claim": "R.",
        "axis": "scope",
    }
    bad = {"id": "b", "evidence": "E.", "raised_claim": "R.", "axis": "scope"}
    data = tmp_path / "data"
    data.mkdir()
    (data / "pairs.jsonl").write_text(
        json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8"
    )
    spec = _spec(
        tmp_path / "ds.toml",
        '[[datasets]]\npath = "data/pairs.jsonl"\n[[baselines]]\nname = "token-overlap"\n',
        output_dir=tmp_path / "out",
    )
    _one_error_line(
        _assay("run", spec, cwd=tmp_path), f"{data / 'pairs.jsonl'}:2", "calibrated_claim"
    )
    assert not (tmp_path / "out").exists()


def test_spec_not_found(tmp_path: Path) -> None:
    _one_error_line(_assay("run", tmp_path / "nope.toml", cwd=tmp_path), "nope.toml", "not found")


def test_spec_invalid_toml(tmp_path: Path) -> None:
    spec = tmp_path / "broken.toml"
    spec.write_text('name = "t"\n[[datasets]\n', encoding="utf-8")
    _one_error_line(_assay("run", spec, cwd=tmp_path), "broken.toml", "TOML")


def test_validate_malformed_dataset(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    row = {
        "id": "a",
        "evidence": "E.",
        "calibrated_claim": "C.",
        "raised_claim": "R.",
        "axis": "scope",
        "severity": 7,
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    _one_error_line(_assay("validate", path, cwd=tmp_path), f"{path}:1", "severity")


def test_prompts_render_missing_variable(tmp_path: Path) -> None:
    data = tmp_path / "vars.json"
    data.write_text(json.dumps({"claim": "only a claim"}), encoding="utf-8")
    _one_error_line(
        _assay("prompts", "render", "generic-support@1", "--data", data, cwd=tmp_path),
        "generic-support@1",
        "'evidence'",
        str(data),
    )


def test_prompts_render_bad_data_file(tmp_path: Path) -> None:
    data = tmp_path / "vars.json"
    data.write_text('{"claim": ', encoding="utf-8")
    _one_error_line(
        _assay("prompts", "render", "generic-support", "--data", data, cwd=tmp_path),
        str(data),
        "JSON",
    )
    _one_error_line(
        _assay(
            "prompts", "render", "generic-support", "--data", tmp_path / "no.json", cwd=tmp_path
        ),
        "no.json",
        "not found",
    )


def test_prompts_show_unknown(tmp_path: Path) -> None:
    line = _one_error_line(_assay("prompts", "show", "unknown", cwd=tmp_path), "'unknown'")
    for ref in BUILTIN_REFS:
        assert ref in line


def test_report_missing_dir(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-run"
    _one_error_line(_assay("report", missing, cwd=tmp_path), str(missing))


def test_report_unknown_format(tmp_path: Path) -> None:
    _one_error_line(_assay("report", tmp_path, "--format", "xml", cwd=tmp_path), "xml")


# ---- bugs: inputs that still produce a traceback ---------------------------------------


def _latin1_inputs(tmp_path: Path) -> dict[str, list[str | Path]]:
    row = {
        "id": "a",
        "evidence": "Caf\xe9 study.",
        "calibrated_claim": "C.",
        "raised_claim": "R.",
        "axis": "scope",
    }
    dataset = tmp_path / "latin1.jsonl"
    dataset.write_bytes((json.dumps(row, ensure_ascii=False) + "\n").encode("latin-1"))
    spec = tmp_path / "latin1.toml"
    spec.write_bytes(
        ('name = "caf\xe9"\n' + DEMO_DATASET + '[[baselines]]\nname = "token-overlap"\n').encode(
            "latin-1"
        )
    )
    data = tmp_path / "latin1.json"
    data.write_bytes('{"evidence": "caf\xe9", "claim": "c"}'.encode("latin-1"))
    return {
        "dataset": ["validate", dataset],
        "spec": ["run", spec],
        "render-data": ["prompts", "render", "generic-support", "--data", data],
        "render-data-is-dir": ["prompts", "render", "generic-support", "--data", tmp_path],
    }


@pytest.mark.parametrize("case", ["dataset", "spec", "render-data", "render-data-is-dir"])
def test_unreadable_inputs_are_one_line_errors(tmp_path: Path, case: str) -> None:
    """BUG (assay/datasets/_load.py `load_pairs`, assay/runs/spec/_spec.py `load_spec`,
    assay/cli.py `prompts_render`): a non-UTF-8 dataset, spec or --data file raises
    UnicodeDecodeError (and a directory passed as --data raises IsADirectoryError), which
    `main()` does not catch, so the user gets a traceback instead of one `error:` line."""
    argv = _latin1_inputs(tmp_path)[case]
    proc = _assay_process(*argv, cwd=tmp_path)
    if "Traceback" in proc.stderr:
        pytest.fail(
            f"`assay {' '.join(map(str, argv))}` printed a traceback ending in: "
            + proc.stderr.strip().splitlines()[-1]
        )
    _one_error_line(proc, "error:")


def test_cache_info_and_clear(tmp_path: Path) -> None:
    from assay.models import RawResponse, ResponseCache

    cache = ResponseCache(tmp_path / "cc")
    cache.set("k1", RawResponse(content="x", finish_reason="stop"))
    cache.close()
    info = subprocess.run(
        [sys.executable, "-m", "assay", "cache", "info", "--cache-dir", str(tmp_path / "cc")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert info.returncode == 0 and "1 entries" in info.stdout
    cleared = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "cache",
            "clear",
            "--yes",
            "--cache-dir",
            str(tmp_path / "cc"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cleared.returncode == 0 and "removed 1" in cleared.stdout
    assert len(ResponseCache(tmp_path / "cc")) == 0


# ---- preflight: refused before the run directory exists --------------------------------

_WITHOUT_LOCAL_EXTRA = """
import sys
sys.modules["torch"] = None  # as if the `local` extra were not installed
sys.modules["transformers"] = None
sys.argv = ["assay", *sys.argv[1:]]
from assay.cli import main
main()
"""


def test_nli_local_without_the_local_extra_is_refused_before_the_run_dir(
    tmp_path: Path,
) -> None:
    (tmp_path / "nli").mkdir()
    (tmp_path / "nli" / "config.json").write_text("{}", encoding="utf-8")
    spec = _spec(
        tmp_path / "nli.toml",
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'
        f'verifiers = [{{ kind = "nli-local", model = "hf-nli/{tmp_path / "nli"}" }}]\n',
        output_dir=tmp_path / "out",
    )
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_LOCAL_EXTRA, "run", str(spec), "--no-progress"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    _one_error_line(proc, "nli.toml", "factuality.verifiers[0]", "pip install 'assay[local]'")
    assert not (tmp_path / "out").exists()  # nothing a later resume could trust


def test_missing_api_key_leaves_no_run_directory(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path / "key.toml",
        DEMO_DATASET + '[[judges]]\nmodels = ["openai/gpt-4o-mini"]\nprompts = ["force-aware@1"]\n',
        output_dir=tmp_path / "out",
    )
    env = _env()
    env.pop("OPENAI_API_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "run", str(spec), "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    _one_error_line(proc, "OPENAI_API_KEY")
    assert not (tmp_path / "out").exists()


# ---- the safety net in main() ----------------------------------------------------------


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from assay.cli import main

    old, sys.argv = sys.argv, ["assay", *argv]
    try:
        with pytest.raises(SystemExit) as exit_info:
            main()
    finally:
        sys.argv = old
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def _fail_in_list(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    import assay.catalog

    def boom(section: str | None) -> None:
        raise exc

    monkeypatch.setattr(assay.catalog, "print_catalog", boom)


def test_unexpected_exception_is_one_internal_error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    _fail_in_list(monkeypatch, RuntimeError("boom\nsecond line"))
    code, err = _main(["list"], capsys)
    assert code != 0
    assert err.splitlines() == [
        "error: internal error: RuntimeError: boom second line (please report; rerun with "
        "ASSAY_DEBUG=1 for the traceback)"
    ]


def test_assay_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli import main

    monkeypatch.setenv("ASSAY_DEBUG", "1")
    _fail_in_list(monkeypatch, RuntimeError("boom"))
    monkeypatch.setattr(sys, "argv", ["assay", "list"])
    with pytest.raises(RuntimeError, match="boom"):
        main()


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (
            PermissionError(13, "Permission denied", "/data/runs/x"),
            "error: /data/runs/x: Permission denied; check its permissions or choose another path",
        ),
        (
            OSError(28, "No space left on device", "/data/runs/x/judgments.jsonl"),
            "error: /data/runs/x/judgments.jsonl: No space left on device; free some disk space "
            "or choose a path on another disk",
        ),
        (
            IsADirectoryError(21, "Is a directory", "report.html"),
            "error: report.html: Is a directory; expected a file, got a directory",
        ),
    ],
)
def test_os_errors_are_one_line_with_the_path(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    exc: OSError,
    expected: str,
) -> None:
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    _fail_in_list(monkeypatch, exc)
    code, err = _main(["list"], capsys)
    assert code == 2
    assert err.splitlines() == [expected]


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _main(["run", "spec.toml", "--bogus"], capsys)
    assert code == 2
    assert err.splitlines() == ["error: No such option: --bogus (see `assay run --help`)"]


def test_failed_run_status_still_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """typer.Exit from a command (a failed run) keeps its code through the handler."""
    import typer

    from assay.cli._errors import run_guarded

    app = typer.Typer()

    @app.command()
    def fail() -> None:
        raise typer.Exit(1)

    monkeypatch.setattr(sys, "argv", ["assay"])
    assert run_guarded(app) == 1


def test_failed_import_leaves_no_directory(tmp_path: Path) -> None:
    (tmp_path / "ms").mkdir()
    (tmp_path / "ms" / "verifications.jsonl").write_text("{oops\n", encoding="utf-8")
    out = tmp_path / "imported"
    proc = _assay("import-medscore", tmp_path / "ms", "--output-dir", out, cwd=tmp_path)
    _one_error_line(proc, "verifications.jsonl:1")
    assert not out.exists()


def test_one_line_messages_stay_one_line_when_piped(tmp_path: Path) -> None:
    """Piped output is read by scripts: a long path must not wrap a message in two (rich
    wraps at 80 columns when stdout is not a terminal)."""
    from assay.models import RawResponse, ResponseCache

    folder = tmp_path / ("a-long-folder-name-" * 6) / "cache"
    cache = ResponseCache(folder)
    cache.set("k1", RawResponse(content="x", finish_reason="stop"))
    cache.close()
    for command in (["info"], ["clear", "--yes"]):
        done = subprocess.run(
            [sys.executable, "-m", "assay", "cache", *command, "--cache-dir", str(folder)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COLUMNS": "80"},
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") == 1 and str(folder) in done.stdout, done.stdout
