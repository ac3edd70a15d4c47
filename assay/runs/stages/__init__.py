"""The stages of a run — items, judge, decompose, verify, gate — each turning planned work into
append-only records, and provider batch jobs as one way of executing the judge stage.
"""
