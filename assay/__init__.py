"""assay: reproducible LLM judges and claim-level verification.

The public surface, all importable as ``assay.NAME``:

- run a spec: `run`, `run_async` (inside an event loop), `RunResult`, `open_run`
- specs: `load_spec` (a TOML file), `RunSpec` (the model, to build one in Python)
- comparing judges across runs: `compare_runs` (a `ComparisonReport`)
- decision policies over a finished run: `apply_policies` (writes `policies/<name>/`)
- contracts a judge or verifier is written against: `JudgeItem` -> `Judgment` (`Judge`),
  `ClaimToVerify` -> `Verdict` (`Verifier`, `VerdictLabel`, `Passage`), `Decomposer`,
  `Status`, `Usage`
- built-in components as objects: `baseline(name)`, `LLMJudge`, `OverlapVerifier`
- adding kinds a spec can name: `register_judge`, `register_verifier`,
  `register_decomposer` (or, from a package, the entry-point group ``assay.plugins``)
- `AssayError` (every user-facing error), `__version__`

Importing assay is cheap: each name is imported on first use, and litellm, torch and
pandas load only when a model is called or a table is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames
from assay.errors import AssayError

if TYPE_CHECKING:  # the lazily imported names, for type checkers (`as`: re-exported)
    from assay._version import __version__ as __version__
    from assay.api import RunResult as RunResult
    from assay.api import open_run as open_run
    from assay.api import register_decomposer as register_decomposer
    from assay.api import register_judge as register_judge
    from assay.api import register_verifier as register_verifier
    from assay.api import run as run
    from assay.api import run_async as run_async
    from assay.compare import compare_runs as compare_runs
    from assay.core.answers import Passage as Passage
    from assay.core.decomposition import Decomposer as Decomposer
    from assay.core.judging import Judge as Judge
    from assay.core.judging import JudgeItem as JudgeItem
    from assay.core.judging import Judgment as Judgment
    from assay.core.outcomes import Status as Status
    from assay.core.outcomes import Usage as Usage
    from assay.core.verification import ClaimToVerify as ClaimToVerify
    from assay.core.verification import Verdict as Verdict
    from assay.core.verification import VerdictLabel as VerdictLabel
    from assay.core.verification import Verifier as Verifier
    from assay.judges import LLMJudge as LLMJudge
    from assay.judges import baseline as baseline
    from assay.policies import apply_policies as apply_policies
    from assay.runs import RunSpec as RunSpec
    from assay.runs import load_spec as load_spec
    from assay.verifiers import OverlapVerifier as OverlapVerifier

_SOURCES = {  # where each lazily imported public name lives
    "assay.api": (
        "run",
        "run_async",
        "RunResult",
        "open_run",
        "register_judge",
        "register_verifier",
        "register_decomposer",
    ),
    "assay.runs": ("load_spec", "RunSpec"),
    "assay.compare": ("compare_runs",),
    "assay.policies": ("apply_policies",),
    "assay.core.judging": ("JudgeItem", "Judgment", "Judge"),
    "assay.core.verification": ("ClaimToVerify", "Verdict", "VerdictLabel", "Verifier"),
    "assay.core.answers": ("Passage",),
    "assay.core.decomposition": ("Decomposer",),
    "assay.core.outcomes": ("Status", "Usage"),
    "assay.judges": ("baseline", "LLMJudge"),
    "assay.verifiers": ("OverlapVerifier",),
    "assay._version": ("__version__",),  # importlib.metadata: ~30 ms of every start
}
_lazy = LazyNames(__name__, _SOURCES, globals())

__all__ = ["AssayError", *_lazy.modules]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562), so `import assay` stays cheap."""
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
