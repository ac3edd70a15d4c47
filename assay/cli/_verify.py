"""What `assay verify` does between parsing its flags and exiting: audit a run directory
(assay.audit), print the verdict table or the JSON, and exit 0 only when every check holds.
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay._table import print_table
from assay.errors import AssayError

FORMATS = ("table", "json")


def _counts(check: object) -> str:
    checked, failed, skipped = (getattr(check, k) for k in ("checked", "failed", "skipped"))
    parts = [f"{checked} checked"]
    if failed:
        parts.append(f"{failed} failed")
    if skipped:
        parts.append(f"{skipped} skipped")
    return ", ".join(parts)


def verify_command(run_dir: Path, *, fmt: str, allow_skips: bool) -> int:
    """Print the audit of `run_dir` in `fmt`; returns the exit status (0, or 1 when a
    check failed or, without `allow_skips`, could not be verified)."""
    from assay.audit import verify_run
    from assay.redaction import scrub_text

    if fmt not in FORMATS:
        raise AssayError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    result = verify_run(run_dir)
    code = result.exit_code(allow_skips=allow_skips)
    if fmt == "json":
        sys.stdout.write(scrub_text(result.model_dump_json(indent=2)) + "\n")
        return code
    rows = [(c.name, c.result, _counts(c), scrub_text(c.first_problem)) for c in result.checks]
    print_table(["check", "result", "counts", "first problem"], rows, title=f"verify {run_dir}")
    env = [r for r in result.environment if not r.same]
    if env:
        print_table(
            ["what", "then", "now"],
            [(r.what, r.then or "-", r.now or "-") for r in env],
            title="environment: then vs now (informational)",
        )
    verdict = "verified" if code == 0 else "NOT verified"
    skipped = " (skips allowed)" if allow_skips and result.skipped and code == 0 else ""
    print(f"{verdict}{skipped}: {run_dir}")
    return code


__all__ = ["FORMATS", "verify_command"]
