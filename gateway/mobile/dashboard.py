"""The phone's home screen: today's SMS, payments waiting, notifications."""

from flask import g

from .auth import device_blueprint
from .companion import device_dashboard
from .http import ok

blp = device_blueprint("dashboard", "The phone's home screen.")


@blp.get("/dashboard")
def dashboard():
    """Today's figures for this brand, as the phone shows them."""
    return ok(device_dashboard(g.device))
