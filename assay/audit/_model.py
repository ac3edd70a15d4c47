"""What `assay verify` hands back: one verdict per named check, and the environment diff.

Pydantic so that `--format json` is the model dumped, and a test or another tool reads
exactly what the terminal table summarises.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Result = Literal["pass", "fail", "skip", "info"]


class Check(BaseModel):
    """One named check: its verdict, how many things it looked at, and every problem."""

    name: str = Field(description="records, metrics, prompts, datasets, requests, environment")
    result: Result = Field(description="pass, fail, skip (nothing could be verified), info")
    checked: int = Field(default=0, description="Things verified (files, metrics, records).")
    failed: int = Field(default=0, description="Of those, how many did not hold.")
    skipped: int = Field(default=0, description="Things that could not be verified, and why.")
    problems: list[str] = Field(default_factory=list, description="One line per failure.")
    notes: list[str] = Field(default_factory=list, description="Why something was skipped.")

    @property
    def first_problem(self) -> str:
        """The line the table shows: the first failure, else the first skip reason."""
        lines = self.problems or self.notes
        if not lines:
            return ""
        more = len(lines) - 1
        return lines[0] + (f" (+{more} more)" if more else "")


def verdict(
    name: str, checked: int, problems: list[str], notes: list[str], skipped: int = 0
) -> Check:
    """Fail on any problem; skip when something could not be verified; else pass."""
    result: Result = "fail" if problems else ("skip" if skipped else "pass")
    return Check(
        name=name,
        result=result,
        checked=checked,
        failed=len(problems),
        skipped=skipped,
        problems=problems,
        notes=notes,
    )


class EnvRow(BaseModel):
    """One line of the environment diff: a version (or model id) then and now."""

    what: str
    then: str | None
    now: str | None

    @property
    def same(self) -> bool:
        return self.then == self.now


class Verification(BaseModel):
    """A run directory's audit: every check, and the environment then vs now."""

    run_dir: str
    checks: list[Check]
    environment: list[EnvRow] = Field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.result == "fail" for c in self.checks)

    @property
    def skipped(self) -> bool:
        return any(c.result == "skip" for c in self.checks)

    def exit_code(self, *, allow_skips: bool) -> int:
        """0 only when every check holds; a skip verified nothing, so it fails unless
        the reader accepts skips explicitly."""
        if self.failed or (self.skipped and not allow_skips):
            return 1
        return 0
