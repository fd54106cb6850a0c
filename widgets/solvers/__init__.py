"""Panels of the solver techniques (ReFloat)."""
