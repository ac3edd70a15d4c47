"""Finding prompts: built-ins shipped with assay plus user directories.

A user prompt may add new ids or new versions, never replace a built-in: the same
`id@version` with different bytes is an error, because two runs naming the same
prompt must have used the same text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from assay.errors import PromptError
from assay.prompts._prompt import Prompt, load_prompt_file

BUILTIN_DIR = Path(__file__).parent / "builtin"
PROMPT_PATH_ENV = "ASSAY_PROMPT_PATH"


class PromptRegistry:
    """All prompts visible to a run, keyed by (id, version)."""

    def __init__(self, dirs: Iterable[str | Path] = (), *, include_env: bool = True) -> None:
        self._prompts: dict[tuple[str, int], Prompt] = {}
        self._load_dir(BUILTIN_DIR, builtin=True)
        extra = [Path(d) for d in dirs]
        if include_env and os.environ.get(PROMPT_PATH_ENV):
            extra += [Path(p) for p in os.environ[PROMPT_PATH_ENV].split(os.pathsep) if p]
        for d in extra:
            if not d.is_dir():
                raise PromptError("prompt directory does not exist", file=d)
            self._load_dir(d, builtin=False)

    def _load_dir(self, directory: Path, *, builtin: bool) -> None:
        """Every prompt of `directory`; a user's are checked whole now (errors at load),
        the built-ins' schemas and templates built when first used (tests check them)."""
        for path in sorted(directory.glob("*.prompt")):
            self._add(load_prompt_file(path, builtin=builtin, check=not builtin))

    def _add(self, prompt: Prompt) -> None:
        key = (prompt.id, prompt.version)
        have = self._prompts.get(key)
        if have is None:
            self._prompts[key] = prompt
        elif have.sha256 != prompt.sha256:
            raise PromptError(
                f"{prompt.ref} is already defined by {have.path} with different content; "
                "bump `version` or choose another `id`",
                file=prompt.path,
            )

    def get(self, ref: str) -> Prompt:
        """Look up `id` (newest version) or `id@version`."""
        pid, _, ver = ref.partition("@")
        if ver:
            try:
                key = (pid, int(ver))
            except ValueError:
                raise PromptError(
                    f"bad prompt reference {ref!r}: version must be an integer"
                ) from None
            if key in self._prompts:
                return self._prompts[key]
        else:
            versions = [v for (i, v) in self._prompts if i == pid]
            if versions:
                return self._prompts[(pid, max(versions))]
        known = ", ".join(sorted({p.ref for p in self._prompts.values()}))
        raise PromptError(f"unknown prompt {ref!r}; known prompts: {known}")

    def __iter__(self) -> Iterator[Prompt]:
        return iter(sorted(self._prompts.values(), key=lambda p: (p.id, p.version)))

    def __len__(self) -> int:
        return len(self._prompts)
