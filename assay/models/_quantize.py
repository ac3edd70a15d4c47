"""Opt-in int8 dynamic quantisation of a local pair model's Linear layers, for CPU.

`torch.ao.quantization.quantize_dynamic` stores the Linear weights as int8 and quantises
activations on the fly; it has CPU kernels only, so any other device is refused rather
than silently run in full precision. A quantised model computes different numbers from
its checkpoint, so it gets its own fingerprint (`quantized_fingerprint`): its scores
never share cache entries or records' model sha256 with the full-precision model.

Activations get one scale per batch, so an int8 pair's scores also move a little with
its batch-mates (up to 0.02 in probability on the tiny test model, where float32 moves
1e-7); the cache keeps the first scoring of a pair. batch_size = 1 removes the effect.

torch is imported inside functions only (see assay.models._hf).
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

from assay.errors import ModelConfigError

QUANTIZE_SCHEMES = ("int8",)
METHOD = "torch.ao.quantization.quantize_dynamic(Linear, qint8)"
_CPU_DEVICES = ("cpu", "auto")


def check_quantize(
    value: object, *, device: str | None, dtype: str | None, model_id: str
) -> str | None:
    """The scheme asked for (None: full precision), refused with one line when unknown,
    combined with a half-precision dtype, or asked of a device other than the CPU."""
    if value is None:
        return None
    if value not in QUANTIZE_SCHEMES:
        raise ModelConfigError(
            f"model {model_id!r}: quantize must be one of {', '.join(QUANTIZE_SCHEMES)} "
            f"(or absent for full precision), got {value!r}"
        )
    if dtype not in (None, "float32"):
        raise ModelConfigError(
            f"model {model_id!r}: quantize = {value!r} quantises float32 weights; "
            f"drop dtype = {dtype!r}"
        )
    if device is not None and device.strip() not in _CPU_DEVICES:
        refuse_device(str(value), device, model_id=model_id)
    return str(value)


def refuse_device(scheme: str, device: str, *, model_id: str) -> None:
    raise ModelConfigError(
        f"model {model_id!r}: quantize = {scheme!r} runs on the CPU only (dynamic int8 "
        f"kernels are CPU kernels), not on device {device!r}; use device = 'cpu' or drop "
        "quantize"
    )


def quantized_engine() -> str:
    """The quantised CPU engine torch will use ('x86', 'fbgemm', 'qnnpack', 'onednn'),
    or refuse: a torch build without one cannot run an int8 model."""
    import torch

    engine = str(torch.backends.quantized.engine)
    if engine == "none" or engine not in torch.backends.quantized.supported_engines:
        raise ModelConfigError(
            "quantize = 'int8': this torch build has no quantised CPU engine "
            f"(supported: {torch.backends.quantized.supported_engines})"
        )
    return engine


def quantize_linear(model: Any, scheme: str, *, device: str, model_id: str) -> Any:
    """`model` (loaded on `device`, float32) with its Linear layers dynamically quantised.

    torch 2.13 marks torch.ao.quantization deprecated (torchao is its successor); the
    warnings it prints on every load are silenced here, the call itself is unchanged."""
    import torch

    if device != "cpu":
        refuse_device(scheme, device, model_id=model_id)
    quantized_engine()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*", category=UserWarning)
        from torch.ao.quantization import quantize_dynamic

        quantized: Any = quantize_dynamic(  # type: ignore[no-untyped-call]
            model, {torch.nn.Linear}, dtype=torch.qint8
        )
        return quantized.eval()


def quantized_fingerprint(source: str, scheme: str) -> str:
    """The fingerprint of `scheme` applied to the checkpoint fingerprinted `source`:
    different from `source`, and the same wherever the same checkpoint is quantised."""
    text = f"assay-quantized/1\0{scheme}\0{METHOD}\0{source}"
    return hashlib.sha256(text.encode()).hexdigest()


def describe_quantization(scheme: str, source: str | None) -> dict[str, Any]:
    """The manifest's account of a quantised model: scheme, method, the engine in use and
    the fingerprint of the checkpoint it was made from."""
    try:
        engine: str | None = quantized_engine()
    except (ModelConfigError, ImportError):
        engine = None
    return {
        "scheme": scheme,
        "method": METHOD,
        "activations": "quantised at run time with one scale per batch",
        "engine": engine,
        "source_fingerprint": source,
    }
