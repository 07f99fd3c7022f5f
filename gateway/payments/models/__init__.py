"""The payments domain's tables."""
