"""Policies in run reports: the data each applied policy contributes, its risk–coverage curve
and sample claims, read from what `assay policies apply` wrote.
"""
