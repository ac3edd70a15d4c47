"""`assay view`: a local web viewer of run directories, their items and judgments.

Layers, each importing only those before it:

- `index/`: finds run directories under the given paths and answers table queries
  (filters, sorts, pages) over their record files with DuckDB, following runs that
  are still being written.
- `detail/`: one item (its variables, gold, every judgment with the messages rebuilt
  from the prompt file) and one answer's factuality chain, as pydantic models.
- `server/`: the Starlette application (pages, JSON endpoints, the session token,
  read-only mode) and `serve()`, which runs it under uvicorn.

Starlette, uvicorn and DuckDB come with the `view` extra: `pip install 'assay[view]'`.
"""
