"""The run's `[executor]` block: where local models' batches run.

Plain settings (no Ray import), so a spec validates without the `ray` extra; only a run
that asks for `kind = "ray"` needs it.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

RAY_EXTRA = "pip install 'assay[ray]'"
_RAY_ONLY = ("address", "actors", "num_cpus", "num_gpus", "runtime_env", "max_retries")


class ExecutorOptions(BaseModel):
    """`kind = "local"` (the default): local models score their batches in this process.
    `kind = "ray"`: they score them in Ray actors, each loading the model once, while
    this process keeps the cache and writes every record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["local", "ray"] = Field(
        default="local", description="local: in this process; ray: in Ray actors."
    )
    address: str | None = Field(
        default=None,
        description="Ray cluster address (ray://host:10001 or auto); default RAY_ADDRESS, "
        "else a local Ray instance.",
    )
    actors: int = Field(default=1, ge=1, le=1024, description="Actors per local model.")
    num_cpus: float = Field(default=1.0, ge=0.0, description="CPUs each actor reserves.")
    num_gpus: float = Field(default=0.0, ge=0.0, description="GPUs each actor reserves.")
    runtime_env: dict[str, Any] | None = Field(
        default=None,
        description="Ray runtime_env for a cluster's workers (working_dir, pip, env_vars).",
    )
    max_retries: int = Field(
        default=3, ge=0, le=100, description="Times a batch is re-sent after its actor died."
    )

    @model_validator(mode="after")
    def _ray_keys_need_ray(self) -> Self:
        if self.kind == "local":
            given = [k for k in _RAY_ONLY if k in self.model_fields_set]
            if given:
                raise ValueError(f'{", ".join(given)} only apply to kind = "ray"')
        return self


def actor_threads(options: ExecutorOptions) -> int:
    """Torch threads in an actor: as many as the CPUs it reserves, at least one."""
    return max(1, int(options.num_cpus))
