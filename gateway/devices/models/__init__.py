"""The devices domain's tables."""
