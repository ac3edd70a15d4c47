"""`assay rerun RUN --output-dir NEW`: a run executed again from its directory alone
into a new, ordinary run directory whose manifest names the run it re-ran
(`rerun_of`).

The requests are sent again without a response cache unless one is named: a cache
answers with the responses of an earlier run, and a re-run is meant to measure what
the provider answers now. The original directory is only read. API keys come from the
environment, as for any run (`api_key_env`); a run directory never holds one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from assay.core.manifest import Manifest
from assay.errors import PathError
from assay.runs.rerun._prompts import stage_prompts
from assay.runs.rerun._rebuild import RerunSource, rebuilt_spec
from assay.runs.runner._runner import Runner
from assay.runs.spec._options import RunOptions, RunOutcome
from assay.runs.spec._spec import LoadedSpec
from assay.runs.store._manifest import load_manifest
from assay.runs.store._rundir import read_run_manifest


class RerunOptions(BaseModel):
    """What `assay rerun` is asked: where to write, which cache, whether data may differ."""

    output_dir: str
    cache_dir: str | None = None
    allow_data_change: bool = False
    progress: bool = True


class RerunRunner(Runner):
    """A `Runner` whose manifest also records the run it re-runs (`rerun_of`)."""

    rerun_of: RerunSource | None = None

    def _save(self, base: Manifest, status: str, message: str | None) -> None:
        base.rerun_of = self.rerun_of
        super()._save(base, status, message)


def _check_output(run_dir: Path, output_dir: Path) -> None:
    """The re-run writes elsewhere: never into, above or below the original run."""
    old, new = run_dir.resolve(), output_dir.resolve()
    if new == old or old in new.parents or new in old.parents:
        raise PathError(
            f"--output-dir must be outside the run being re-run ({run_dir}); "
            "a re-run never writes to the original directory",
            file=output_dir,
        )


def run_options(options: RerunOptions) -> RunOptions:
    """No cache unless one is named: a fresh re-run reads nobody's cached responses."""
    cached = options.cache_dir is not None
    return RunOptions(
        output_dir=options.output_dir,
        use_cache=cached,
        cache_dir=options.cache_dir,
        progress=options.progress,
    )


@contextmanager
def prepared_rerun(
    run_dir: Path, options: RerunOptions
) -> Iterator[tuple[LoadedSpec, RerunSource]]:
    """The rebuilt spec and its source, its prompts staged in a temporary folder that
    is removed afterwards (the new run snapshots them itself)."""
    _check_output(run_dir, Path(options.output_dir))
    manifest = load_manifest(read_run_manifest(run_dir), run_dir)
    with tempfile.TemporaryDirectory(prefix="assay-rerun-") as tmp:
        prompt_dir = Path(tmp) / "prompts"
        stage_prompts(run_dir, manifest, prompt_dir)
        yield rebuilt_spec(
            run_dir, manifest, prompt_dir, allow_data_change=options.allow_data_change
        )


def rerun_runner(loaded: LoadedSpec, source: RerunSource, options: RerunOptions) -> RerunRunner:
    runner = RerunRunner(loaded, run_options(options))
    runner.rerun_of = source
    return runner


def rerun(run_dir: str | Path, options: RerunOptions) -> RunOutcome:
    """Re-run `run_dir` into `options.output_dir`: the library form of `assay rerun`."""
    with prepared_rerun(Path(run_dir), options) as (loaded, source):
        return rerun_runner(loaded, source, options).run()


__all__ = ["RerunOptions", "RerunRunner", "prepared_rerun", "rerun", "rerun_runner", "run_options"]
