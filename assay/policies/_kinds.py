"""The built-in policy kinds: importing this module registers each in POLICIES.

One import per kind module (each registers itself with `@POLICIES.register(...)`).
"""

from __future__ import annotations

from assay.policies import _cs_policy as _cs_policy  # claim_selective
from assay.policies import _fc_policy as _fc_policy  # fail_closed
from assay.policies import _gate_policy as _gate_policy  # evidence_gate
