"""`assay run` loads only what the command needs: a lean or baselines-only
run, a spec error and `--help` import no pandas, scipy, scikit-learn or litellm, nor the
policies, comparison and HTML report modules; a spec error does not load the runner.

Each case is a real `python -X importtime -m assay ...` process (the loopback server
answers the lean run), and the modules it imported are read from its import-time log,
so a module made eager again anywhere on the path fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.models._litellm_providers import _from_source, litellm_providers
from assay.testing import FakeOpenAIServer

HEAVY = ("pandas", "scipy", "sklearn", "statsmodels", "litellm", "torch")
NOT_FOR_A_RUN = ("assay.policies", "assay.compare", "assay.report._formats", "assay.view")
NOT_FOR_A_SPEC_ERROR = ("assay.runs.runner", "assay.runs.stages", "numpy", "aiohttp")
PAIR = (
    '{"id": "p1", "question": "Does coffee prevent diabetes?", "evidence": "A cohort study '
    'found lower incidence among coffee drinkers.", "calibrated_claim": "Coffee drinkers had '
    'a lower incidence.", "raised_claim": "Coffee prevents diabetes.", "axis": "relation", '
    '"severity": 2}\n'
)


def _imported(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The process's result and every module it imported (its -X importtime log)."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ASSAY_CACHE_DIR": str(cwd)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return proc, names


def _tops(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(p for p in prefixes if any(m == p or m.startswith(p + ".") for m in modules))


def _spec(tmp_path: Path, blocks: str) -> Path:
    (tmp_path / "data.jsonl").write_text(PAIR, encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "s"\nbootstrap = 100\n[[datasets]]\nname = "d"\npath = "data.jsonl"\n{blocks}',
        encoding="utf-8",
    )
    return spec


def test_a_lean_run_loads_no_heavy_module(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        _spec(
            tmp_path,
            f'[[judges]]\nmodels = ["openai/m"]\nprompts = ["generic-support@1"]\n'
            f'api_base = "{server.base_url}"\ntransport = "openai"\n'
            '[[baselines]]\nname = "token-overlap"\n',
        )
        proc, modules = _imported(["run", "spec.toml", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "complete: 4/4 judgments" in proc.stderr + proc.stdout
    assert "aiohttp" in modules and "assay.runs.stages._judge" in modules  # it did run
    assert _tops(modules, HEAVY + NOT_FOR_A_RUN) == []


def test_a_baselines_only_run_loads_no_client_and_no_stage_it_does_not_run(
    tmp_path: Path,
) -> None:
    _spec(tmp_path, '[[baselines]]\nname = "token-overlap"\n')
    proc, modules = _imported(["run", "spec.toml", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    stages = ("assay.runs.stages._gate", "assay.runs.stages._factuality", "aiohttp")
    assert _tops(modules, HEAVY + NOT_FOR_A_RUN + stages) == []


def test_a_spec_error_loads_neither_litellm_nor_the_runner(tmp_path: Path) -> None:
    _spec(tmp_path, '[[judges]]\nmodels = ["nosuchprovider/x"]\nprompts = ["generic-support@1"]\n')
    proc, modules = _imported(["run", "spec.toml"], tmp_path)
    assert proc.returncode == 2
    assert "unknown provider 'nosuchprovider'" in proc.stderr
    assert _tops(modules, HEAVY + NOT_FOR_A_RUN + NOT_FOR_A_SPEC_ERROR) == []


@pytest.mark.parametrize("args", [["run", "--help"], ["--help"]])
def test_help_loads_no_run_module(tmp_path: Path, args: list[str]) -> None:
    proc, modules = _imported(args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _tops(modules, HEAVY + NOT_FOR_A_RUN + NOT_FOR_A_SPEC_ERROR) == []


def test_providers_read_from_source_are_litellms_own_list() -> None:
    import litellm

    from_import = {str(getattr(p, "value", p)) for p in litellm.provider_list}
    assert _from_source() == from_import
    assert {"openai", "anthropic", "ollama"} <= litellm_providers()


def test_is_prompted_agrees_with_the_protocol_and_remembers_only_whole_classes() -> None:
    from assay.core.judging import PromptedJudge, is_prompted
    from assay.judges import LLMJudge, baseline

    class Partial:
        id = "partial"

        def describe(self) -> dict[str, str]:
            return {}

        async def __call__(self, item: object, *, where: str | None = None) -> None: ...

    whole = Partial()
    whole.request_for = lambda item, where=None: None  # type: ignore[attr-defined]
    whole.judge_variables = lambda variables, where=None: None  # type: ignore[attr-defined]
    judges = [baseline("token-overlap"), Partial(), whole]
    for judge in judges * 2:
        assert is_prompted(judge) == isinstance(judge, PromptedJudge)
    assert is_prompted(whole) and not is_prompted(Partial())  # the class is not remembered
    assert all(hasattr(LLMJudge, name) for name in ("request_for", "judge_variables"))
