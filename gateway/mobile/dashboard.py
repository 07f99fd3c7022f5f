"""The phone's home screen: today's money and payments, recent transactions, notifications."""

from flask import g

from ..api.paging import single
from ..schemas.common import envelope
from ..schemas.mobile_answers import DeviceDashboardSchema
from .auth import device_blueprint
from .companion import device_dashboard

blp = device_blueprint("dashboard", "The phone's home screen.")


@blp.get("/dashboard")
@blp.response(200, envelope(DeviceDashboardSchema))
def dashboard():
    """Today's figures for this brand, in its time zone, as the phone shows them."""
    return single(device_dashboard(g.device))
