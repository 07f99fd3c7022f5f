"""Business rules, callable without HTTP: the API, the checkout, the panel and jobs share them."""
