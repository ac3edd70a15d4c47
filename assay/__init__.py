"""assay: reproducible LLM judges and claim-level verification.

Importing assay is cheap: litellm, torch and transformers load only when a model is
called.
"""

from assay._version import __version__
from assay.errors import AssayError

__all__ = ["AssayError", "__version__"]
