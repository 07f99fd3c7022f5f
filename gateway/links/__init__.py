"""Payment links: a page at /pay/<slug> that a shop shares instead of running a website."""
