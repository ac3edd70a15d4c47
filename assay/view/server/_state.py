"""What every handler shares: the index of runs and the session's settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request

from assay.view.index import RunSummary, ViewIndex


@dataclass
class Viewer:
    """The app's state (`app.state.viewer`): built once by `create_app`."""

    index: ViewIndex
    read_only: bool
    annotator: str
    token: str | None

    def run_dir(self, run_id: str) -> Path:
        """The directory of a run the index lists; 404 for any other id (never a path)."""
        try:
            return self.index.run_dir(run_id)
        except KeyError:
            raise HTTPException(404, f"no run with id {run_id!r}") from None

    def summary(self, run_id: str) -> RunSummary:
        self.run_dir(run_id)
        for run in self.index.runs():
            if run.id == run_id:
                return run
        raise HTTPException(404, f"no run with id {run_id!r}")


def viewer(request: Request) -> Viewer:
    state: Viewer = request.app.state.viewer
    return state
