"""`assay view` as a command and a server process: its URL and token, --open, --host,
Ctrl-C, a port in use, the missing extra, `assay --help` staying light; and the guard's
parts a page test does not reach: the login redirect, the Host check, a running run
followed, spans marked from offsets."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run
from starlette.testclient import TestClient

from assay.view.server import create_app

TOKEN = "test-token-0123456789"
AUTH = {"X-Assay-Token": TOKEN}


@pytest.fixture
def paths(tmp_path: Path) -> list[Path]:
    """Two folders: one holding two small items runs, one run given directly."""
    runs = tmp_path / "runs"
    for name in ("first", "second"):
        write_item_run(runs / name, name, gold_items(["a", "b"]), labelled("j", ["a", "a"]))
    alone = write_item_run(tmp_path / "alone", "alone", gold_items(["a"]), labelled("j", ["b"]))
    return [runs, alone]


def _ids(client: TestClient) -> dict[str, str]:
    return {r["name"]: r["id"] for r in client.get("/api/runs").json()}


def test_the_login_redirect_never_leaves_the_server() -> None:
    from starlette.requests import Request

    from assay.view.server._security import Guard

    query = f"token={TOKEN}&a=1".encode()
    scope = {"type": "http", "method": "GET", "path": "//evil.example/x", "headers": [],
             "query_string": query, "server": ("127.0.0.1", 80)}  # fmt: skip
    response = Guard(TOKEN, None)._login(Request(scope))
    assert response.headers["location"] == "/evil.example/x?a=1"


def test_spans_are_marked_from_offsets_and_the_text_escaped() -> None:
    from types import SimpleNamespace as Span

    from assay.view.server._highlight import highlight

    text = "a <b>bold</b> claim & more"
    spans = [Span(start=2, end=9, label="s1"), Span(start=5, end=13, label="<s2>"),
             Span(start=20, end=99, label=None), Span(start=-5, end=0, label="none")]  # fmt: skip
    assert str(highlight(text, spans)) == (
        'a <mark class="span" title="s1, &lt;s2&gt;">&lt;b&gt;bold&lt;/b&gt;</mark> claim '
        '<mark class="span">&amp; more</mark>'
    )
    assert str(highlight(None, spans)) == "" and str(highlight("x<y", [])) == "x&lt;y"


def test_a_running_run_is_followed(tmp_path: Path) -> None:
    from assay.core.rundir_lock import WriterLock

    run = write_item_run(tmp_path / "runs" / "live", "live", gold_items(["a", "b"]), [])
    app = create_app([tmp_path / "runs"], token=None)
    with TestClient(app) as c, WriterLock(run, command="test", fix="wait") as lock:
        run_id = _ids(c)["live"]
        page = c.get(f"/runs/{run_id}/items").text
        assert 'data-status="running"' in page
        before = c.get(f"/api/runs/{run_id}/version").json()
        assert before["status"] == "running"
        with (run / "item_judgments.jsonl").open("a", encoding="utf-8") as fh:
            from assay.core.records import ItemJudgmentRecord

            for record in labelled("j", ["a", "a"]):
                full = {"dataset": "d", "status": "ok", **record}
                fh.write(ItemJudgmentRecord.model_validate(full).model_dump_json() + "\n")
        after = c.get(f"/api/runs/{run_id}/version").json()
        assert after["version"] != before["version"]
        assert c.get(f"/api/runs/{run_id}/judgments").json()["total"] == 2
        lock.release()
        assert c.get(f"/api/runs/{run_id}/version").json()["status"] != "running"


def test_host_header_is_checked_against_dns_rebinding(paths: list[Path]) -> None:
    app = create_app(paths, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8000", headers=AUTH) as c:
        assert c.get("/").status_code == 200
        assert c.get("/", headers={"Host": "evil.example:8000"}).status_code == 400


def test_cli_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = invoke(["view", str(tmp_path / "missing")])
    assert code == 2 and err.count("\n") == 1 and "missing" in err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "uvicorn" else real(n, *a)
    )
    code, _, err = invoke(["view", str(tmp_path)])
    assert code == 2 and err.count("\n") == 1 and "pip install 'assay[view]'" in err


def test_help_does_not_import_the_server_stack() -> None:
    script = (
        "import sys; from assay.cli import app\n"
        "try: app(['--help'], prog_name='assay')\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in ('starlette', 'uvicorn', 'duckdb') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_serve_prints_its_url_answers_and_stops_on_ctrl_c(paths: list[Path]) -> None:
    import urllib.error
    import urllib.request

    command = [sys.executable, "-m", "assay", "view", *map(str, paths), "--host", "127.0.0.2"]
    proc = subprocess.Popen(
        [*command, "--read-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.match(
            r"assay view: serving 3 runs at (http://127\.0\.0\.2:(\d+)/\?token=\S+)", line
        )
        assert match, line
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with browser.open(match.group(1), timeout=20) as answer:  # sets the cookie
            assert answer.status == 200 and b"alone" in answer.read()
        with pytest.raises(urllib.error.HTTPError) as refused:  # no cookie, no token
            urllib.request.urlopen(match.group(1).split("?")[0], timeout=20)
        assert refused.value.code == 403
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err and "warning: --host 127.0.0.2" in err


def test_open_starts_the_browser_on_the_printed_url_and_ctrl_c_exits_0(
    paths: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    import uvicorn

    opened: list[str] = []
    served: list[int] = []

    def run(self: uvicorn.Server, sockets: list[Any]) -> None:
        served.append(sockets[0].getsockname()[1])
        raise KeyboardInterrupt  # what Ctrl-C does while uvicorn serves

    monkeypatch.setattr(webbrowser, "open", opened.append)
    monkeypatch.setattr(uvicorn.Server, "run", run)
    code, out, err = invoke(["view", *map(str, paths), "--open", "--annotator", "ann"])
    assert code == 0 and "Traceback" not in err, err
    url = out.strip().split(" at ")[1]
    assert opened == [url] and url.startswith(f"http://127.0.0.1:{served[0]}/?token=")
    assert len(url.split("token=")[1]) >= 40 and "warning" not in err


def test_a_port_in_use_is_one_line(paths: list[Path]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, _, err = invoke(["view", str(paths[0]), "--port", str(port)])
    assert code == 2 and err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err
