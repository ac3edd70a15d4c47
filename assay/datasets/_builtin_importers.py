"""The built-in answers importers, registered in `assay.core.registry.IMPORTERS` when this
module is imported (the registry imports it on its first read): one module per format."""

from assay.datasets import _answers_jsonl, _expertqa, _importers, _medscore_input, _wice

__all__ = ["_answers_jsonl", "_expertqa", "_importers", "_medscore_input", "_wice"]
