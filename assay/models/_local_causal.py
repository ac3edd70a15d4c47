"""The local causal-LM transport (`hf/<dir or hub id>`): a transformers chat model,
loaded lazily, run offline, one generation at a time.

Decoding is what the request says and nothing else: greedy at temperature 0, otherwise
sampling seeded with `decoding.seed`; the model's own generation_config only supplies its
eos/pad/bos token ids.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._cache import cache_key
from assay.models._config import Decoding, ModelConfig
from assay.models._hf import LocalModelFiles, LocalOptions, SerialGate, library_versions
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, RawResponse

CONTEXT_TOO_LONG = "ContextWindowExceededError"


class _ContextTooLong(Exception):
    pass


@dataclass(frozen=True)
class _Prompt:
    """A tokenized prompt on the model's device, and how many tokens may follow it."""

    input_ids: Any
    attention_mask: Any
    length: int
    max_new: int


class LocalCausalTransport:
    """A local causal LM answering chat requests, behind the same `Model` layers as hosted
    ones. A model that cannot be loaded raises `ModelConfigError` (fatal); a failure while
    generating is this request's `TransportError`."""

    response_type = RawResponse
    max_concurrency = 1

    def __init__(self, config: ModelConfig) -> None:
        options = LocalOptions(config, "hf")
        self.config = config
        self.path = options.path
        self.files = LocalModelFiles(options.path, config.model)
        self._device_option = options.device
        self._dtype = options.dtype
        self._gate = SerialGate()
        self._load_lock = threading.Lock()
        self._device: str | None = None
        self._tokenizer: Any = None
        self._model: Any = None

    # -- identity ----------------------------------------------------------------------
    def directory(self) -> Path:
        return self.files.directory()

    def fingerprint(self) -> str:
        return self.files.fingerprint()

    def describe(self) -> dict[str, Any]:
        directory, fingerprint = self.files.identity()
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
            self.files.config("causal")
            tokenizer = self.files.tokenizer()
            if not getattr(tokenizer, "chat_template", None):
                raise ModelConfigError(
                    f"model {self.config.model!r}: the tokenizer in {self.directory()} has no "
                    "chat template; hf/ models must be chat (instruction-tuned) models whose "
                    "tokenizer_config.json or chat_template.jinja defines one"
                )
            model, device = self.files.load("causal", self._device_option, self._dtype)
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

    def _encode(self, request: ChatRequest) -> _Prompt:
        """Tokenize the rendered prompt; refuse one the context window cannot hold and cap
        new tokens at what still fits."""
        enc = self._tokenizer(self.render(request), add_special_tokens=False, return_tensors="pt")
        length = int(enc["input_ids"].shape[1])
        max_new = request.decoding.max_tokens
        limit = getattr(self._model.config, "max_position_embeddings", None)
        if isinstance(limit, int):
            if length >= limit:
                raise _ContextTooLong(f"prompt has {length} tokens; the model's maximum is {limit}")
            max_new = min(max_new, limit - length)
        return _Prompt(
            enc["input_ids"].to(self._device),
            enc["attention_mask"].to(self._device),
            length,
            max_new,
        )

    def _generation_config(self, decoding: Decoding, max_new: int, eos_ids: list[int]) -> Any:
        """Every knob set explicitly: transformers would otherwise fill unset ones from the
        checkpoint's generation_config (top_k=50, repetition penalties, ...)."""
        import transformers

        pad = self._tokenizer.pad_token_id
        if pad is None and eos_ids:
            pad = eos_ids[0]
        knobs: dict[str, Any] = {"do_sample": False}
        if decoding.temperature > 0:
            knobs = {
                "do_sample": True,
                "temperature": decoding.temperature,
                "top_p": decoding.top_p if decoding.top_p is not None else 1.0,
                "top_k": 0,
                "typical_p": 1.0,
                "min_p": 0.0,
            }
        generation_config: Any = transformers.GenerationConfig
        return generation_config(
            max_new_tokens=max_new,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            min_length=0,
            num_beams=1,
            eos_token_id=eos_ids or None,
            pad_token_id=pad,
            bos_token_id=self._model.generation_config.bos_token_id,
            **knobs,
        )

    def _generate(self, request: ChatRequest) -> RawResponse:
        import torch
        import transformers

        self._ensure_loaded()
        decoding = request.decoding
        prompt = self._encode(request)
        eos_ids = self._eos_ids()
        stops = [s for s in decoding.stop or [] if s]
        criteria = transformers.StoppingCriteriaList()
        if stops:
            criteria.append(_stop_on_strings(self._tokenizer, stops, prompt.length))
        if decoding.temperature > 0 and decoding.seed is not None:
            torch.manual_seed(decoding.seed)
        with torch.inference_mode():
            out = self._model.generate(
                input_ids=prompt.input_ids,
                attention_mask=prompt.attention_mask,
                generation_config=self._generation_config(decoding, prompt.max_new, eos_ids),
                stopping_criteria=criteria,
            )
        generated = [int(t) for t in out[0, prompt.length :].tolist()]
        text = str(self._tokenizer.decode(generated, skip_special_tokens=True))
        text, finish = _finish(text, generated, eos_ids, stops, prompt.max_new)
        return RawResponse(
            content=text,
            finish_reason=finish,
            model_returned=self.path,
            usage=Usage(
                prompt_tokens=prompt.length,
                completion_tokens=len(generated),
                total_tokens=prompt.length + len(generated),
                cost_usd=0.0,
            ),
        )

    async def send(self, request: ChatRequest) -> RawResponse:
        """Generate in the worker thread (loading the model on first use)."""
        try:
            return await self._gate.run(self._generate, request)
        except ModelConfigError:
            raise
        except _ContextTooLong as exc:
            raise TransportError.final(exc, error_type=CONTEXT_TOO_LONG) from exc
        except Exception as exc:  # a failed generation is a recorded api_error, not a crash
            raise TransportError.final(exc) from exc


def _finish(
    text: str, generated: list[int], eos_ids: list[int], stops: list[str], max_new: int
) -> tuple[str, str]:
    """The output cut at the first stop string, and why generation ended."""
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    if cut >= 0:
        return text[:cut], "stop"
    eos_hit = bool(generated) and generated[-1] in eos_ids
    if not eos_hit and len(generated) >= max_new:
        return text, "length"
    return text, "stop"


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
