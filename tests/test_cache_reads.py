"""Response-cache reads share one SQLite read transaction (`assay.models._cache_reads`).

What must hold: a read still finds what any writer stored once its snapshot ends (after
`MAX_READS` reads, `MAX_AGE_S` seconds, this cache's own write, or its close); another
process can write while a snapshot is open; each thread reads in its own; and the reads
of a fully cached run open one transaction per `MAX_READS`, not one each. `get_many`
answers exactly what `get` answers, key by key, in one query.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from assay.models import RawResponse, ResponseCache, _cache_reads
from assay.models._cache_reads import KEYS_PER_QUERY, MAX_READS


def _response(text: str) -> RawResponse:
    return RawResponse(content=text, finish_reason="stop")


def _fill(cache: ResponseCache, n: int) -> list[str]:
    keys = [f"k{i:05d}" for i in range(n)]
    for key in keys:
        cache.set(key, _response(key))
    cache.flush()
    return keys


def _statements(cache: ResponseCache) -> list[str]:
    """Every SQL statement the cache's connection (this thread's) runs from now on."""
    seen: list[str] = []
    cache._cache._con.set_trace_callback(seen.append)
    return seen


def test_reads_open_one_transaction_per_max_reads(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    keys = _fill(cache, 1000)
    seen = _statements(cache)
    for key in keys:
        hit = cache.get(key)
        assert hit is not None and hit.content == key
    begins = sum(1 for s in seen if s.strip().upper() == "BEGIN")
    assert begins == -(-len(keys) // MAX_READS)  # ceil: 4 for 1,000 reads
    cache.close()


def test_a_write_ends_the_snapshot_so_the_next_read_sees_it(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", batch_size=1)
    assert cache.get("a") is None  # a snapshot is open now
    cache.set("a", _response("A"))  # flushed at once (batch_size=1)
    hit = cache.get("a")
    assert hit is not None and hit.content == "A"
    cache.close()


def test_another_process_writes_while_a_snapshot_is_open_and_is_seen_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cache_reads, "MAX_AGE_S", 3600.0)  # only the read count ends it
    reader = ResponseCache(tmp_path / "c")
    writer = ResponseCache(tmp_path / "c", batch_size=1)  # its own SQLite connection
    assert reader.get("late") is None  # snapshot open
    writer.set("late", _response("L"))  # not blocked by the open read transaction
    assert reader.get("late") is None  # the snapshot predates the write
    for _ in range(MAX_READS):
        reader.get("other")
    hit = reader.get("late")  # a new snapshot
    assert hit is not None and hit.content == "L"
    reader.close()
    writer.close()


def test_a_snapshot_ends_after_max_age(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache_reads, "MAX_AGE_S", 0.05)
    reader = ResponseCache(tmp_path / "c")
    writer = ResponseCache(tmp_path / "c", batch_size=1)
    assert reader.get("x") is None
    writer.set("x", _response("X"))
    time.sleep(0.1)
    reader.get("y")  # the read past the age ends the snapshot
    hit = reader.get("x")
    assert hit is not None and hit.content == "X"
    reader.close()
    writer.close()


def test_close_ends_the_snapshot_first(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    _fill(cache, 3)
    con = cache._cache._con
    cache.get("k00000")
    assert con.in_transaction
    seen = _statements(cache)
    cache.close()
    assert [s.strip().upper() for s in seen][:1] == ["COMMIT"]


def test_threads_read_in_their_own_snapshots(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    keys = _fill(cache, 50)
    found: list[int] = []

    def read_all() -> None:
        found.append(sum(cache.get(k) is not None for k in keys))
        cache._reads.end()

    threads = [threading.Thread(target=read_all) for _ in range(4)]
    cache.get(keys[0])  # the main thread's snapshot stays open meanwhile
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [50, 50, 50, 50]
    cache.close()


def test_the_cache_page_states_the_numbers_the_code_uses() -> None:
    from assay.runs.stages._cache_first import CHUNK

    page = (Path(__file__).parent.parent / "docs" / "how-to" / "cache.md").read_text("utf-8")
    section = page.split("## How a run reads it", 1)[1].split("\n## ", 1)[0]
    assert f"chunks of {CHUNK}" in section
    assert f"at most {MAX_READS}\nreads" in section or f"at most {MAX_READS} reads" in section
    assert _cache_reads.MAX_AGE_S == 0.5 and "half a second" in section


def test_get_many_answers_what_get_answers(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", batch_size=10_000)
    keys = _fill(cache, KEYS_PER_QUERY + 20)  # more keys than one query takes
    big = "x" * 100_000  # diskcache keeps a value this size in a file of its own
    cache.set("big", _response(big))
    cache.flush()
    cache.set("pending", _response("P"))  # not written yet: read from the buffer
    cache._cache.set("expired", _response("E").model_dump_json(), expire=0.001)
    cache._cache.set("other-schema", '{"not": "a response"}')
    time.sleep(0.01)
    asked = [*keys, "big", "pending", "expired", "other-schema", "absent", keys[3], "big"]
    got = cache.get_many(asked)
    want = [cache.get(key) for key in asked]
    assert got == want
    assert [None if r is None else r.content for r in got[-7:]] == [
        big,
        "P",
        None,
        None,
        None,
        keys[3],
        big,
    ]
    cache.close()


def test_get_many_is_one_query_in_the_open_snapshot(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    keys = _fill(cache, 200)
    seen = _statements(cache)
    assert all(hit is not None for hit in cache.get_many(keys))
    selects = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1 and sum(s.strip().upper() == "BEGIN" for s in seen) == 1
    assert cache._cache._con.in_transaction  # the snapshot stays open for the next reads
    cache.close()
