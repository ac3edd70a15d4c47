"""The run directory on disk: the append-only record files, the manifest and its counters,
resuming, the environment a run happened in, and checks that record files are whole.
"""
