"""Companion phones: pairing, tokens, notifications, a brand's devices."""
