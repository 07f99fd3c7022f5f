"""Refunds: every refund of the brand, newest first, with the payment it returned money from."""

from flask import render_template

from ..api.paging import paginate
from ..payments.refunds import list_refunds_query
from . import bp
from .access import VIEW, current_brand, panel_livemode, requires
from .payments import PER_PAGE, filter_text, page_number


@bp.get("/refunds")
@requires(VIEW)
def refunds():
    """The brand's refunds, narrowed by TrxID when one is given."""
    trx_id = filter_text("trx_id", 20)
    query = list_refunds_query(
        current_brand(), {"trx_id": trx_id} if trx_id else {}, panel_livemode()
    )
    rows, meta = paginate(query, {"page": page_number(), "per_page": PER_PAGE})
    return render_template(
        "panel/refunds.html",
        refunds=rows,
        meta=meta,
        trx_id=trx_id,
        filters={"trx_id": trx_id} if trx_id else {},
    )
