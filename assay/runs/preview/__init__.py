"""What a run would do, before it does it: `assay run --dry-run` (requests, tokens, cost,
as a table or JSON) and `assay validate --ping` (one small request per endpoint)."""
