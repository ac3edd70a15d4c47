"""A config's `tuned` provenance block, shared by the kinds' configs and the policy
writer (`_tune_write`); alone here so a config need not import the writer, which reads
`PolicySpec`, whose builders import the configs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer


class Tuned(BaseModel):
    """A config's `tuned` provenance block (`apply --split` on the tuning split
    marks the metrics in-sample). Dumped only when set, so a policy never tuned keeps
    the configuration, and `policy_sha256`, it had before the block existed."""

    tuned: dict[str, Any] | None = Field(default=None, description="Tuning provenance.")

    @model_serializer(mode="wrap")
    def _without_untuned(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("tuned", 0) is None:
            del data["tuned"]
        return data
