"""The notifications domain's tables."""
