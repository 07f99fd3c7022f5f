"""The hosted checkout at /checkout/<token>: the page a customer pays on, in the brand's name."""


def register_checkout(app):
    """Attach the checkout pages to an application."""
    from . import manual, receipts, test_mode, wallet_api  # noqa: F401 - their routes join the checkout's blueprint
    from .invoices import bp as invoice_bp
    from .pay_links import bp as pay_links_bp
    from .views import bp

    app.register_blueprint(bp)
    app.register_blueprint(pay_links_bp)
    app.register_blueprint(invoice_bp)
