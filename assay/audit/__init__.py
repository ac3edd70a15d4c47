"""`assay verify`: a run directory audited from its own files, at zero API cost.

Every check reads what the run wrote (records, metrics, manifest, prompt and data
snapshots) and recomputes what can be recomputed, so a reader can tell whether the
directory is the one the run produced without the author's machine or an API key.
"""

from assay.audit._model import Check, EnvRow, Verification
from assay.audit._verify import verify_run

__all__ = ["Check", "EnvRow", "Verification", "verify_run"]
