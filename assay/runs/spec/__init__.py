"""The run spec (TOML): its pydantic model, blocks naming registered kinds, the `[gate]` block,
and the model endpoints it names, each error naming file, line and field; and what a
caller asks of a run and gets back (`RunOptions`, `RunOutcome`).
"""
