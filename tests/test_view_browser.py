"""`assay view` driven in a real headless Chromium, as a user would use it.

The real server runs as a subprocess (`python -m assay view ROOT --port 0`) on a real
items run (two LLM judges answered by the loopback server, tests/_view_browser_runs.py);
the browser opens the URL with the token it printed. A user's path: the runs list, the
judgments filtered to wrong verdicts, one item with the messages exactly as the judges
sent them, a label set through the form and then seen by `assay compare --gold
adjudicated`; a running run whose new records appear without a reload; markup in ids and
outputs staying text; traversal paths, a missing token and --read-only refused. Every
page is checked for console errors and for requests to anything but the server. Without
the browser the tests skip, except in CI (`CI` set), where they fail.
"""

from __future__ import annotations

import base64
import csv
import http.client
import io
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from _cli import invoke
from _view_browser_runs import (
    CAREFUL,
    CLAIMS,
    HASTY,
    HOSTILE_CLAIM,
    HOSTILE_ID,
    HOSTILE_RATIONALE,
    BuiltRun,
    ViewServer,
    build_run,
    start_view,
)
from test_report_browser import (
    _INK,
    ROOT,
    browser,  # noqa: F401  (the headless Chromium fixture)
)

from assay.adjudication import LABELS_FILE, read_adjudications
from assay.core.rundir_lock import WriterLock

SECRET = "SECRET-OUTSIDE-THE-RUNS-7f3a"
WAIT_S = 15.0


@dataclass
class Setup:
    root: Path  # what `assay view` serves
    built: BuiltRun  # the run the user works on
    live: Path  # a copy of it with half its records, "running" while a test holds its lock
    live_rest: list[str]  # the records the live run gets while its page is open
    server: ViewServer
    read_only: ViewServer


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    base = tmp_path_factory.mktemp("view-browser")
    built = build_run(base)
    live = base / "runs" / "live"
    shutil.copytree(built.run_dir, live)
    records = (live / "item_judgments.jsonl").read_text(encoding="utf-8").splitlines(True)
    half = len(records) // 2
    (live / "item_judgments.jsonl").write_text("".join(records[:half]), encoding="utf-8")
    (base / "secret.txt").write_text(SECRET, encoding="utf-8")  # beside the runs, not in
    server = start_view(base / "runs", "--annotator", "tester")
    read_only = start_view(base / "runs", "--read-only")
    try:
        yield Setup(base / "runs", built, live, records[half:], server, read_only)
    finally:
        for s in (server, read_only):
            assert "Traceback" not in s.stop()


def _wait(what: str, check: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    """`check()`'s first truthy value, polled; fails naming `what` after `timeout` s."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _login(driver: Any, server: ViewServer) -> None:
    """Open the printed URL once: the token becomes the session cookie."""
    driver.get(server.url)
    assert "token=" not in driver.current_url  # the server dropped it from the URL


def _visit(driver: Any, server: ViewServer, path: str) -> None:
    driver.get_log("browser")
    driver.get_log("performance")
    driver.get(server.base + path)
    _wait("the page", lambda: driver.execute_script("return document.readyState") == "complete")


def _offline_and_clean(driver: Any, server: ViewServer) -> None:
    """Since the last `_visit`: no console error, no request to anything but the server."""
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [
        e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"
    ]
    urls = [u for u in urls if not u.startswith("data:")]  # inline images in the CSS
    assert urls and all(u.startswith(server.base + "/") for u in urls), urls


def _run_ids(driver: Any) -> dict[str, str]:
    """Run directory name -> id, from the runs page (the shown path ends with it)."""
    rows = driver.execute_script(
        "return [...document.querySelectorAll('table#runs tr[data-run]')]"
        ".map(tr => [tr.querySelector('td.judge .sub').textContent, tr.dataset.run])"
    )
    return {Path(path).name: run_id for path, run_id in rows}


@pytest.fixture(scope="module")
def ids(browser: Any, setup: Setup) -> dict[str, str]:  # noqa: F811
    _login(browser, setup.server)
    _visit(browser, setup.server, "/")
    return _run_ids(browser)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "item_judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _gold(run_dir: Path) -> dict[str, str]:
    """Each item's gold as the run scores it: the person's label over the dataset's."""
    gold = {c[0]: c[3] for c in CLAIMS}
    for (_, item_id), adj in read_adjudications(run_dir).items():
        if adj.label is not None:
            gold[item_id] = adj.label
    return gold


def _wrong(run_dir: Path) -> set[tuple[str, str]]:
    gold = _gold(run_dir)
    return {
        (r["item_id"], r["judge_id"])
        for r in _records(run_dir)
        if r["status"] != "ok" or r["label"] != gold[r["item_id"]]
    }


def _rows(driver: Any) -> list[tuple[str, str, str]]:
    return [
        tuple(r)
        for r in driver.execute_script(
            "return [...document.querySelectorAll('tbody#rows tr[data-item]')]"
            ".map(tr => [tr.dataset.item, tr.dataset.judge, tr.dataset.outcome])"
        )
    ]


def test_runs_list_shows_every_run(browser: Any, setup: Setup, ids: dict[str, str]) -> None:  # noqa: F811
    _visit(browser, setup.server, "/")
    assert set(ids) == {"checks", "live"}
    text = browser.find_element("css selector", "table#runs").text
    for judge in (HASTY, CAREFUL):
        assert judge in text
    _offline_and_clean(browser, setup.server)


def test_filter_to_wrong_verdicts(browser: Any, setup: Setup, ids: dict[str, str]) -> None:  # noqa: F811
    from selenium.webdriver.support.ui import Select

    _visit(browser, setup.server, f"/runs/{ids['checks']}/items?page_size=100")
    assert len(_rows(browser)) == len(_records(setup.built.run_dir))
    Select(browser.find_element("id", "f-outcome")).select_by_value("wrong")
    expected = _wrong(setup.built.run_dir)
    assert 0 < len(expected) < len(_records(setup.built.run_dir))

    def shown() -> set[tuple[str, str]] | None:
        rows = _rows(browser)
        if any(o != "wrong" for _, _, o in rows) or len(rows) != len(expected):
            return None
        return {(i, j) for i, j, _ in rows}

    assert _wait("only the wrong verdicts", shown) == expected
    assert browser.find_element("id", "total").text == str(len(expected))
    assert "outcome=wrong" in browser.current_url  # the filtered view is a shareable URL
    _offline_and_clean(browser, setup.server)


def _item_path(run_id: str, item_id: str) -> str:
    return f"/runs/{run_id}/items/claims/{quote(item_id, safe='')}"


def _shown_judgments(driver: Any) -> dict[str, dict[str, Any]]:
    """judge id -> the messages (role, exact text) and raw output the page shows."""
    found = driver.execute_script(
        "return [...document.querySelectorAll('article.judgment')].map(a => ({"
        "judge: a.dataset.judge, status: a.querySelector('.messages-status').dataset.status,"
        "messages: [...a.querySelectorAll('pre.message')].map(p => [p.dataset.role,"
        " p.textContent]), raw: a.querySelector('pre.raw-output').textContent}))"
    )
    return {f["judge"]: f for f in found}


def test_item_shows_the_messages_exactly_as_sent(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    _visit(browser, setup.server, f"/runs/{ids['checks']}/items?page_size=100")
    browser.find_element("css selector", 'tbody#rows tr[data-item="c4"] td.item a').click()
    _wait("the item page", lambda: browser.find_elements("css selector", "section#item"))
    assert browser.find_element("css selector", "section#item").get_attribute("data-item") == "c4"
    shown = _shown_judgments(browser)
    assert set(shown) == {HASTY, CAREFUL}
    claim = next(c[1] for c in CLAIMS if c[0] == "c4")
    records = {r["judge_id"]: r for r in _records(setup.built.run_dir) if r["item_id"] == "c4"}
    for judge, model in ((HASTY, "hasty"), (CAREFUL, "careful")):
        sent = [
            [(m["role"], m["content"]) for m in body["messages"]]
            for body in setup.built.requests
            if body["model"] == model and claim in body["messages"][-1]["content"]
        ]
        assert len(sent) == 1
        assert shown[judge]["status"] == "exact"
        assert [tuple(m) for m in shown[judge]["messages"]] == sent[0]
        assert shown[judge]["raw"] == records[judge]["raw_output"]
    _offline_and_clean(browser, setup.server)


def _compare_accuracy(run_dir: Path, gold: str) -> dict[str, float]:
    """Each judge's accuracy as `assay compare RUN --gold GOLD --format csv` prints it."""
    code, out, err = invoke(
        ["compare", str(run_dir), "--gold", gold, "--metric", "accuracy", "--format", "csv"]
    )
    assert code == 0, err
    row = next(csv.DictReader(io.StringIO(out)))
    return {row["judge_a"]: float(row["value_a"]), row["judge_b"]: float(row["value_b"])}


def _accuracy(run_dir: Path) -> dict[str, float]:
    gold, by_judge = _gold(run_dir), {}
    for r in _records(run_dir):
        by_judge.setdefault(r["judge_id"], []).append(r["label"] == gold[r["item_id"]])
    return {j: sum(v) / len(v) for j, v in by_judge.items()}


def test_label_an_item_then_compare_with_adjudicated_gold(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    from selenium.webdriver.support.ui import Select

    run_dir = setup.built.run_dir
    records_before = (run_dir / "item_judgments.jsonl").read_bytes()
    dataset_accuracy = _compare_accuracy(run_dir, "dataset")
    _visit(browser, setup.server, _item_path(ids["checks"], "c1"))  # gold: supported
    Select(browser.find_element("id", "label-select")).select_by_value("unsupported")
    browser.find_element("id", "label-note").send_keys("the passage gives a trial, not a rule")
    browser.find_element("id", "label-submit").click()
    history = _wait(  # read in one script: the page reloads under us after the save
        "the label in the item's history",
        lambda: browser.execute_script(
            "return [...document.querySelectorAll('ol#label-history li b')].map(b => b.textContent)"
        ),
    )
    assert history == ["unsupported"]
    assert "by tester" in browser.find_element("id", "label-history").text
    _offline_and_clean(browser, setup.server)
    lines = (run_dir / LABELS_FILE).read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[-1])
    assert len(lines) == 1
    assert (entry["item_id"], entry["label"], entry["annotator"]) == ("c1", "unsupported", "tester")
    assert entry["note"] == "the passage gives a trial, not a rule"
    assert (run_dir / "item_judgments.jsonl").read_bytes() == records_before

    adjudicated = _compare_accuracy(run_dir, "adjudicated")
    assert adjudicated == pytest.approx(_accuracy(run_dir))
    assert adjudicated != pytest.approx(dataset_accuracy)  # c1 now counts against both
    code, out, err = invoke(["compare", str(run_dir), "--gold", "adjudicated"])
    assert code == 0, err
    note = f"adjudicated: 1 of {len(CLAIMS)} items take a person's label from labels.jsonl"
    assert note in " ".join(out.split())


def test_new_records_of_a_running_run_appear_without_reload(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    lock = WriterLock(setup.live, command="test", fix="")
    lock.acquire()  # as `assay run` holds it while it writes
    try:
        _visit(browser, setup.server, f"/runs/{ids['live']}/items?page_size=100")
        main = browser.find_element("css selector", "main")
        assert main.get_attribute("data-status") == "running"
        before = len(_rows(browser))
        browser.execute_script("window.__same_page = true")
        with (setup.live / "item_judgments.jsonl").open("a", encoding="utf-8") as fh:
            fh.writelines(setup.live_rest)
        total = before + len(setup.live_rest)
        _wait("the new records", lambda: len(_rows(browser)) == total)
        assert browser.find_element("id", "total").text == str(total)
        assert browser.execute_script("return window.__same_page") is True  # no reload
    finally:
        lock.release()
    _offline_and_clean(browser, setup.server)


def test_markup_in_ids_and_outputs_stays_text(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    _visit(browser, setup.server, f"/runs/{ids['checks']}/items?search=img")
    rows = _wait("the hostile item's rows", lambda: _rows(browser))
    assert {r[0] for r in rows} == {HOSTILE_ID}
    link = browser.find_element("css selector", "tbody#rows td.item a")
    assert link.text == HOSTILE_ID
    link.click()
    _wait("the item page", lambda: browser.find_elements("css selector", "section#item"))
    assert browser.find_element("css selector", "h1").text == HOSTILE_ID
    text = browser.execute_script("return document.body.innerText")
    assert HOSTILE_CLAIM in text and HOSTILE_RATIONALE.replace('"', '\\"') in text
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, [onerror]').length") == 0
    assert browser.execute_script("return document.querySelectorAll('body script').length") == 0
    _offline_and_clean(browser, setup.server)


def _raw(server: ViewServer, method: str, path: str, **headers: str) -> tuple[int, str]:
    """A request with the path sent as is (a browser would normalise `..` away)."""
    netloc = urlsplit(server.base).netloc
    conn = http.client.HTTPConnection(netloc, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in {"Content-Length": "0", **headers}.items():
            conn.putheader(key, value)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read().decode("utf-8", "replace")
    finally:
        conn.close()


TRAVERSALS = [
    "/static/../secret.txt",
    "/static/../../secret.txt",
    "/static/%2e%2e/%2e%2e/secret.txt",
    "/static/..%2F..%2Fsecret.txt",
    "/static/%2fetc%2fpasswd",
    "/static//etc/passwd",
    "/runs/{id}/items/claims/..%2F..%2F..%2Fsecret.txt",
    "/runs/{id}/items/..%2F..%2Fsecret.txt/c1",
    "/runs/{id}/items/%2Fetc%2Fpasswd/c1",
    "/runs/..%2F..%2Fsecret.txt",
    "/runs/{id}/..%2F..%2Fsecret.txt",
    "/api/runs/..%2Fsecret.txt/version",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_attempts_get_404_never_a_file(
    setup: Setup, ids: dict[str, str], path: str
) -> None:
    auth = {"X-Assay-Token": setup.server.token}
    status, body = _raw(setup.server, "GET", path.format(id=ids["checks"]), **auth)
    assert status == 404, (status, body[:300])
    assert SECRET not in body and "root:" not in body


def test_a_url_without_the_token_cannot_write_a_label(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    run_dir = setup.built.run_dir
    before = (run_dir / LABELS_FILE).read_bytes() if (run_dir / LABELS_FILE).exists() else b""
    body = json.dumps({"dataset": "claims", "item_id": "c2", "label": "supported"})
    path = f"/api/runs/{ids['checks']}/labels"
    status, _ = _raw(setup.server, "POST", path, **{"Content-Type": "application/json"})
    assert status == 403
    _visit(browser, setup.server, "/")  # cookies are deleted for the page's host
    browser.delete_all_cookies()
    try:
        _visit(browser, setup.server, _item_path(ids["checks"], "c2"))
        assert "token required" in browser.execute_script("return document.body.innerText")
        assert browser.find_elements("id", "label-form") == []
        answer = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {method: 'POST', headers: {'Content-Type': 'application/json'},"
            " body: arguments[1]}).then(r => done(r.status), e => done(String(e)));",
            path,
            body,
        )
        assert answer == 403
    finally:
        _login(browser, setup.server)
    after = (run_dir / LABELS_FILE).read_bytes() if (run_dir / LABELS_FILE).exists() else b""
    assert after == before


def test_read_only_hides_the_form_and_refuses_writes(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    ro = setup.read_only
    _login(browser, ro)
    _visit(browser, ro, _item_path(ids["checks"], "c3"))
    assert browser.find_elements("id", "label-form") == []
    assert browser.find_elements("id", "label-read-only") != []
    assert browser.find_elements("id", "read-only") != []
    _offline_and_clean(browser, ro)
    answer = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {method: 'POST', credentials: 'same-origin',"
        " headers: {'Content-Type': 'application/json'}, body: arguments[1]})"
        ".then(r => done(r.status), e => done(String(e)));",
        f"/api/runs/{ids['checks']}/labels",
        json.dumps({"dataset": "claims", "item_id": "c3", "label": "unsupported"}),
    )
    assert answer == 403
    labels = read_adjudications(setup.built.run_dir)
    assert ("claims", "c3") not in labels


def test_runs_list_names_each_runs_kind_and_models(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    """An items run is of kind items (the empty judgments.jsonl every run writes holds no
    ForceBench pair), and its judges' models are listed."""
    _visit(browser, setup.server, "/")
    row = browser.find_element("css selector", f'tr[data-run="{ids["checks"]}"]')
    cells = [td.text for td in row.find_elements("css selector", "td")]
    assert cells[2] == "items"
    assert set(cells[6].split()) == {"openai/careful", "openai/hasty"}


SCRIPT = ROOT / "docs" / "_scripts" / "view_screenshots.py"
TUTORIAL = ROOT / "docs" / "tutorials" / "why-judges-disagree.md"
PICTURES = re.compile(r"\]\(\.\./assets/view/([\w.-]+\.png)\)")


def test_tutorial_screenshots_are_made_by_the_script(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The script makes every picture the tutorial shows, none blank; each is committed."""
    names = PICTURES.findall(TUTORIAL.read_text(encoding="utf-8"))
    assert len(names) >= 5
    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    browser.get("about:blank")
    for name in names:
        assert (ROOT / "docs" / "assets" / "view" / name).is_file(), f"{name} not committed"
        png = (out / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n", name
        width, height, ink = browser.execute_async_script(_INK, base64.b64encode(png).decode())
        assert width >= 1200 and height >= 600, (name, width, height)
        assert ink > 0.01 * width * height, f"{name} is blank"


def test_two_judges_side_by_side(browser: Any, setup: Setup, ids: dict[str, str]) -> None:  # noqa: F811
    _visit(browser, setup.server, _item_path(ids["checks"], "c2") + f"?a={HASTY}&b={CAREFUL}")
    sides = browser.execute_script(
        "return [...document.querySelectorAll('div.side-by-side div.side')].map(s =>"
        " [...s.querySelectorAll('article.judgment')].map(a => a.dataset.judge))"
    )
    assert sides == [[HASTY], [CAREFUL]]
    _offline_and_clean(browser, setup.server)


def test_compare_links_to_the_items_where_two_judges_differ(
    browser: Any,  # noqa: F811
    setup: Setup,
    ids: dict[str, str],
) -> None:
    verdicts: dict[str, dict[str, str]] = {}
    for r in _records(setup.built.run_dir):
        verdicts.setdefault(r["item_id"], {})[r["judge_id"]] = r["label"]
    differ = {i for i, v in verdicts.items() if v[HASTY] != v[CAREFUL]}
    assert differ
    _visit(browser, setup.server, f"/compare?run={ids['checks']}")
    browser.find_element("css selector", "table#differ-links a.differ").click()
    rows = _wait("the items where they differ", lambda: _rows(browser))
    assert {item for item, _, _ in rows} == differ
    assert {judge for _, judge, _ in rows} == {HASTY, CAREFUL}
    _offline_and_clean(browser, setup.server)
