"""The three dialects by name, and which one a request speaks."""

from . import piprapay2, piprapay3, uddoktapay

DIALECTS = {module.NAME: module for module in (uddoktapay, piprapay2, piprapay3)}


def dialect_of(name):
    """The dialect module of a key's or delivery's dialect name."""
    return DIALECTS[name]
