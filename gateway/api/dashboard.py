"""The dashboard summary: counts, volumes, success rate, today and the last 30 days."""

from ..livemode import current_livemode
from ..payments.dashboard import dashboard_summary
from ..schemas.common import envelope
from ..schemas.dashboard import DashboardSummarySchema
from .auth import caller_brand
from .paging import single
from .resource import resource_blueprint

URL = "dashboard"
blp = resource_blueprint("dashboard", "Figures for the merchant's dashboard.")


@blp.get("/summary")
@blp.response(200, envelope(DashboardSummarySchema))
def read_summary():
    """Payments per status, paid and refunded volume, success rate, today and a 30-day series."""
    return single(dashboard_summary(caller_brand(), livemode=current_livemode()))
