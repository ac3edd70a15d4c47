"""Running the stages: the runner, the executors that work through a stage's items (asyncio pool,
Ray), progress bars, and the failure policy that decides when a run stops.
"""
