"""How a stage's work is executed: the executors that work through a stage's items (a bounded
asyncio pool, Ray actors for local models), progress bars, and the failure policy that
decides when a run stops.
"""
