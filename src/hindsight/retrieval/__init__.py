"""Retrieval: keyword weighting and the ranking of recall candidates (pure functions)."""
