"""Versioned Jinja prompt templates with content hashes."""

from assay.core.registry import SCHEMAS
from assay.prompts._output import OutputField, ScoreScale, declared_order, score_scale_of
from assay.prompts._prompt import Message, Prompt, PromptMeta, load_prompt_file
from assay.prompts._registry import BUILTIN_DIR, PROMPT_PATH_ENV, PromptRegistry
from assay.prompts._schemas import ForceVerdict, LabelVerdict, SupportVerdict

__all__ = [
    "BUILTIN_DIR",
    "PROMPT_PATH_ENV",
    "SCHEMAS",
    "ForceVerdict",
    "LabelVerdict",
    "Message",
    "OutputField",
    "Prompt",
    "PromptMeta",
    "PromptRegistry",
    "ScoreScale",
    "SupportVerdict",
    "declared_order",
    "load_prompt_file",
    "score_scale_of",
]
