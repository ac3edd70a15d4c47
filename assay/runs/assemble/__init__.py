"""The parts a run is made of, built and checked before anything is written: judges,
decomposer, verifiers and the clients they share, the claims a dataset ships, items and
their gold (the runner assembles them into a run: `runs/runner/_assemble`).
"""
