"""What every policy kind shares and no kind owns: exact numbers and thresholds, canonical JSON,
the decision vocabulary, the grid-search engine, provenance,
the records of a run as a policy reads them, and the `Policy` protocol itself.

Nothing here imports a kind: kinds import the engine, jobs reach kinds only through the
`POLICIES` registry.
"""
