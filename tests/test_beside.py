"""`beside` runs a second piece of work in a thread while the block runs: its result or
its error reaches the block, and a block that fails stops the thread at its next chunk."""

from __future__ import annotations

import threading
import time

import pytest

from assay._interrupts import Interrupted, beside, check_cancelled


def test_the_result_and_the_error_reach_the_block() -> None:
    with beside(lambda: sum(range(10))) as result:
        assert result() == 45

    def fails() -> int:
        raise ValueError("bad column")

    with pytest.raises(ValueError, match="bad column"), beside(fails) as result:
        result()


def test_a_failing_block_stops_the_work_at_its_next_chunk() -> None:
    started, chunks = threading.Event(), []

    def long_work() -> None:
        started.set()
        for i in range(10_000):  # 100 s if nobody stopped it
            check_cancelled()
            chunks.append(i)
            time.sleep(0.01)

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt), beside(long_work):
        assert started.wait(10)
        raise Interrupted(2)  # as Ctrl-C raises it in the main thread
    assert time.monotonic() - began < 5 and len(chunks) < 1_000
