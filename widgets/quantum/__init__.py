"""Panels of the quantum techniques."""
