"""A prompt file: TOML front matter + Jinja sections, identified by id@version + SHA-256.

File format (``*.prompt``)::

    +++
    id = "generic-support"
    version = 1
    task = "judge"
    description = "..."
    variables = ["evidence", "claim"]          # required
    optional_variables = ["question"]          # rendered as None when absent
    output_schema = "SupportVerdict"           # a name in the SCHEMAS registry
    labels = ["fully_supported", "unsupported"]
    [scores]
    fully_supported = 1.0
    unsupported = 0.0
    +++
    === system ===
    ...jinja...
    === user ===
    ...jinja...

The hash is over the file's exact bytes, so any edit (even whitespace) is a new prompt.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.registry import SCHEMAS
from assay.errors import PromptError

_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)\r?\n\+\+\+[ \t]*\r?\n", re.DOTALL)
_SECTION = re.compile(r"^===[ \t]*(system|user)[ \t]*===[ \t]*$", re.MULTILINE)
_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)

TASKS = ("judge", "verify", "nli", "decompose")
#: a built-in prompt of each task, named in errors so the fix is one copy-paste away
TASK_EXAMPLES = {
    "judge": "force-aware@1",
    "verify": "verify-context@1",
    "nli": "nli-entailment@1",
    "decompose": "decompose-conditional@1",
}


class PromptMeta(BaseModel):
    """The front matter of a prompt file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    version: int = Field(ge=1)
    task: str
    description: str = ""
    variables: list[str] = Field(default_factory=list)
    optional_variables: list[str] = Field(default_factory=list)
    output_schema: str = "LabelVerdict"
    labels: list[str] = Field(
        default_factory=list, description="Required for judge, verify and nli prompts."
    )
    scores: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> PromptMeta:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        if self.task != "decompose" and not self.labels:
            raise ValueError(f"{self.task} prompts need a non-empty `labels` list")
        if self.output_schema not in SCHEMAS:
            raise ValueError(
                f"unknown output_schema {self.output_schema!r}; known: {', '.join(SCHEMAS)}"
            )
        unknown = set(self.scores) - set(self.labels)
        if unknown:
            raise ValueError(f"scores name labels not in `labels`: {sorted(unknown)}")
        missing = [lab for lab in self.labels if lab not in self.scores]
        if self.task == "judge" and missing:
            raise ValueError(f"judge prompts need a score for every label; missing {missing}")
        bad = {k: v for k, v in self.scores.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"scores must lie in [0, 1]: {bad}")
        return self


class Message(BaseModel):
    role: str
    content: str


class Prompt(BaseModel):
    """A loaded prompt: metadata, templates, source path and content hash."""

    model_config = ConfigDict(frozen=True)

    meta: PromptMeta
    system_template: str | None
    user_template: str
    path: str
    sha256: str
    builtin: bool = False
    _compiled: dict[str, jinja2.Template] = PrivateAttr(default_factory=dict)

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def version(self) -> int:
        return self.meta.version

    @property
    def ref(self) -> str:
        """`id@version`, the human identity; the hash is the exact one."""
        return f"{self.meta.id}@{self.meta.version}"

    @cached_property
    def output_model(self) -> type[BaseModel]:
        return SCHEMAS.get(self.meta.output_schema)

    def identity(self) -> dict[str, Any]:
        """What a run records about this prompt."""
        return {
            "id": self.meta.id,
            "version": self.meta.version,
            "sha256": self.sha256,
            "file": self.path,
            "builtin": self.builtin,
            "task": self.meta.task,
            "output_schema": self.meta.output_schema,
            "labels": self.meta.labels,
            "scores": self.meta.scores,
        }

    def check_task(self, tasks: tuple[str, ...], role: str) -> None:
        """Refuse a prompt written for another task: its labels and schema would not fit."""
        if self.meta.task in tasks:
            return
        wanted = " or ".join(f'task = "{t}"' for t in tasks)
        examples = ", ".join(TASK_EXAMPLES[t] for t in tasks if t in TASK_EXAMPLES)
        raise PromptError(
            f'prompt {self.ref} has task = "{self.meta.task}", but a {role} needs a '
            f"{wanted} prompt: use one such as {examples} (`assay prompts list` shows each "
            "prompt's task)"
        )

    def _template(self, which: str, source: str) -> jinja2.Template:
        tpl = self._compiled.get(which)
        if tpl is None:
            try:
                tpl = _ENV.from_string(source)
            except jinja2.TemplateSyntaxError as exc:
                raise PromptError(
                    f"template syntax error in the {which} section: {exc.message}",
                    file=self.path,
                ) from None
            self._compiled[which] = tpl
        return tpl

    def render(self, variables: dict[str, Any], *, where: str | None = None) -> list[Message]:
        """Render to chat messages. `where` names the data row for error messages."""
        values: dict[str, Any] = {name: None for name in self.meta.optional_variables}
        values.update({k: v for k, v in variables.items() if v is not None or k not in values})
        missing = [v for v in self.meta.variables if values.get(v) is None]
        if missing:
            self._raise_missing(missing[0], where)
        messages: list[Message] = []
        try:
            if self.system_template is not None:
                text = self._template("system", self.system_template).render(values)
                messages.append(Message.model_construct(role="system", content=text.strip()))
            text = self._template("user", self.user_template).render(values)
            messages.append(Message.model_construct(role="user", content=text.strip()))
        except jinja2.UndefinedError as exc:
            name = _undefined_name(str(exc.message))
            self._raise_missing(name, where)
        return messages

    def _raise_missing(self, variable: str, where: str | None) -> None:
        row = f" for {where}" if where else ""
        raise PromptError(
            f"prompt {self.ref} needs variable '{variable}', missing{row}",
            file=self.path,
            field=variable,
        )


def _undefined_name(message: str) -> str:
    match = re.search(r"'([^']+)' is undefined", message)
    return match.group(1) if match else message


def load_prompt_file(path: Path, *, builtin: bool = False) -> Prompt:
    """Parse one ``.prompt`` file; errors name the file and the offending field."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PromptError("prompt files must be UTF-8", file=path) from None
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise PromptError("missing TOML front matter between '+++' lines", file=path, line=1)
    try:
        raw_meta = tomllib.loads(match.group(1))
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"front matter is not valid TOML: {exc}", file=path) from None
    try:
        meta = PromptMeta.model_validate(raw_meta)
    except Exception as exc:  # pydantic ValidationError: report the first problem
        from pydantic import ValidationError

        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise PromptError(msg, file=path, field=field) from None
        raise
    body = text[match.end() :]
    sections = _split_sections(body, path)
    if "user" not in sections:
        raise PromptError("prompt body needs a '=== user ===' section", file=path)
    prompt = Prompt(
        meta=meta,
        system_template=sections.get("system"),
        user_template=sections["user"],
        path=str(path),
        sha256=sha,
        builtin=builtin,
    )
    declared = set(meta.variables) | set(meta.optional_variables)
    for which, source in sections.items():
        prompt._template(which, source)  # compile now: syntax errors surface at load
        undeclared = _referenced(source) - declared
        if undeclared:
            raise PromptError(
                f"{which} section uses undeclared variables {sorted(undeclared)}; "
                "list them in `variables` or `optional_variables`",
                file=path,
            )
    return prompt


def _referenced(source: str) -> set[str]:
    from jinja2 import meta as jmeta

    return set(jmeta.find_undeclared_variables(_ENV.parse(source)))


def _split_sections(body: str, path: Path) -> dict[str, str]:
    parts = _SECTION.split(body)
    if parts[0].strip():
        raise PromptError("text before the first '=== system|user ===' marker", file=path)
    sections: dict[str, str] = {}
    for name, content in zip(parts[1::2], parts[2::2], strict=True):
        if name in sections:
            raise PromptError(f"section '{name}' appears twice", file=path)
        sections[name] = content.strip("\n")
    return sections
