"""`assay view`'s server at the HTTP level on small real runs (items, pairwise, ForceBench,
factuality with policies): every page, the session token and its cookie, labels and
read-only mode, traversal and XSS attempts, the CSP, no external resource, the JSON
API's parameter checks. The command and process tests are in test_view_cli.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from _report_policies_run import HOSTILE
from _view_server_runs import HOSTILE_ID, HOSTILE_OUTPUT, view_paths
from starlette.testclient import TestClient

from assay.view.server import create_app
from assay.view.server._security import COOKIE

TOKEN = "test-token-0123456789"
SECRET = "TOP-SECRET-OUTSIDE-THE-RUNS"
FORCE = "view-forcebench"
AUTH = {"X-Assay-Token": TOKEN}
# a resource the browser would fetch from elsewhere: src/href/action or CSS url()/@import
EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|srcset|poster|formaction)\s*=\s*["']?\s*(?:[a-z]+:)?//)"""
    r"""|(?:url\(\s*["']?\s*(?:[a-z]+:)?//)|@import""",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("view")
    found = view_paths(root)
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    (found[0] / "items" / "leak.txt").symlink_to(outside / "secret.txt")  # in a run dir
    (found[0] / "items" / "leakdir").symlink_to(outside)
    return found


@pytest.fixture(scope="module")
def client(paths: list[Path]) -> Iterator[TestClient]:
    app = create_app(paths, token=TOKEN, read_only=False, annotator="tester")
    with TestClient(app, headers=AUTH) as c:
        yield c


def _ids(client: TestClient) -> dict[str, str]:
    """Run name -> id."""
    return {r["name"]: r["id"] for r in client.get("/api/runs").json()}


def _items_id(client: TestClient) -> str:
    return _ids(client)["view-items"]


def _policies_id(client: TestClient) -> str:
    return _ids(client)["report-policies"]


def _item_url(run_id: str, dataset: str, item_id: str) -> str:
    return f"/runs/{run_id}/items/{quote(dataset, safe='')}/{quote(item_id, safe='')}"


def _all_rows(client: TestClient, run_id: str, **params: Any) -> list[dict[str, Any]]:
    answer = client.get(f"/api/runs/{run_id}/judgments", params={"page_size": 1000, **params})
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()["rows"]
    return rows


def _every_page(client: TestClient) -> list[str]:
    """The URL of every page of both runs (all items, all answers)."""
    items, policies, force = _items_id(client), _policies_id(client), _ids(client)[FORCE]
    urls = ["/", f"/compare?run={items}", f"/compare?run={force}"]
    for run_id in (items, policies, force):
        urls += [f"/runs/{run_id}", f"/runs/{run_id}/items", f"/runs/{run_id}/factuality"]
    for run_id in (items, policies, force):
        keys = {(r["dataset"], r["item_id"]) for r in _all_rows(client, run_id)}
        urls += [_item_url(run_id, d, i) for d, i in sorted(keys)[:12]]
    answers = client.get(f"/runs/{policies}/factuality").text
    urls += sorted(set(re.findall(r'href="(/runs/[^"]+/answers/[^"]+)"', answers)))
    return [u.replace("&amp;", "&") for u in urls]


def test_every_page_answers_200_with_csp_and_no_external_url(client: TestClient) -> None:
    urls = _every_page(client)
    assert sum("/answers/" in u for u in urls) >= 4 and len(urls) > 15
    for url in urls:
        page = client.get(url)
        assert page.status_code == 200, (url, page.text[:300])
        csp = page.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert not EXTERNAL.findall(page.text), url  # data may mention a URL; nothing loads one
        assert page.text.lower().count("<script") == 1  # only <script src="/static/view.js">
        assert '<script src="/static/view.js" defer></script>' in page.text


def test_static_files_fetch_nothing_from_elsewhere(client: TestClient) -> None:
    for name in ("view.css", "view.js", "report.css"):
        text = client.get(f"/static/{name}").text
        assert text and not re.findall(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text), name


def test_runs_page_lists_both_runs_with_status_counts_and_compare(client: TestClient) -> None:
    page = client.get("/").text
    for run_id in _ids(client).values():
        assert f'data-run="{run_id}"' in page and f'value="{run_id}"' in page
    assert 'id="compare"' in page and "openai/first-word::support-check@1" in page
    assert (
        "complete" in page and "18 / 18" in page and "240 / 240" in page
    )  # recorded / planned judgments


def test_run_page_is_the_report_of_assay_report(client: TestClient, paths: list[Path]) -> None:
    from assay.report import RunReport, resolve_format
    from assay.runs.store._rundir import read_run_manifest, read_run_metrics

    run_dir = paths[0] / "items"
    report = RunReport(run_dir, read_run_manifest(run_dir), read_run_metrics(run_dir))
    html = str(resolve_format("html")(report))
    tables = re.findall(r"<table.*?</table>", html, flags=re.S)
    page = client.get(f"/runs/{_items_id(client)}").text
    assert len(tables) >= 3 and all(t in page for t in tables)
    assert 'id="to-items"' in page and 'id="to-compare"' in page


def test_items_table_pages_sorts_and_filters(client: TestClient) -> None:
    run_id = _items_id(client)
    rows = _all_rows(client, run_id, dataset="mine")
    assert len(rows) == 10 and len(_all_rows(client, run_id)) == 18  # + 2 pairs x 2 orders x 2
    params = {"page_size": 3, "page": 4, "dataset": "mine"}
    last = client.get(f"/api/runs/{run_id}/judgments", params=params).json()
    assert last["total"] == 10 and len(last["rows"]) == 1 and last["page"] == 4
    judge = "openai/always::support-check@1"
    assert {r["judge_id"] for r in _all_rows(client, run_id, judge=judge)} == {judge}
    wrong = _all_rows(client, run_id, outcome="wrong")
    assert wrong and all(r["outcome"] == "wrong" for r in wrong)
    by_label = _all_rows(client, run_id, sort="latency_s", desc="1", dataset="mine")
    assert [r["latency_s"] for r in by_label] == sorted(
        (r["latency_s"] for r in rows), reverse=True
    )
    found = _all_rows(client, run_id, search="window.__pwned")
    assert [r["item_id"] for r in found] == [HOSTILE_ID]


def test_the_items_page_renders_the_same_first_page_without_js(client: TestClient) -> None:
    run_id = _items_id(client)
    page = client.get(f"/runs/{run_id}/items?outcome=wrong&page_size=25").text
    wrong = _all_rows(client, run_id, outcome="wrong")
    assert page.count("<tr data-item=") == len(wrong)
    assert '<option value="wrong" selected>' in page and 'id="filters"' in page
    first = client.get(f"/runs/{run_id}/items?dataset=mine&page_size=4&sort=judge_id").text
    assert 'id="prev"' not in first and "page 1 of 3" in first
    following = re.search(r'id="next" href="\?([^"]+)"', first)
    assert following, "no next link"
    second = client.get(f"/runs/{run_id}/items?" + following.group(1).replace("&amp;", "&"))
    assert "page 2 of 3" in second.text and 'id="prev"' in second.text
    assert 'data-sort="judge_id"' in second.text and "judge ▲" in second.text


def test_differ_link_from_the_comparison_opens_the_items_where_two_judges_differ(
    client: TestClient,
) -> None:
    run_id = _items_id(client)
    page = client.get(f"/compare?run={run_id}").text
    assert 'id="comparison"' in page
    links = [
        u.replace("&amp;", "&") for u in re.findall(r'class="differ"[^>]*href="([^"]+)"', page)
    ]
    assert len(links) == 2  # the two single-label judges, the two pairwise judges
    found = 0
    for link in links:
        table = client.get(link)
        assert table.status_code == 200
        judges = re.findall(r"differ=([^&]+)", link)
        rows = _all_rows(client, run_id, judge=[unquote(j) for j in judges])
        verdicts: dict[tuple[str, str | None], list[str | None]] = {}
        for r in rows:
            verdicts.setdefault((r["item_id"], r["variant"]), []).append(
                r["label"] or r["preference"]
            )
        differing = {i for (i, _), v in verdicts.items() if None not in v and len(set(v)) > 1}
        shown = set(re.findall(r'<tr data-item="([^"]+)"', table.text))
        assert {i.replace("&lt;", "<").replace("&gt;", ">") for i in shown} == differing
        found += len(differing)
    assert found


def test_bad_api_parameters_are_400_with_one_line(client: TestClient) -> None:
    run_id = _items_id(client)
    for params in (
        {"page": "x"},
        {"page": "0"},
        {"page_size": "100000"},
        {"sort": "nope"},
        {"outcome": "maybe"},
        {"cache_hit": "perhaps"},
        {"bogus": "1"},
        {"differ": "only-one"},
    ):
        answer = client.get(f"/api/runs/{run_id}/judgments", params=params)
        assert answer.status_code == 400, params
        message = answer.json()["error"]
        assert message and "\n" not in message and next(iter(params)) in message, message
    page = client.get(f"/runs/{run_id}/items?page=x")
    assert page.status_code == 400 and "page" in page.text


def test_token_required_for_reads_and_the_first_url_sets_a_strict_cookie(
    paths: list[Path],
) -> None:
    app = create_app(paths, token=TOKEN, read_only=False, annotator="t")
    with TestClient(app, follow_redirects=False) as c:
        denied = c.get("/")
        assert denied.status_code == 403 and "token required" in denied.text
        assert "content-security-policy" in denied.headers
        assert c.get("/api/runs").status_code == 403
        assert c.get("/?token=wrong").status_code == 403
        assert c.get("/static/view.css").status_code == 200  # no run data in it
        login = c.get("/runs?token=" + TOKEN + "&x=1")
        assert login.status_code == 303 and login.headers["location"] == "/runs?x=1"
        cookie = login.headers["set-cookie"]
        assert f"{COOKIE}={TOKEN}" in cookie and "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower()
        assert c.get("/").status_code == 200  # the cookie now
        c.cookies.clear()
        assert c.get("/", headers=AUTH).status_code == 200
    with TestClient(app, base_url="http://127.0.0.1:8123", follow_redirects=False) as c:
        login = c.get("/?token=" + TOKEN)  # one cookie per port: two viewers coexist
        assert login.headers["set-cookie"].startswith(f"{COOKIE}_8123={TOKEN};")
        assert c.get("/").status_code == 200


def _post_label(c: TestClient, run_id: str, **fields: Any) -> Any:
    body = {"dataset": "mine", "item_id": "q1", "label": "supported", **fields}
    return c.post(f"/api/runs/{run_id}/labels", json=body)


def test_labels_need_the_token_and_show_in_the_item_history(
    client: TestClient, paths: list[Path]
) -> None:
    run_id = _items_id(client)
    anonymous = TestClient(client.app)  # no `with`: its lifespan would close the shared index
    assert _post_label(anonymous, run_id).status_code == 403
    assert not (paths[0] / "items" / "labels.jsonl").exists()
    cross = client.post(
        f"/api/runs/{run_id}/labels", json={}, headers={"Origin": "http://evil.example"}
    )
    assert cross.status_code == 403
    saved = _post_label(client, run_id, note="<b>checked</b> by hand")
    assert saved.status_code == 200, saved.text
    assert saved.json()["annotator"] == "tester" and saved.json()["label"] == "supported"
    line = json.loads((paths[0] / "items" / "labels.jsonl").read_text().splitlines()[-1])
    assert line["item_id"] == "q1" and line["label"] == "supported"
    form = client.post(
        f"/api/runs/{run_id}/labels",
        content="dataset=mine&item_id=q1&label=unsupported&note=",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert form.status_code == 303 and form.headers["location"].endswith(
        "/items/mine/q1#adjudication"
    )
    page = client.get(_item_url(run_id, "mine", "q1")).text
    history = page.split('id="label-history"')[1]
    assert "unsupported" in history and "(was supported)" in history
    assert "&lt;b&gt;checked&lt;/b&gt;" in history and 'id="label-form"' in page
    bad = _post_label(client, run_id, label="bogus-label", item_id="no-such-item")
    assert bad.status_code == 400 and "\n" not in bad.json()["error"]


def test_pairwise_items_get_a_preference_form_and_the_inconsistent_filter(
    client: TestClient, paths: list[Path]
) -> None:
    run_id = _items_id(client)
    inconsistent = _all_rows(client, run_id, inconsistent="1")
    assert {r["item_id"] for r in inconsistent} == {"p1", "p2"}  # "A" in both orders
    page = client.get(_item_url(run_id, "duel", "p1")).text
    assert 'name="preference"' in page and '<option value="tie">' in page
    assert page.count('class="judgment"') == 4  # two judges x two orders
    pair = _all_rows(client, _ids(client)[FORCE], page_size=1)[0]
    pair_page = client.get(_item_url(_ids(client)[FORCE], pair["dataset"], pair["item_id"])).text
    assert 'id="label-form"' not in pair_page and 'id="label-not-here"' in pair_page
    saved = _post_label(client, run_id, dataset="duel", item_id="p1", label=None, preference="B")
    assert saved.status_code == 200 and saved.json()["preference"] == "B"
    wrong_kind = _post_label(client, run_id, dataset="duel", item_id="p2")
    assert wrong_kind.status_code == 400


def test_read_only_refuses_writes_and_hides_the_form(paths: list[Path]) -> None:
    app = create_app(paths, token=TOKEN, read_only=True, annotator="t")
    with TestClient(app, headers=AUTH) as c:
        run_id = _items_id(c)
        refused = _post_label(c, run_id, label="unsupported")
        assert refused.status_code == 403 and "read-only" in refused.json()["error"]
        page = c.get(_item_url(run_id, "mine", "q2")).text
        assert 'id="label-form"' not in page and 'id="label-read-only"' in page


def test_traversal_attempts_are_refused_and_leak_nothing(client: TestClient) -> None:
    run_id = _items_id(client)
    attempts = [
        "/runs/..%2F..%2F..%2Fetc%2Fpasswd",
        "/runs/%2e%2e/%2e%2e/etc/passwd",
        "/runs/../../etc/passwd",
        f"/runs/{run_id}/items/mine/..%2F..%2Fleak.txt",
        f"/runs/{run_id}/items/mine/%2Fetc%2Fpasswd",
        f"/runs/{run_id}/items/..%2F..%2F/leak.txt",
        f"/runs/{run_id}/items/leakdir/secret.txt",
        f"/runs/{run_id}/items/mine/leak.txt",
        f"/runs/{run_id}/answers/..%2Fleak.txt",
        f"/runs/{run_id}/answers//etc/passwd",
        f"/runs/{run_id}/leak.txt",
        f"/runs/{run_id}/leakdir/secret.txt",
        "/static/..%2F..%2Fserver%2F_app.py",
        "/static/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/static/leak.txt",
        "/compare?run=..%2F..%2Fetc&run=%2Fetc",
        f"/api/runs/{quote('/etc', safe='')}/judgments",
        "//etc/passwd",
    ]
    for url in attempts:
        answer = client.get(url)
        assert answer.status_code in (400, 404), (url, answer.status_code)
        assert SECRET not in answer.text and "root:x:" not in answer.text
    assert "leak.txt" not in client.get(f"/runs/{run_id}").text


def test_hostile_output_item_id_and_claim_stay_text(client: TestClient) -> None:
    run_id = _items_id(client)
    page = client.get(_item_url(run_id, "mine", HOSTILE_ID))
    assert page.status_code == 200
    assert HOSTILE_OUTPUT not in page.text and "window.__pwned=1" in page.text
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page.text
    assert "<script>alert(1)</script>" not in page.text
    table = client.get(f"/runs/{run_id}/items?search=pwned").text
    assert "<script>alert" not in table and "x&lt;script&gt;alert(1)&lt;/script&gt;/../y" in table
    policies = _policies_id(client)
    answers = re.findall(
        r'href="(/runs/[^"]+/answers/[^"]+)"', client.get(f"/runs/{policies}/factuality").text
    )
    texts = [client.get(a.replace("&amp;", "&")).text for a in answers]
    assert any("window.__pwned=1" in t for t in texts)
    assert not any(HOSTILE in t or "<img src=x" in t for t in texts)


def test_item_page_shows_messages_raw_output_and_two_judges_side_by_side(
    client: TestClient,
) -> None:
    run_id = _items_id(client)
    url = _item_url(run_id, "mine", "q4")
    page = client.get(url).text
    assert page.count('class="judgment"') == 2
    assert 'data-role="user"' in page and "CLAIM: Coffee causes cancer." in page
    assert 'data-status="exact"' in page
    a, b = "openai/first-word::support-check@1", "openai/always::support-check@1"
    side = client.get(url, params={"a": a, "b": b}).text
    assert side.count('class="side"') == 2 and 'class="side-by-side"' in side
    assert client.get(url, params={"a": a, "b": "nobody"}).status_code == 400
    assert client.get(_item_url(run_id, "mine", "no-such")).status_code == 404


def test_answer_pages_show_claims_verdicts_evidence_and_policies(client: TestClient) -> None:
    policies = _policies_id(client)
    listing = client.get(f"/runs/{policies}/factuality").text
    answers = re.findall(r'href="(/runs/[^"]+/answers/[^"]+)"', listing)
    pages = [client.get(a.replace("&amp;", "&")).text for a in answers]
    assert all('class="verdicts"' in p and "data-passage=" in p for p in pages)
    assert all('id="policies"' in p and "reason code" in p for p in pages)
    assert all('class="policies-claim"' in p for p in pages)
    assert any('<mark class="span"' in p for p in pages)  # the spans decisions rest on
    assert client.get(f"/runs/{policies}/answers/no-such-answer").status_code == 404
    table = client.get(f"/runs/{policies}/items").text  # claim rows link their answer
    links = {u.replace("&amp;", "&") for u in re.findall(r'class="answer" href="([^"]+)"', table)}
    assert links and links <= {a.replace("&amp;", "&") for a in answers}


def test_an_unexpected_error_is_one_line_not_a_traceback(
    paths: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import assay.view.detail

    def broken(*_: Any, **__: Any) -> None:
        raise ValueError("boom\nsecond line")

    monkeypatch.setattr(assay.view.detail, "item_detail", broken)
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    app = create_app(paths, token=TOKEN)
    with TestClient(app, headers=AUTH) as c:
        page = c.get(_item_url(_items_id(c), "mine", "q1"))
    assert page.status_code == 500 and "internal error: ValueError: boom second line" in page.text
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and "boom second line" in err


def test_the_compare_page_takes_the_gold_source_as_assay_compare_does(
    paths: list[Path], tmp_path: Path
) -> None:
    """`/compare?gold=adjudicated` is `assay compare --gold adjudicated`: a person's label
    replaces the item's gold, and the page says how many items took one."""
    import shutil

    from assay.adjudication import append_adjudication
    from assay.compare import compare_runs

    run = tmp_path / "items"
    shutil.copytree(paths[0] / "items", run)
    (run / "labels.jsonl").unlink(missing_ok=True)
    append_adjudication(run, dataset="mine", item_id="q1", annotator="t", label="unsupported")
    app = create_app([tmp_path], token=TOKEN, read_only=False, annotator="t")
    with TestClient(app, headers=AUTH) as c:
        run_id = _items_id(c)
        plain = c.get(f"/compare?run={run_id}").text
        adjudicated = c.get(f"/compare?run={run_id}&gold=adjudicated").text
        assert c.get(f"/compare?run={run_id}&gold=bogus").status_code == 400
    expected = compare_runs([run], gold="adjudicated").notes
    note = next(n for n in expected if n.startswith("gold: adjudicated: 1 of"))
    assert "gold: adjudicated" not in plain
    assert note.split(";")[0] in adjudicated.replace("&#39;", "'")
    assert '<option value="adjudicated" selected>' in adjudicated
