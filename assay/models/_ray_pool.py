"""Local models' batches on Ray: a pool of actors that each build the model once and then
score the chunks this process sends them.

Only the scoring leaves the process. The caller splits its work into chunks exactly as it
would in-process (same rows per model call, so the same floats come back), keeps the
response cache and writes every record; an actor only returns results. A chunk whose actor
dies (killed, out of memory, node lost) is sent again to a fresh actor, so each chunk's
result arrives exactly once, in the caller's order.

`ray` is imported on first use: the package works, and specs validate, without the extra.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.errors import ModelConfigError
from assay.models._ray_options import RAY_EXTRA, ExecutorOptions

# Actors not ready after this long get one line on stderr (loading, or no room on the cluster)
UNPLACED_AFTER_S = 60.0

# A picklable callable run once in each actor: it loads the model and returns the
# function that scores one chunk there.
WorkerRecipe = Callable[[], Callable[[Any], Any]]


class ChunkRunner(Protocol):
    """What a local transport hands its chunks to instead of scoring them itself."""

    def start(self) -> None: ...

    def map(self, chunks: Sequence[Any]) -> list[Any]: ...


def import_ray() -> Any:
    """The `ray` module, or one line naming the extra that provides it."""
    try:
        import ray
    except ImportError:
        raise ModelConfigError(
            f'executor kind "ray" needs the ray extra (ray is not installed): {RAY_EXTRA}'
        ) from None
    return ray


def connect(options: ExecutorOptions) -> Any:
    """Ray, connected: an instance this process already joined (ray.init by the caller),
    else `address`, else RAY_ADDRESS, else a new local instance (Ray's own order)."""
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(
            address=options.address,
            runtime_env=options.runtime_env,
            logging_level="warning",
        )
    return ray


class BatchWorker:
    """The actor's body: builds the scorer (loads the model) once, then scores chunks. A
    model that cannot be loaded is reported by `ready`, as the in-process path would."""

    def __init__(self, recipe: WorkerRecipe) -> None:
        self.error: str | None = None
        self.scorer: Callable[[Any], Any] | None = None
        try:
            self.scorer = recipe()
        except ModelConfigError as exc:
            self.error = exc.message

    def ready(self) -> str | None:
        return self.error

    def score(self, chunk: Any) -> Any:
        if self.scorer is None:
            raise ModelConfigError(self.error or "the model did not load")
        return self.scorer(chunk)


class RayBatchPool:
    """`options.actors` actors for one local model, each with one chunk in flight.

    A caller either hands a whole list to `map` (one caller at a time: the pairs of an
    NLI batch call) or sends single items with `call` from as many threads as it likes
    (a causal LM's requests, an embedder's lists); one pool is used one way only.
    `stats` counts chunks scored and chunks re-sent to a fresh actor after theirs died.
    """

    def __init__(self, options: ExecutorOptions, recipe: WorkerRecipe, *, name: str) -> None:
        self.options = options
        self.recipe = recipe
        self.name = name
        self.actors: list[Any] = []
        self.stats = {"chunks": 0, "resent": 0}
        self._lock = threading.Lock()
        self._actor_class: Any = None
        self._free: queue.Queue[int] = queue.Queue()  # slots of actors with nothing to do

    def start(self) -> None:
        """Connect and start the actors (each loads the model); a model that cannot be
        loaded is the same `ModelConfigError` as in-process. Idempotent."""
        with self._lock:
            if self.actors:
                return
            ray = connect(self.options)
            self._actor_class = ray.remote(BatchWorker).options(
                num_cpus=self.options.num_cpus,
                num_gpus=self.options.num_gpus,
                max_restarts=0,  # a dead actor is replaced here, by a fresh one
            )
            actors = [self._new_actor() for _ in range(self.options.actors)]
            readiness = [a.ready.remote() for a in actors]
            waiting = still_waiting(ray, readiness, self.options, self.name, UNPLACED_AFTER_S)
            if waiting is not None:
                print(waiting, file=sys.stderr, flush=True)
            try:
                errors = ray.get(readiness)
            except ray.exceptions.RayError as exc:  # assay or the model missing on a node
                errors = [f"{self.name}: Ray actors could not start: {_first_line(exc)}"]
            if any(errors):
                for actor in actors:
                    ray.kill(actor)
                raise ModelConfigError(next(e for e in errors if e))
            self.actors = actors
            for slot in range(len(actors)):
                self._free.put(slot)

    def _new_actor(self) -> Any:
        return self._actor_class.remote(self.recipe)

    def map(self, chunks: Sequence[Any]) -> list[Any]:
        """Each chunk's result, in order. A chunk whose actor died goes to a fresh actor
        (at most `max_retries` times per call); an error raised while scoring is raised
        here as itself."""
        self.start()
        ray = import_ray()
        waiting = deque(range(len(chunks)))
        running: dict[Any, tuple[int, int]] = {}
        idle = list(range(len(self.actors)))
        out: dict[int, Any] = {}
        deaths = 0
        while waiting or running:
            while waiting and idle:
                index, slot = waiting.popleft(), idle.pop()
                running[self.actors[slot].score.remote(chunks[index])] = (index, slot)
            (ref,), _ = ray.wait(list(running), num_returns=1)
            index, slot = running.pop(ref)
            try:
                out[index] = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                deaths += 1
                if deaths > self.options.max_retries:
                    raise RuntimeError(
                        f"{self.name}: Ray actors died {deaths} times in one call: {exc}"
                    ) from None
                self._replace(slot)
                waiting.appendleft(index)
            except ray.exceptions.RayTaskError as exc:
                raise exc.cause from None
            idle.append(slot)
        self.stats["chunks"] += len(chunks)
        return [out[i] for i in range(len(chunks))]

    def call(self, item: Any) -> Any:
        """One item's result from the next free actor (blocking; thread-safe: each
        concurrent caller has an actor of its own). An item whose actor died goes to a
        fresh actor, at most `max_retries` times; an error raised while scoring is raised
        here as itself."""
        self.start()
        ray = import_ray()
        slot = self._free.get()
        try:
            for _ in range(self.options.max_retries + 1):
                try:
                    result = ray.get(self.actors[slot].score.remote(item))
                except ray.exceptions.RayActorError as exc:
                    died = exc
                    self._replace(slot)
                    continue
                except ray.exceptions.RayTaskError as exc:
                    raise exc.cause from None
                with self._lock:
                    self.stats["chunks"] += 1
                return result
            raise RuntimeError(
                f"{self.name}: Ray actors died {self.options.max_retries + 1} times "
                f"in one call: {died}"
            )
        finally:
            self._free.put(slot)

    def _replace(self, slot: int) -> None:
        self.actors[slot] = self._new_actor()
        with self._lock:
            self.stats["resent"] += 1

    def close(self) -> None:
        """End the actors (they also end when this pool is garbage-collected)."""
        with self._lock:
            if self.actors:
                ray = import_ray()
                for actor in self.actors:
                    ray.kill(actor)
            self.actors = []
            self._free = queue.Queue()


def still_waiting(
    ray: Any, readiness: list[Any], options: ExecutorOptions, name: str, after_s: float
) -> str | None:
    """One line when actors are not ready after `after_s`: still loading, or waiting for
    room. Every local model holds its actors for the whole run, so a cluster smaller than
    all of them together makes a run wait for ever; the line says what is free."""
    _, pending = ray.wait(readiness, num_returns=len(readiness), timeout=after_s)
    if not pending:
        return None
    free = ray.available_resources()
    return (
        f"assay: {name}: {len(pending)} of {len(readiness)} Ray actors not ready after "
        f"{after_s:g} s (each asks {options.num_cpus:g} CPU, {options.num_gpus:g} GPU; free "
        f"now: {free.get('CPU', 0.0):g} CPU, {free.get('GPU', 0.0):g} GPU); the run's "
        "local models hold their actors until it ends: fewer actors or a bigger cluster "
        "if this does not pass"
    )


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@dataclass
class Placement:
    """Where a run's local causal LMs and dense embedders run: Ray actors, one pool per
    model and settings (a retrieval verifier and the gate with the same dense model
    share its actors)."""

    options: ExecutorOptions
    pools: dict[str, RayBatchPool] = field(default_factory=dict)

    def pool(self, recipe: WorkerRecipe, name: str) -> RayBatchPool:
        """The pool that runs `recipe` (a frozen dataclass: equal settings, equal repr)."""
        key = repr(recipe)
        if key not in self.pools:
            self.pools[key] = RayBatchPool(self.options, recipe, name=name)
        return self.pools[key]


_PLACEMENT: ContextVar[Placement | None] = ContextVar("assay_local_models", default=None)


@contextmanager
def local_models_on(where: ExecutorOptions | Placement | None) -> Iterator[Placement | None]:
    """Local causal-LM transports and dense embedders built inside this block run their
    models on Ray when `where` asks for Ray (a run wraps building its components in it);
    elsewhere, and by default, they run in this process. Nothing connects to Ray here."""
    if isinstance(where, ExecutorOptions):
        where = Placement(where) if where.kind == "ray" else None
    token = _PLACEMENT.set(where)
    try:
        yield where
    finally:
        _PLACEMENT.reset(token)


def ray_placement() -> Placement | None:
    """Where a local model being built now should run: a Ray placement, or None."""
    return _PLACEMENT.get()
