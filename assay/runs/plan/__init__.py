"""The plan of a run: serialisable work items, and which of them are still to do."""
