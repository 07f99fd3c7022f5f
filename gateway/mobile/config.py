"""The filter rules the app applies before forwarding an SMS."""

from flask import g

from ..api.paging import single
from ..schemas.common import envelope
from ..schemas.mobile_answers import FilterRulesSchema
from ..sms.filter_rules import filter_rules
from .auth import device_blueprint

blp = device_blueprint("config", "The filter rules the phone applies before forwarding an SMS.")


@blp.get("/config/filter-rules")
@blp.response(200, envelope(FilterRulesSchema))
def read_filter_rules():
    """Allowed senders, keywords and how often to check for new rules."""
    return single(filter_rules(g.brand))
