"""The accounts domain's tables."""
