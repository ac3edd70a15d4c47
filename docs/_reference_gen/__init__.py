"""Builders of the generated reference pages (`python docs/gen_reference.py` writes them).

Each page is a function of the code alone, so the pages cannot drift from it:
`spec` (the run spec's pydantic models), `cli` (the typer app's click commands),
`formats` (the run directory's record, manifest and metrics models) and `api`
(mkdocstrings directives for the public modules).
"""
