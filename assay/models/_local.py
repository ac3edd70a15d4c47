"""Local transformers chat models (`hf/<dir or hub id>`), loaded lazily and run offline.

torch and transformers are imported inside functions only: `import assay` and
`assay --help` must stay fast and work without the `[local]` extra installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, TypeVar

from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._cache import ResponseCache, cache_key
from assay.models._config import ModelConfig
from assay.models._types import CallResult, ChatRequest, RawResponse

T = TypeVar("T")

# Files up to this size are hashed whole; larger ones (weights) by size + three samples.
_FULL_HASH_MAX = 16 * 2**20
_SAMPLE = 2**20
_LOCAL_OPTIONS = ("device", "dtype")
_DTYPES = ("float32", "float16", "bfloat16")


# ---- shared helpers (also used by assay.verifiers._nli_local) ---------------------------


def library_versions() -> dict[str, str | None]:
    """Versions of the libraries that compute local outputs, without importing them."""
    out: dict[str, str | None] = {}
    for name in ("torch", "transformers", "tokenizers"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _looks_like_path(spec: str) -> bool:
    return (
        os.path.isabs(spec)
        or spec.startswith((".", "~"))
        or spec.count("/") > 1
        or "\\" in spec
        or os.path.exists(spec)
    )


def resolve_model_dir(spec: str, *, model_id: str) -> Path:
    """The local directory holding `spec`: the directory itself, or the snapshot of a hub
    id already in the local Hugging Face cache. Never downloads anything."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve()
    if _looks_like_path(spec):
        what = "is not a directory" if path.exists() else "does not exist"
        raise ModelConfigError(f"model {model_id!r}: {path} {what}")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=spec, local_files_only=True))
    except Exception:
        raise ModelConfigError(
            f"model {model_id!r}: {spec!r} is neither a local directory nor a model in the "
            "local Hugging Face cache; assay never downloads models (fetch it first, e.g. "
            f"`hf download {spec}`, or pass a directory)"
        ) from None


def model_fingerprint(directory: Path) -> str:
    """SHA-256 over the top-level files of a model directory (name, size, content).

    Files up to 16 MiB (configs, tokenizer, chat template) are hashed whole; larger ones
    (weights) by their size and three 1 MiB samples, so a re-trained checkpoint saved
    into the same directory gets a new fingerprint without reading gigabytes.
    """
    digest = hashlib.sha256(b"assay-model-fingerprint/1\0")
    files = sorted(
        p
        for p in directory.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() != ".md"
    )
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.name}\0{size}\0".encode())
        with file.open("rb") as fh:
            if size <= _FULL_HASH_MAX:
                for block in iter(lambda: fh.read(_SAMPLE), b""):
                    digest.update(block)
            else:
                for offset in (0, size // 2 - _SAMPLE // 2, size - _SAMPLE):
                    fh.seek(offset)
                    digest.update(fh.read(_SAMPLE))
    return digest.hexdigest()


def pick_device(requested: str | None, *, model_id: str) -> str:
    """'cpu' (default), 'cuda', 'cuda:N', or 'auto' (cuda when available). A device that
    is not there is an error, never a silent fallback: outputs differ across devices."""
    import torch

    name = (requested or "cpu").strip()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ModelConfigError(f"model {model_id!r}: device {name!r} requested but CUDA is absent")
    try:
        torch.device(name)
    except (RuntimeError, ValueError):
        raise ModelConfigError(f"model {model_id!r}: unknown device {name!r}") from None
    return name


def check_dtype(dtype: object, *, model_id: str) -> str | None:
    if dtype is None:
        return None
    if dtype not in _DTYPES:
        raise ModelConfigError(
            f"model {model_id!r}: dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}"
        )
    return str(dtype)


_WHAT = {
    "causal": "a causal language model",
    "sequence-classification": "a sequence-classification (NLI) model",
}


def check_architecture(
    kind: Literal["causal", "sequence-classification"], directory: Path, *, model_id: str
) -> Any:
    """Read the config and refuse a checkpoint made for another task, before any
    weights load. Returns the config."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto

    if kind == "causal":
        names: Any = modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        suffixes: tuple[str, ...] = ("ForCausalLM", "LMHeadModel")
    else:
        names = modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES
        suffixes = ("ForSequenceClassification",)
    try:
        config = AutoConfig.from_pretrained(directory)
    except Exception as exc:
        raise ModelConfigError(
            f"model {model_id!r}: cannot read a transformers config in {directory}: {exc}"
        ) from None
    allowed: set[str] = set()
    for value in names.values():
        allowed.update([value] if isinstance(value, str) else value)
    archs = list(getattr(config, "architectures", None) or [])
    if archs and not any(a in allowed or a.endswith(suffixes) for a in archs):
        raise ModelConfigError(
            f"model {model_id!r}: {directory} is not {_WHAT[kind]} "
            f"(architectures: {', '.join(archs)})"
        )
    return config


def load_pretrained(
    kind: Literal["causal", "sequence-classification"],
    directory: Path,
    *,
    model_id: str,
    device: str,
    dtype: str | None,
) -> Any:
    """Load weights with transformers' Auto classes, refusing the wrong architecture and
    checkpoints whose weights are partly missing (transformers would fill them with
    random values and only log a warning)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    auto: Any = AutoModelForCausalLM if kind == "causal" else AutoModelForSequenceClassification
    what = _WHAT[kind]
    check_architecture(kind, directory, model_id=model_id)
    try:
        model, info = auto.from_pretrained(directory, output_loading_info=True)
    except Exception as exc:
        raise ModelConfigError(
            f"model {model_id!r}: cannot load {what} from {directory}: {type(exc).__name__}: {exc}"
        ) from None
    missing = sorted(info.get("missing_keys") or [])
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise ModelConfigError(
            f"model {model_id!r}: {directory} is not {what} with all its weights "
            f"(missing from the checkpoint: {shown})"
        )
    if dtype is not None:
        model = model.to(getattr(torch, dtype))
    return model.to(device).eval()


def load_tokenizer(directory: Path, *, model_id: str) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(directory)
    except Exception as exc:
        raise ModelConfigError(
            f"model {model_id!r}: cannot load a tokenizer from {directory}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


class SerialGate:
    """Runs blocking model work in a worker thread, one job at a time.

    The asyncio lock keeps waiting callers off the thread pool (bounded); the thread
    lock also serialises callers from other event loops or plain threads. The asyncio
    lock is re-made per event loop, since a lock is bound to the loop it first used.
    """

    def __init__(self) -> None:
        self._thread_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._async_lock: asyncio.Lock | None = None

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._async_lock is None or self._loop is not loop:
            self._async_lock = asyncio.Lock()
            self._loop = loop
        return self._async_lock

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """The blocking form, for synchronous callers (preflight, tests, benchmarks)."""
        with self._thread_lock:
            return fn(*args)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        async with self._lock():
            return await asyncio.to_thread(self.call, fn, *args)


# ---- the chat client ---------------------------------------------------------------------


class _ContextTooLong(Exception):
    pass


class LocalCausalClient:
    """A local causal LM used as a chat model, behind the same interface as hosted ones.

    Decoding is what the request says and nothing else: greedy at temperature 0,
    otherwise sampling seeded with `decoding.seed`; the model's own generation_config
    only supplies its eos/pad/bos token ids. One generation runs at a time.
    """

    def __init__(self, config: ModelConfig, cache: ResponseCache | None = None) -> None:
        if config.provider != "hf":
            raise ModelConfigError(f"model {config.model!r} is not an 'hf/...' model")
        if config.api_base or config.api_key_env:
            raise ModelConfigError(
                f"model {config.model!r}: local models take no api_base or api_key_env"
            )
        unknown = sorted(set(config.extra_body) - set(_LOCAL_OPTIONS))
        if unknown:
            raise ModelConfigError(
                f"model {config.model!r}: extra_body keys {unknown} are not used by local "
                f"models (known: {', '.join(_LOCAL_OPTIONS)})"
            )
        self.config = config
        self.cache = cache
        self.path = config.model.split("/", 1)[1]
        device = config.extra_body.get("device")
        if device is not None and not isinstance(device, str):
            raise ModelConfigError(f"model {config.model!r}: device must be a string")
        self._device_option: str | None = device
        self._dtype = check_dtype(config.extra_body.get("dtype"), model_id=config.model)
        self._gate = SerialGate()
        self._load_lock = threading.Lock()
        self._directory: Path | None = None
        self._fingerprint: str | None = None
        self._device: str | None = None
        self._tokenizer: Any = None
        self._model: Any = None

    # -- identity ----------------------------------------------------------------------
    def directory(self) -> Path:
        if self._directory is None:
            self._directory = resolve_model_dir(self.path, model_id=self.config.model)
        return self._directory

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.directory())
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        try:
            directory: str | None = str(self.directory())
            fingerprint: str | None = self.fingerprint()
        except ModelConfigError:
            directory = fingerprint = None
        template = getattr(self._tokenizer, "chat_template", None)
        return {
            "kind": "local-causal",
            "provider": "hf",
            "model": self.config.model,
            "path": self.path,
            "resolved_path": directory,
            "fingerprint": fingerprint,
            "device": self._device or self._device_option or "cpu",
            "dtype": self._dtype or (str(self._model.dtype) if self._model is not None else None),
            "chat_template_sha256": (
                hashlib.sha256(template.encode()).hexdigest() if isinstance(template, str) else None
            ),
            "max_concurrency": 1,
            "structured_output": "off",
            "extra_body": self.config.extra_body,
            "versions": library_versions(),
        }

    def cache_key(self, request: ChatRequest) -> str:
        """The hosted key (config + request) extended with the model's fingerprint, so a
        new checkpoint saved into the same directory never serves stale entries."""
        base = cache_key(self.config, request, structured_mode="off")
        return hashlib.sha256(f"{base}\0{self.fingerprint()}".encode()).hexdigest()

    # -- loading -------------------------------------------------------------------------
    def preflight(self) -> None:
        """Load now, so a bad path or model fails before the first request."""
        self._ensure_loaded()

    def _ensure_loaded(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            directory = self.directory()
            check_architecture("causal", directory, model_id=self.config.model)
            tokenizer = load_tokenizer(directory, model_id=self.config.model)
            if not getattr(tokenizer, "chat_template", None):
                raise ModelConfigError(
                    f"model {self.config.model!r}: the tokenizer in {directory} has no chat "
                    "template; hf/ models must be chat (instruction-tuned) models whose "
                    "tokenizer_config.json or chat_template.jinja defines one"
                )
            device = pick_device(self._device_option, model_id=self.config.model)
            model = load_pretrained(
                "causal", directory, model_id=self.config.model, device=device, dtype=self._dtype
            )
            self._tokenizer, self._device, self._model = tokenizer, device, model

    # -- generation ----------------------------------------------------------------------
    def render(self, request: ChatRequest) -> str:
        """The prompt text the model sees: the messages through the chat template."""
        self._ensure_loaded()
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        text = self._tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )
        return str(text)

    def _eos_ids(self) -> list[int]:
        eos = self._model.generation_config.eos_token_id
        if eos is None:
            eos = self._tokenizer.eos_token_id
        if eos is None:
            return []
        return [int(e) for e in eos] if isinstance(eos, list | tuple) else [int(eos)]

    def _generate(self, request: ChatRequest) -> RawResponse:
        import torch
        import transformers

        generation_config: Any = transformers.GenerationConfig
        tokenizer, model = self._tokenizer, self._model
        decoding = request.decoding
        enc = tokenizer(self.render(request), add_special_tokens=False, return_tensors="pt")
        input_ids = enc["input_ids"].to(self._device)
        attention_mask = enc["attention_mask"].to(self._device)
        prompt_len = int(input_ids.shape[1])
        max_new = decoding.max_tokens
        limit = getattr(model.config, "max_position_embeddings", None)
        if isinstance(limit, int):
            if prompt_len >= limit:
                raise _ContextTooLong(
                    f"prompt has {prompt_len} tokens; the model's maximum is {limit}"
                )
            max_new = min(max_new, limit - prompt_len)
        eos_ids = self._eos_ids()
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        if pad is None and eos_ids:
            pad = eos_ids[0]
        sampling = decoding.temperature > 0
        # every knob set explicitly: transformers would otherwise fill unset ones from
        # the checkpoint's generation_config (top_k=50, repetition penalties, ...)
        knobs: dict[str, Any] = {"do_sample": False}
        if sampling:
            knobs = {
                "do_sample": True,
                "temperature": decoding.temperature,
                "top_p": decoding.top_p if decoding.top_p is not None else 1.0,
                "top_k": 0,
                "typical_p": 1.0,
                "min_p": 0.0,
            }
        gen = generation_config(
            max_new_tokens=max_new,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            min_length=0,
            num_beams=1,
            eos_token_id=eos_ids or None,
            pad_token_id=pad,
            bos_token_id=model.generation_config.bos_token_id,
            **knobs,
        )
        stops = [s for s in decoding.stop or [] if s]
        criteria = transformers.StoppingCriteriaList()
        if stops:
            criteria.append(_stop_on_strings(tokenizer, stops, prompt_len))
        if sampling and decoding.seed is not None:
            torch.manual_seed(decoding.seed)
        with torch.inference_mode():
            out = model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=gen,
                stopping_criteria=criteria,
            )
        generated = [int(t) for t in out[0, prompt_len:].tolist()]
        eos_hit = bool(generated) and generated[-1] in eos_ids
        text = str(tokenizer.decode(generated, skip_special_tokens=True))
        cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
        if cut >= 0:
            text, finish = text[:cut], "stop"
        elif not eos_hit and len(generated) >= max_new:
            finish = "length"
        else:
            finish = "stop"
        return RawResponse(
            content=text,
            finish_reason=finish,
            model_returned=self.path,
            usage=Usage(
                prompt_tokens=prompt_len,
                completion_tokens=len(generated),
                total_tokens=prompt_len + len(generated),
                cost_usd=0.0,
            ),
        )

    def _load_and_generate(self, request: ChatRequest) -> RawResponse:
        self._ensure_loaded()
        return self._generate(request)

    async def complete(
        self, request: ChatRequest, *, use_cache: bool = True, refresh_cache: bool = False
    ) -> CallResult:
        """Generate (or serve from the cache). A model that cannot be loaded raises
        ModelConfigError; a failure while generating becomes an error result."""
        started = time.perf_counter()
        key = self.cache_key(request) if self.cache is not None else None
        if self.cache is not None and key is not None and use_cache and not refresh_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return CallResult(
                    response=hit, cache_hit=True, latency_s=time.perf_counter() - started
                )
        try:
            raw = await self._gate.run(self._load_and_generate, request)
        except ModelConfigError:
            raise
        except Exception as exc:  # a failed generation is a recorded api_error, not a crash
            kind = "ContextWindowExceededError" if isinstance(exc, _ContextTooLong) else None
            kind = kind or type(exc).__name__
            return CallResult(
                error=f"{kind}: {exc}",
                error_type=kind,
                attempts=1,
                latency_s=time.perf_counter() - started,
            )
        if self.cache is not None and key is not None and (use_cache or refresh_cache):
            self.cache.set(key, raw)  # the cache itself skips uncacheable responses
        return CallResult(response=raw, attempts=1, latency_s=time.perf_counter() - started)


def _stop_on_strings(tokenizer: Any, stops: list[str], prompt_len: int) -> Any:
    """A stopping criterion that ends generation once a stop string appears in the
    decoded output (only the tail is decoded; the final text is cut after decoding)."""
    import torch
    from transformers import StoppingCriteria

    window = 4 * max(len(s) for s in stops) + 8  # a character is at most 4 byte tokens

    class StopOnStrings(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            start = max(prompt_len, int(input_ids.shape[1]) - window)
            done = []
            for row in input_ids:
                tail = tokenizer.decode(row[start:], skip_special_tokens=True)
                done.append(any(s in tail for s in stops))
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StopOnStrings()
