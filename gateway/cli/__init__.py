"""The `flask gateway` command line: a front door like the API, the checkout and the panel."""
