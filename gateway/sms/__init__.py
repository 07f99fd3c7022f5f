"""SMS: parsing, ingest, matching and claims, inbox, templates, crypto, filter rules, outbound
queue.
"""
