"""Speaking the wire formats of the plugins merchants already run (docs/plugins.md,
docs/spec/COMPAT.md).

Three dialects (UddoktaPay, PipraPay 2.x and 3.x) over the same payments, checkout, matching,
refunds and webhook outbox as the native API: `views.py` the plugins' blueprint and the customer's
return, `core.py` the shared rules, one small module per dialect, `ipn.py` their notifications,
`keys.py` their keys.
"""

from ..extensions import csrf


def register_compat(app):
    """Attach the compatibility blueprint at the origin's root (keys in headers, so no CSRF).

    Its IPNs are connected to the webhooks signals in gateway/__init__.py:connect_listeners.
    """
    from .views import bp, return_bp

    for blueprint in (bp, return_bp):
        csrf.exempt(blueprint)
        app.register_blueprint(blueprint)
