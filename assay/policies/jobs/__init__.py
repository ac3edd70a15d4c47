"""What a user does with policies over a run directory: read `[[policies]]` blocks, apply,
tune, sweep, compare and export, each writing under `RUN_DIR/policies/<name>/`.
"""
