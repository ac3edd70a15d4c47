"""Parsing model output into verdicts; versioned so re-parsed runs say which parser."""

from assay.core.labels import normalise_label
from assay.parsing._json import extract_json_object
from assay.parsing._verdict import PARSER_VERSION, ParsedVerdict, parse_verdict

__all__ = [
    "PARSER_VERSION",
    "ParsedVerdict",
    "extract_json_object",
    "normalise_label",
    "parse_verdict",
]
