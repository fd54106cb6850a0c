"""Panels of the graph techniques (pattern mining)."""
