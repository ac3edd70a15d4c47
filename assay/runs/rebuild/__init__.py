"""A run's metrics rebuilt from its record files alone (`recompute`, `reparse`), and other
tools' released outputs turned into run directories.
"""
