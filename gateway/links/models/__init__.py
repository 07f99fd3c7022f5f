"""The payment link tables."""
