"""What `assay compare` does between parsing its flags and exiting.

Kept out of `cli.py` so the command there is only its flags; heavy modules (pandas,
scipy) are imported inside the function, as in the rest of the CLI.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def compare_command(
    run_dirs: Sequence[Path],
    *,
    reference: str | None,
    strict: bool,
    fmt: str,
    metrics: Sequence[str] | None,
    n_boot: int,
    seed: int,
    output: Path | None,
    gold: str = "dataset",
) -> None:
    """Compare the runs and print (or, with `output`, write) the report in `fmt`."""
    from assay.adjudication import check_gold_source
    from assay.compare import compare_runs
    from assay.report import comparison_renderer, write_report_file

    render = comparison_renderer(fmt)  # a typo is reported before any run is read
    check_gold_source(gold)

    report = compare_runs(
        run_dirs,
        reference=reference,
        strict=strict,
        metrics=metrics,
        n_boot=n_boot,
        seed=seed,
        gold=gold,
    )
    text = render(report)
    if output is None:
        sys.stdout.write(text)
        return
    write_report_file(output, text)
    print(f"wrote {output}", file=sys.stderr)


__all__ = ["compare_command"]
