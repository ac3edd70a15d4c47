"""What local transformers transports share: finding a model directory offline, its
fingerprint, device and dtype options, loading with architecture checks, and a gate
that runs blocking model work in a worker thread one job at a time.

torch and transformers are imported inside functions only: `import assay` and
`assay --help` must stay fast and work without the `[local]` extra installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, TypeVar

from assay.errors import ModelConfigError
from assay.models._config import ModelConfig
from assay.models._quantize import check_quantize, quantize_linear

T = TypeVar("T")

# Files up to this size are hashed whole; larger ones (weights) by size + three samples.
_FULL_HASH_MAX = 16 * 2**20
_SAMPLE = 2**20
_LOCAL_OPTIONS = ("device", "dtype")
_DTYPES = ("float32", "float16", "bfloat16")


def library_versions(*extra: str) -> dict[str, str | None]:
    """Versions of the libraries that compute local outputs (torch, transformers,
    tokenizers and any `extra` ones), without importing them."""
    out: dict[str, str | None] = {}
    for name in ("torch", "transformers", "tokenizers", *extra):
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


def load_cross_encoder(
    files: LocalModelFiles,
    device_option: str | None,
    dtype: str | None,
    *,
    max_length: int,
    activation: Literal["softmax", "identity"] = "softmax",
    quantize: str | None = None,
) -> tuple[Any, str]:
    """A sentence-transformers `CrossEncoder` whose predict() returns softmax
    probabilities over the model's classes (or, with `activation="identity"`, the raw
    logits: a reranker's library default activation differs between model configs),
    truncating pairs to `max_length` tokens.

    The weights load through `load_pretrained` (architecture and missing-weights checks,
    dtype, device), then `quantize` (int8 Linear layers, CPU only) when asked;
    sentence-transformers adds the tokenising, padding and batching.
    Imported here, not at module level: sentence-transformers takes seconds to import.
    """
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.base.modules import Transformer

    directory, model_id = files.directory(), files.model_id
    device = pick_device(device_option, model_id=model_id)
    check_quantize(quantize, device=device, dtype=dtype, model_id=model_id)

    class CheckedTransformer(Transformer):
        def _load_model(self, *args: Any, **kwargs: Any) -> Any:
            model = load_pretrained(
                "sequence-classification", directory, model_id=model_id, device=device, dtype=dtype
            )
            if quantize is None:
                return model
            return quantize_linear(model, quantize, device=device, model_id=model_id)

    offline = {"local_files_only": True}
    try:
        module = CheckedTransformer(
            str(directory),
            transformer_task="sequence-classification",
            config_kwargs=offline,
            processor_kwargs={**offline, "model_max_length": max_length},
        )
        act = torch.nn.Softmax(dim=-1) if activation == "softmax" else torch.nn.Identity()
        encoder = CrossEncoder(modules=[module], device=device, activation_fn=act)
    except ModelConfigError:
        raise
    except Exception as exc:
        raise ModelConfigError(
            f"model {model_id!r}: cannot load a cross-encoder from {directory}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    return encoder.eval(), device


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


class LocalOptions:
    """The part of a model config a local transport reads: the path after the prefix,
    and `device`/`dtype` (and `quantize`, where the transport can) from `extra_body`
    (nothing else is accepted)."""

    def __init__(self, config: ModelConfig, provider: str, *, quantizable: bool = False) -> None:
        model = config.model
        known = (*_LOCAL_OPTIONS, "quantize") if quantizable else _LOCAL_OPTIONS
        if config.provider != provider:
            raise ModelConfigError(f"model {model!r} is not a '{provider}/...' model")
        if config.api_base or config.api_key_env:
            raise ModelConfigError(f"model {model!r}: local models take no api_base or api_key_env")
        unknown = sorted(set(config.extra_body) - set(known))
        if unknown:
            raise ModelConfigError(
                f"model {model!r}: extra_body keys {unknown} are not used by "
                f"{provider} models (known: {', '.join(known)})"
            )
        self.path = model.split("/", 1)[1]
        if not self.path:
            raise ModelConfigError(f"model {model!r}: expected {provider}/<directory or hub id>")
        device = config.extra_body.get("device")
        if device is not None and not isinstance(device, str):
            raise ModelConfigError(f"model {model!r}: device must be a string")
        self.device: str | None = device
        self.dtype = check_dtype(config.extra_body.get("dtype"), model_id=model)
        self.quantize = check_quantize(
            config.extra_body.get("quantize"), device=device, dtype=self.dtype, model_id=model
        )


class LocalModelFiles:
    """A local model's directory and fingerprint, each resolved once."""

    def __init__(self, path: str, model_id: str) -> None:
        self.path = path
        self.model_id = model_id
        self._directory: Path | None = None
        self._fingerprint: str | None = None

    def directory(self) -> Path:
        if self._directory is None:
            self._directory = resolve_model_dir(self.path, model_id=self.model_id)
        return self._directory

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.directory())
        return self._fingerprint

    def config(self, kind: Literal["causal", "sequence-classification"]) -> Any:
        """The model's transformers config, refused when made for another task."""
        return check_architecture(kind, self.directory(), model_id=self.model_id)

    def tokenizer(self) -> Any:
        return load_tokenizer(self.directory(), model_id=self.model_id)

    def load(
        self,
        kind: Literal["causal", "sequence-classification"],
        device_option: str | None,
        dtype: str | None,
    ) -> tuple[Any, str]:
        """The model's weights on the device asked for, and that device's name."""
        device = pick_device(device_option, model_id=self.model_id)
        model = load_pretrained(
            kind, self.directory(), model_id=self.model_id, device=device, dtype=dtype
        )
        return model, device

    def identity(self) -> tuple[str | None, str | None]:
        """(resolved directory, fingerprint), or Nones when the model cannot be found:
        describing a model never raises (preflight does)."""
        try:
            return str(self.directory()), self.fingerprint()
        except ModelConfigError:
            return None, None
