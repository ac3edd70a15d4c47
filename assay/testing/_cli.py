"""``python -m assay.testing``: the fake server as its own process, for dry runs and benchmarks."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from assay.testing._behaviors import DEFAULT_CONTENT, reply
from assay.testing._ratewindow import RateWindows
from assay.testing._server import FakeOpenAIServer


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m assay.testing``: serve until killed, URL on the first stdout line."""
    parser = argparse.ArgumentParser(
        prog="python -m assay.testing",
        description="Fake OpenAI chat-completions server for offline dry runs and benchmarks.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every reply")
    parser.add_argument("--content", default=DEFAULT_CONTENT, help="default reply content")
    parser.add_argument("--max-recorded", type=int, default=10_000)
    parser.add_argument("--rpm", type=int, default=None, help="enforce requests per window")
    parser.add_argument("--tpm", type=int, default=None, help="enforce tokens per window")
    parser.add_argument(
        "--rate-period-s", type=float, default=60.0, help="the rpm/tpm window (default 60 s)"
    )
    parser.add_argument(
        "--exit-on-stdin-eof", action="store_true", help="exit when stdin closes (parent died)"
    )
    ns = parser.parse_args(argv)
    server = FakeOpenAIServer(
        default=reply(ns.content),
        latency_s=ns.latency_ms / 1000.0,
        host=ns.host,
        port=ns.port,
        max_recorded=ns.max_recorded,
        rate_limits=_windows(ns),
    )
    asyncio.run(server.serve_until_signal(exit_on_stdin_eof=ns.exit_on_stdin_eof))
    return 0


def _windows(ns: argparse.Namespace) -> RateWindows | None:
    """The OpenAI-style rate windows asked for (429 + x-ratelimit-* headers), if any."""
    if ns.rpm is None and ns.tpm is None:
        return None
    return RateWindows(rpm=ns.rpm, tpm=ns.tpm, period_s=ns.rate_period_s)
