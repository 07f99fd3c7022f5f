"""The panel writes its audit entries through the accounts domain (shared with the API)."""

from ..accounts.audit import client_address, record_audit, target_reference  # noqa: F401
