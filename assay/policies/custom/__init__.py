"""User policy kinds: `@policy(kind, version=N)` on a `ClaimPolicy[Config]` subclass, and the
framework around it (guarding each decision, recording and measuring what it decides).
"""
