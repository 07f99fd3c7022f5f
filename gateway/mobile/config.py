"""The filter rules the app applies before forwarding an SMS."""

from flask import g

from ..sms.filter_rules import filter_rules
from .auth import device_blueprint
from .http import ok

blp = device_blueprint("config", "The filter rules the phone applies before forwarding an SMS.")


@blp.get("/config/filter-rules")
def read_filter_rules():
    """Allowed senders, keywords and how often to check for new rules."""
    return ok(filter_rules(g.brand))
