"""The fake server as a separate process, and a client that scripts it over HTTP.

A separate process keeps the server's CPU off the client's GIL, which benchmarks need.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from assay.testing._behaviors import Behavior
from assay.testing._stats import ServerStats

_START_TIMEOUT_S = 10.0


def spawn_process(
    *,
    content: str | None = None,
    latency_s: float = 0.0,
    port: int = 0,
    python: str = sys.executable,
    startup_timeout: float = _START_TIMEOUT_S,
    extra_args: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``python -m assay.testing`` and return ``(process, url)``.

    A separate process keeps the server's CPU off the client's GIL (benchmarks).
    The child exits when the process is terminated or when this process dies (its
    stdin pipe closes). Call ``proc.terminate(); proc.wait()`` when done, or use
    :meth:`spawned`.
    """
    args = [python, "-m", "assay.testing", "--port", str(port), "--exit-on-stdin-eof"]
    args += ["--latency-ms", repr(latency_s * 1000.0)]
    if content is not None:
        args += ["--content", content]
    args += list(extra_args)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # so `assay` imports uninstalled
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=root)
    try:
        url = _read_first_line(proc, startup_timeout)
    except BaseException:
        _terminate(proc)
        raise
    return proc, url


@contextlib.contextmanager
def spawned(
    *, content: str | None = None, latency_s: float = 0.0, extra_args: Sequence[str] = ()
) -> Iterator[FakeServerClient]:
    """Context manager around :meth:`spawn_process` yielding a control client."""
    proc, url = spawn_process(content=content, latency_s=latency_s, extra_args=extra_args)
    client = FakeServerClient(url, process=proc)
    try:
        yield client
    finally:
        client.close()
        _terminate(proc)


def _read_first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The child's URL line, without risking a hang if it never prints."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"fake server did not print its URL within {timeout}s")
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"fake server exited early (code {proc.poll()})")
            buf += chunk
    return buf.split(b"\n", 1)[0].decode().strip()


def _terminate(proc: subprocess.Popen[bytes], timeout: float = 2.0) -> None:
    """SIGTERM, then SIGKILL if the child lingers; always reaps it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


class FakeServerClient:
    """Scripts a server in another process through its ``/_control`` API."""

    def __init__(
        self, url: str, *, process: subprocess.Popen[bytes] | None = None, timeout: float = 5.0
    ) -> None:
        import httpx  # local: only control clients need it

        self.url = url.rstrip("/")
        self.process = process
        self._http = httpx.Client(base_url=self.url, timeout=timeout)

    @property
    def base_url(self) -> str:
        """What to pass as ``api_base`` to OpenAI-style clients."""
        return self.url + "/v1"

    def script(self, match: str | None, behaviors: Sequence[Behavior]) -> None:
        """Same semantics as :meth:`FakeOpenAIServer.script`."""
        payload = {"match": match, "behaviors": [b.model_dump() for b in behaviors]}
        self._http.post("/_control/script", json=payload).raise_for_status()

    def set_default(self, behavior: Behavior) -> None:
        """Replace the server's default behavior."""
        payload = {"behavior": behavior.model_dump()}
        self._http.post("/_control/default", json=payload).raise_for_status()

    def reset(self) -> None:
        """Clear scripts and statistics."""
        self._http.post("/_control/reset").raise_for_status()

    def stats(self) -> ServerStats:
        """Snapshot of the remote server's statistics."""
        resp = self._http.get("/_control/stats")
        resp.raise_for_status()
        return ServerStats.from_json(resp.json())

    def close(self) -> None:
        """Close the HTTP client (not the server process)."""
        self._http.close()
