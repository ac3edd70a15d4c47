"""Everything a run is made of, built and checked before anything is written: datasets, items
and their gold, judges, decomposer, verifiers and the clients they share.
"""
