"""The cyclic collector (assay/_collector.py): paused while a command loads, what the
command line loaded frozen, its young passes spaced while it runs; the heap frozen only
while hosted requests are in flight, never against someone else's `gc.freeze()`; a
request through either transport holds it (real loopback server)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import _collector
from assay._collector import HOSTED_REQUESTS, YOUNG_THRESHOLD, FrozenHeap, paused, spaced_passes
from assay.models import ChatRequest, ModelConfig
from assay.models._hosted import LiteLLMTransport
from assay.models._openai_http import OpenAIHTTPTransport
from assay.prompts import Message
from assay.testing import FakeOpenAIServer, reply


@pytest.fixture(autouse=True)
def _unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_collector._Loaded, "froze", False)
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.fixture
def command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test process plays the `assay` command's (undone after the test)."""
    monkeypatch.setattr(_collector._Loaded, "command_line", True)


def test_spaced_passes_in_the_command_line_and_back(command_line: None) -> None:
    before = gc.get_threshold()
    with spaced_passes():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before


def test_spaced_passes_leave_a_library_callers_collector_alone() -> None:
    before = gc.get_threshold()
    with spaced_passes():
        assert gc.get_threshold() == before


def test_spaced_passes_keep_a_threshold_set_higher(command_line: None) -> None:
    before = gc.get_threshold()
    gc.set_threshold(50_000, *before[1:])
    try:
        with spaced_passes():
            assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)


def test_paused_turns_collection_off_and_back_on() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one leaves the outer pause alone
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_paused_leaves_a_collector_someone_disabled_disabled(command_line: None) -> None:
    gc.disable()
    try:
        with paused(freeze=True):
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_paused_freezes_nothing_outside_the_command_line() -> None:
    with paused(freeze=True):
        loaded = [object() for _ in range(10)]
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    del loaded


def test_the_command_line_freezes_what_it_loaded(command_line: None) -> None:
    with paused(freeze=True):
        loaded = [[i] for i in range(1000)]
    frozen = gc.get_freeze_count()
    assert frozen >= 1000 and gc.isenabled()
    with paused(freeze=True):  # a second load adds to assay's own freeze
        more = [[i] for i in range(1000)]
    assert gc.get_freeze_count() >= frozen + 1000
    del loaded, more


def test_requests_leave_the_command_lines_freeze_as_it_is(command_line: None) -> None:
    """The command's loaded heap stays frozen through and after a burst: no full pass
    over it when the last request ends."""
    with paused(freeze=True):
        loaded = [[i] for i in range(1000)]
    frozen = gc.get_freeze_count()
    heap = FrozenHeap()
    with heap.held():
        assert not heap.frozen_by_us
    assert gc.get_freeze_count() == frozen
    del loaded


LITELLM_IMPORT = """
import gc, sys
from assay import _collector
from assay.models import _hosted

seen = []

class Finder:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            seen.append(gc.isenabled())

_collector.command_line()
sys.meta_path.insert(0, Finder())
_hosted.litellm_module()
print(seen, gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_litellm_is_imported_with_the_collector_paused_and_frozen_by_the_command() -> None:
    """Its import made ~0.9 s of full passes; the command keeps its heap frozen after."""
    out = subprocess.run(
        [sys.executable, "-c", LITELLM_IMPORT], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["[False]", "True", "True"]


def test_the_command_lines_later_loads_freeze_on_top_and_requests_leave_it(
    command_line: None,
) -> None:
    """The command's process is assay's: a later load is frozen on top of whatever is
    frozen already, and requests then never unfreeze (nor ask how much is frozen)."""
    with paused(freeze=True):
        pass
    theirs_too = [[i] for i in range(1000)]
    gc.freeze()
    before = gc.get_freeze_count()
    with paused(freeze=True):
        extra = [[i] for i in range(100)]
    frozen = gc.get_freeze_count()
    assert frozen >= before + 100
    heap = FrozenHeap()
    with heap.held():
        assert not heap.frozen_by_us
    assert gc.get_freeze_count() == frozen
    del extra, theirs_too


def test_a_command_that_froze_is_not_asked_how_much_is_frozen(
    command_line: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gc.get_freeze_count()` walks every frozen object (~4-8 ms in a loaded command):
    once the command froze, neither a load nor a run's first request calls it."""
    with paused(freeze=True):
        loaded = [[i] for i in range(1000)]
    calls: list[int] = []
    real = gc.get_freeze_count

    def counted() -> int:
        calls.append(1)
        return real()

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    with paused(freeze=True):
        more = [[i] for i in range(10)]
    heap = FrozenHeap()
    with heap.held():
        assert not heap.frozen_by_us
    assert calls == []
    del loaded, more


def test_first_request_freezes_and_last_unfreezes() -> None:
    heap = FrozenHeap()
    heap.enter()
    frozen = gc.get_freeze_count()
    assert frozen > 0 and heap.frozen_by_us
    heap.enter()  # a second request in flight changes nothing
    assert gc.get_freeze_count() == frozen
    heap.exit()
    assert gc.get_freeze_count() == frozen
    heap.exit()
    assert gc.get_freeze_count() == 0 and not heap.frozen_by_us


def test_garbage_made_before_the_first_request_is_collected_not_frozen() -> None:
    """The young generations are collected before the freeze: a cycle that was already
    garbage does not wait for the burst to end."""

    class Node:
        other: object = None

    gc.disable()  # no automatic collection between making the cycle and the request
    a, b = Node(), Node()
    a.other, b.other = b, a
    alive = weakref.ref(a)
    del a, b
    assert alive() is not None
    gc.enable()
    heap = FrozenHeap()
    with heap.held():
        assert alive() is None


def test_someone_elses_freeze_is_left_alone() -> None:
    gc.freeze()
    theirs = gc.get_freeze_count()
    heap = FrozenHeap()
    with heap.held():
        assert not heap.frozen_by_us
    assert gc.get_freeze_count() == theirs


def test_disabled_collector_is_left_alone() -> None:
    gc.disable()
    try:
        heap = FrozenHeap()
        with heap.held():
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_an_exception_still_unfreezes() -> None:
    heap = FrozenHeap()
    with pytest.raises(RuntimeError), heap.held():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("transport_kind", [LiteLLMTransport, OpenAIHTTPTransport])
def test_a_request_holds_the_heap_while_in_flight(transport_kind: type) -> None:
    seen: list[int] = []
    with FakeOpenAIServer(default=reply('{"label": "supported"}'), latency_s=0.05) as server:
        transport = transport_kind(ModelConfig(model="openai/x", api_base=server.base_url))
        request = ChatRequest(messages=[Message(role="user", content="hi")])

        async def main() -> None:
            task = asyncio.create_task(transport.send(request))
            while not task.done():
                seen.append(gc.get_freeze_count())
                await asyncio.sleep(0)
            raw = await task
            assert raw.content == '{"label": "supported"}'

        asyncio.run(main())
    assert max(seen) > 0  # frozen while the request was in flight
    assert gc.get_freeze_count() == 0 and not HOSTED_REQUESTS.frozen_by_us


def test_a_run_holds_the_heap_frozen_from_start_to_end(tmp_path: Path) -> None:
    """Assay as a library: a run's full collections scan only what the run made, even
    when no request is in flight (cache hits, baselines, Python judges)."""
    import assay
    from assay import JudgeItem, Judgment, Status

    seen: list[int] = []

    async def watching(item: JudgeItem) -> Judgment:
        seen.append(gc.get_freeze_count())
        return Judgment(status=Status.OK, label="supported", score=1.0)

    spec = {"name": "frozen", "bootstrap": 0, "datasets": [{"path": "builtin:forcebench-demo"}]}
    assert gc.get_freeze_count() == 0
    result = assay.run(spec, judges=[watching], output_dir=tmp_path / "run")
    assert result.status == "complete" and seen and min(seen) > 0
    assert gc.get_freeze_count() == 0 and not _collector.RUNS.frozen_by_us
