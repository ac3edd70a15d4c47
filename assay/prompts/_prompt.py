"""A prompt file: TOML front matter + Jinja sections, identified by id@version + SHA-256.

File format (``*.prompt``)::

    +++
    id = "generic-support"
    version = 1
    task = "judge"
    description = "..."
    variables = ["evidence", "claim"]          # required
    optional_variables = ["question"]          # rendered as None when absent
    output_schema = "SupportVerdict"           # a name in the SCHEMAS registry, or
                                               # [output.<field>] tables (see _output.py)
    labels = ["fully_supported", "unsupported"]
    [scores]
    fully_supported = 1.0
    unsupported = 0.0
    +++
    === system ===
    ...jinja...
    === user ===
    ...jinja...

The hash is over the file's exact bytes, so any edit (even whitespace) is a new prompt;
a declared `[output]` schema is in those bytes, and `Prompt.with_output_model` folds the
Python model's schema hash into the prompt's hash.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.registry import SCHEMAS
from assay.errors import PromptError, first_problem
from assay.prompts._output import (
    OutputField,
    ScoreScale,
    build_output_model,
    check_field_name,
    declared_labels,
    declared_order,
    declared_scale,
    scale_from_model,
    schema_sha256,
    with_scale,
)

_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)\r?\n\+\+\+[ \t]*\r?\n", re.DOTALL)
_SECTION = re.compile(r"^===[ \t]*(system|user)[ \t]*===[ \t]*$", re.MULTILINE)
_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)
_JINJA_MARKS = ("{{", "{%", "{#")
_COMPILED: dict[str, jinja2.Template] = {}


def compile_template(source: str) -> jinja2.Template:
    """A template compiled once per distinct source (keyed by its sha256), however often
    the prompt is loaded. Its globals are flattened into a plain dict: jinja copies them
    into every render's context, and copying its ChainMap was a third of a render."""
    key = hashlib.sha256(source.encode()).hexdigest()
    tpl = _COMPILED.get(key)
    if tpl is None:
        tpl = _ENV.from_string(source)
        tpl.globals = dict(tpl.globals)
        if len(_COMPILED) >= 1024:
            _COMPILED.clear()
        _COMPILED[key] = tpl
    return tpl


TASKS = ("judge", "pairwise", "verify", "nli", "decompose")
#: a built-in prompt of each task, named in errors so the fix is one copy-paste away
TASK_EXAMPLES = {
    "judge": "force-aware@1",
    "pairwise": "pairwise-preference@1",
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
    output: dict[str, OutputField] | None = Field(
        default=None,
        description="Declared output fields ([output.<name>]); not with output_schema.",
    )
    score_field: str | None = Field(
        default=None, description="A numeric output field with a range, normalised to [0, 1]."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_output_declaration(cls, data: Any) -> Any:
        if isinstance(data, dict) and "output" in data and "output_schema" in data:
            raise ValueError("declare the output with output_schema or [output] tables, not both")
        return data

    @model_validator(mode="after")
    def _check(self) -> PromptMeta:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
        if self.output is not None:
            self._check_declared_output(self.output)
        elif self.output_schema not in SCHEMAS:
            raise ValueError(
                f"unknown output_schema {self.output_schema!r}; known: {', '.join(SCHEMAS)}"
            )
        if self.task != "decompose" and not self.labels:
            how = " (an enum [output.label] or an integer score_field)" if self.output else ""
            raise ValueError(f"{self.task} prompts need a non-empty `labels` list{how}")
        self._check_scores()
        return self

    def _check_declared_output(self, output: dict[str, OutputField]) -> None:
        for name in output:
            check_field_name(name)
        if self.task != "decompose" and "label" not in output and self.score_field is None:
            raise ValueError("[output] needs a `label` field or a score_field")
        self.labels = declared_labels(output, self.labels, self.score_field)
        self.output_schema = re.sub(r"[^A-Za-z0-9_-]", "_", f"{self.id}_v{self.version}")[:64]

    def score_scale(self) -> ScoreScale | None:
        """The numeric scale named by `score_field`, from [output] or the registered schema."""
        if self.score_field is None:
            return None
        if self.output is not None:
            return declared_scale(self.output, self.score_field)
        return scale_from_model(SCHEMAS.get(self.output_schema), self.score_field)

    def _check_scores(self) -> None:
        if self.score_field is not None:
            self.score_scale()  # a bad score_field fails at load
            if self.scores:
                raise ValueError("use either a [scores] map or a score_field, not both")
        unknown = set(self.scores) - set(self.labels)
        if unknown:
            raise ValueError(f"scores name labels not in `labels`: {sorted(unknown)}")
        missing = [lab for lab in self.labels if lab not in self.scores]
        if self.task == "judge" and missing and self.score_field is None:
            raise ValueError(f"judge prompts need a score for every label; missing {missing}")
        bad = {k: v for k, v in self.scores.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"scores must lie in [0, 1]: {bad}")


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
    _static: dict[str, str] = PrivateAttr(default_factory=dict)
    _output: type[BaseModel] | None = PrivateAttr(default=None)
    _custom_output: bool = PrivateAttr(default=False)

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

    @property
    def output_model(self) -> type[BaseModel]:
        """The model answers are validated against; its JSON schema is the response schema."""
        built: type[BaseModel] | None = self._private()["_output"]  # read on every request
        if built is not None:
            return built
        if self._output is None:
            scale = self.meta.score_scale()
            if self.meta.output is not None:
                self._output = build_output_model(self.meta.output_schema, self.meta.output, scale)
                self._custom_output = True
            else:
                model = SCHEMAS.get(self.meta.output_schema)
                self._output = with_scale(model, scale) if scale else model
        return self._output

    def with_output_model(
        self, model: type[BaseModel], *, score_field: str | None = None
    ) -> Prompt:
        """This prompt answering in any pydantic `model`; its schema hash joins the prompt's.

        `score_field` names a numeric field declared with Field(ge=..., le=...), normalised
        to [0, 1] as the score instead of the label -> score map.
        """
        try:
            scale = scale_from_model(model, score_field) if score_field else None
        except ValueError as exc:
            raise PromptError(str(exc), file=self.path, field="score_field") from None
        output = with_scale(model, scale)
        labels = self.meta.labels
        if scale is not None and scale.integer and "label" not in model.model_fields:
            labels = scale.labels()
        meta = self.meta.model_copy(
            update={
                "output": None,
                "output_schema": model.__name__,
                "score_field": score_field,
                "labels": labels,
                "scores": {} if scale else self.meta.scores,
            }
        )
        digest = hashlib.sha256(f"{self.sha256}+{schema_sha256(output)}".encode()).hexdigest()
        prompt = self.model_copy(update={"meta": meta, "sha256": digest})
        prompt._output = output
        prompt._custom_output = True
        return prompt

    def identity(self) -> dict[str, Any]:
        """What a run records about this prompt."""
        info: dict[str, Any] = {
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
        model = self.output_model  # built on first use, which also sets _custom_output
        if self._custom_output:  # registered schemas keep the identity earlier runs recorded
            info["score_field"] = self.meta.score_field
            info["output_schema_sha256"] = schema_sha256(model)
        order = declared_order(self.meta.output)
        if order is not None:  # recompute reads the order of ordinal labels from here
            info["label_order"] = order
        return info

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
                tpl = compile_template(source)
            except jinja2.TemplateSyntaxError as exc:
                raise PromptError(
                    f"template syntax error in the {which} section: {exc.message}",
                    file=self.path,
                ) from None
            self._compiled[which] = tpl
            if not any(mark in source for mark in _JINJA_MARKS):  # plain text: render once
                self._static[which] = tpl.render().strip()
        return tpl

    def _private(self) -> dict[str, Any]:
        """The private attributes' dict, read directly: pydantic's `__getattr__` for a
        private attribute costs ~2 µs, several times per rendered request."""
        private = self.__pydantic_private__
        assert private is not None  # Prompt declares private attributes
        return private

    def _section(self, which: str, source: str, values: dict[str, Any]) -> str:
        """One section's text: a plain-text section (a fixed system prompt) is the same
        every time, so it is rendered once."""
        private = self._private()
        text: str | None = private["_static"].get(which)
        if text is None:
            template = private["_compiled"].get(which) or self._template(which, source)
            text = template.render(values).strip()
        return text

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
                text = self._section("system", self.system_template, values)
                messages.append(Message(role="system", content=text))  # validating two
            text = self._section("user", self.user_template, values)  # strs beats construct
            messages.append(Message(role="user", content=text))
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


def _parse_meta(front_matter: str, path: Path) -> PromptMeta:
    """The validated front matter; the first problem becomes one error naming its field."""
    try:
        raw_meta = tomllib.loads(front_matter)
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"front matter is not valid TOML: {exc}", file=path) from None
    try:
        return PromptMeta.model_validate(raw_meta)
    except Exception as exc:  # pydantic ValidationError: report the first problem
        from pydantic import ValidationError

        if isinstance(exc, ValidationError):
            problem = first_problem(exc, typo_first=False)
            raise PromptError(problem.message, file=path, field=problem.field) from None
        raise


def load_prompt_file(path: Path, *, builtin: bool = False, check: bool = True) -> Prompt:
    """Parse one ``.prompt`` file; errors name the file and the offending field.
    `check=False` leaves the output schema and the templates to be built when first used
    (the registry's built-ins, checked by the test suite: a run uses one or two of them)."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig")  # an editor's byte-order mark is not text
    except UnicodeDecodeError:
        raise PromptError("prompt files must be UTF-8", file=path) from None
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise PromptError("missing TOML front matter between '+++' lines", file=path, line=1)
    meta = _parse_meta(match.group(1), path)
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
    if check:
        _check_loaded(prompt, sections, path)
    return prompt


def _check_loaded(prompt: Prompt, sections: dict[str, str], path: Path) -> None:
    """Build the output schema and compile each section now, so errors surface at load."""
    meta = prompt.meta
    try:
        prompt.output_model  # noqa: B018
    except (ValueError, TypeError) as exc:
        msg = f"cannot build the output schema: {exc}"
        raise PromptError(msg, file=path, field="output") from None
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
