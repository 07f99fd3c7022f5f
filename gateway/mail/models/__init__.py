"""The mail domain's tables."""
