"""The heap is frozen only while hosted requests are in flight, and never against someone
else's `gc.freeze()`; a litellm request through assay holds it (real loopback server)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from assay.models import ChatRequest, ModelConfig
from assay.models._heap import HOSTED_REQUESTS, FrozenHeap
from assay.models._hosted import LiteLLMTransport
from assay.prompts import Message
from assay.testing import FakeOpenAIServer, reply


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


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


def test_litellm_request_holds_the_heap_while_in_flight() -> None:
    seen: list[int] = []
    with FakeOpenAIServer(default=reply('{"label": "supported"}'), latency_s=0.05) as server:
        transport = LiteLLMTransport(ModelConfig(model="openai/x", api_base=server.base_url))
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
