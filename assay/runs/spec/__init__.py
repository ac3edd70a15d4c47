"""The run spec (TOML): its pydantic model, blocks naming registered kinds, the `[gate]` block,
and the model endpoints it names, each error naming file, line and field.
"""
