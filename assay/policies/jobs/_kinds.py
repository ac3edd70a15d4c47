"""The built-in policy kinds: importing this module registers each in POLICIES.

One import per kind module (each registers itself with `@POLICIES.register(...)`).
"""

from __future__ import annotations
