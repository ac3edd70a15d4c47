"""The Python API: run a spec with Python judges and verifiers, read a run as tables."""

from assay.api._adapters import FunctionJudge, FunctionVerifier, as_judge, as_verifier
from assay.api._register import register_decomposer, register_judge, register_verifier
from assay.api._result import RunResult, open_run
from assay.api._run import run, run_async
from assay.api._spec import to_loaded_spec

__all__ = [
    "FunctionJudge",
    "FunctionVerifier",
    "RunResult",
    "as_judge",
    "as_verifier",
    "open_run",
    "register_decomposer",
    "register_judge",
    "register_verifier",
    "run",
    "run_async",
    "to_loaded_spec",
]
