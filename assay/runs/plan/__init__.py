"""What a run will do before it does it: serialisable work items, which are still to do, and
`--dry-run` / `validate --ping` (requests, tokens, cost).
"""
