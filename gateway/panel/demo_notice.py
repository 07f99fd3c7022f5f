"""The panel's warning while a demo receiving number is switched on (bootstrap's sample for `make
run`).
"""

from flask_login import current_user

from ..payments.methods import enabled_demo_methods
from . import bp


@bp.context_processor
def demo_notice_context():
    """`live_demo_methods()` for templates/panel/_demo_banner.html; queried only by the pages that
    show it.
    """

    def live_demo_methods():
        """The signed-in user's brand's switched-on demo numbers."""
        return enabled_demo_methods(current_user.brand) if current_user.is_authenticated else []

    return {"live_demo_methods": live_demo_methods}
