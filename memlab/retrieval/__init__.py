"""Retrieval kernels: the keyword and vector legs' candidates, fusion, re-ranking, query text."""
