"""The production app (settings from the environment, as the systemd unit gives them) plus a page
echoing the client.

tests/test_deploy_nginx.py serves it with gunicorn behind nginx to see what the app makes of
forwarded headers.
"""

from flask import request

from app import app


@app.get("/_test/whoami")
def whoami():
    """The client's address and the scheme as the app sees them."""
    return {"remote_addr": request.remote_addr, "scheme": request.scheme, "host": request.host}
