"""The console every command prints to, and the closing status line of a command that
ran a spec (`assay run`, `assay rerun`): one shared place, so both end the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.redaction import scrub_text

if TYPE_CHECKING:
    from assay.runs import RunOutcome

STATUS_COLOURS = {"complete": "green", "failed": "red"}


def console(stderr: bool = False) -> Any:
    """A rich console without syntax highlighting (numbers stay the terminal's colour)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def print_outcome(outcome: RunOutcome) -> None:
    """`complete: 600/600 judgments (0 new), 40/40 verifications → runs/demo` on stdout
    (one line, never wrapped); a run that did not complete also gets one stderr line
    `error: run failed: <why>`, so `grep ^error:` finds every failure."""
    from rich.markup import escape

    colour = STATUS_COLOURS.get(outcome.status, "yellow")
    parts = []
    if outcome.planned:
        parts.append(
            f"{outcome.recorded}/{outcome.planned} judgments ({outcome.written_this_session} new)"
        )
    if outcome.verifications_planned is not None:
        parts.append(
            f"{outcome.verifications_recorded}/{outcome.verifications_planned} verifications"
        )
    where = escape(outcome.run_dir)
    done = ", ".join(parts) or "no judgment or verification recorded"
    line = f"[{colour}]{outcome.status}[/]: {done} → {where}"
    console().print(line, soft_wrap=True)
    if outcome.status != "complete":
        why = scrub_text(outcome.message or "not every planned judgment was recorded")
        text = escape(f"error: run {outcome.status}: {why}")
        console(stderr=True).print(f"[{colour}]{text}[/]", soft_wrap=True)
    elif outcome.message:
        text = escape(scrub_text(outcome.message))
        console(stderr=True).print(f"[{colour}]{text}[/]", soft_wrap=True)


__all__ = ["STATUS_COLOURS", "console", "print_outcome"]
