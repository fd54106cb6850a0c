"""Panels of the LLM-systems techniques."""
