"""`python -m assay` and the `assay` command.

The CLI's modules take a moment to load; a Ctrl-C (or SIGTERM) in that moment ends the
command as one during its work does: one line, exit 130, no traceback.
"""

from __future__ import annotations

import sys

from assay._collector import command_line, paused
from assay._interrupts import (
    check_cancelled,
    forget_unhandled_interrupt,
    interrupted_line,
    start_command,
)

INTERRUPTED = 130


def main() -> None:
    """Load the CLI, then run it."""
    start_command()  # SIGTERM too raises, as Ctrl-C does
    command_line()
    try:
        with paused(freeze=True):  # loading makes no garbage worth a collector pass
            from assay.cli import main as run_cli

        check_cancelled()  # a signal whose exception an import swallowed
    except KeyboardInterrupt:
        print(interrupted_line(sys.argv[1:]), file=sys.stderr)
        forget_unhandled_interrupt()
        sys.exit(INTERRUPTED)
    run_cli()


if __name__ == "__main__":
    main()
