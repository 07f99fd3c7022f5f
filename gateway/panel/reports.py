"""Reports: CSV downloads of payments and refunds for a range of days, in the brand's time zone."""

from flask import Response, abort, render_template, request, stream_with_context
from wtforms import DateField
from wtforms.validators import Optional

from ..i18n import lazy_gettext as _l
from ..reports.exports import EXPORTS, csv_chunks, file_name
from . import bp
from .access import VIEW, current_brand, panel_livemode, requires
from .formatting import current_zone
from .forms import QueryForm

KIND_NAMES = {"payments": _l("Payments"), "refunds": _l("Refunds"), "invoices": _l("Invoices")}


class RangeForm(QueryForm):
    """The days to export, read from the query string (a download changes nothing: no token)."""

    date_from = DateField(_l("From"), validators=[Optional()])
    date_to = DateField(_l("To"), validators=[Optional()])


@bp.get("/reports")
@requires(VIEW)
def reports():
    """The export page: a range of days and a download per kind."""
    form = RangeForm(request.args)
    form.validate()
    return render_template(
        "panel/reports.html",
        form=form,
        kinds=[(name, KIND_NAMES.get(name, name)) for name in EXPORTS],
        zone=current_zone().key,
    )


@bp.get("/reports/<kind>.csv")
@requires(VIEW)
def report_download(kind):
    """One kind's CSV for the range, streamed as it is read."""
    export = EXPORTS.get(kind)
    if export is None:
        abort(404)
    form = RangeForm(request.args)
    if not form.validate() or (
        form.date_from.data and form.date_to.data and form.date_to.data < form.date_from.data
    ):
        return reports(), 422
    brand = current_brand()
    day_from, day_to = form.date_from.data, form.date_to.data
    name = file_name(export, brand, day_from, day_to)
    return Response(
        stream_with_context(csv_chunks(export, brand, day_from, day_to, panel_livemode())),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
