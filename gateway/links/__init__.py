"""Payment links: a page at /pay/<slug> that a shop shares instead of running a website."""


def init_app(app):
    """Hook the links into the payment lifecycle (completion and closing), once per process."""
    from ..payments import hooks
    from .paying import link_payment_closed, link_payment_completed

    hooks.register(hooks.ON_COMPLETED, link_payment_completed)
    hooks.register(hooks.ON_CLOSED, link_payment_closed)
