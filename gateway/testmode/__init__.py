"""Test mode: a test payment's outcomes simulated through the real path, and a brand's test data
deleted (docs/testing-your-integration.md)."""
