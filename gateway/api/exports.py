"""CSV exports of payments, refunds and invoices for a range of days, streamed as they are read."""

from flask import Response, stream_with_context

from ..livemode import current_livemode
from ..reports.exports import EXPORTS, csv_chunks, file_name
from ..schemas.export import ExportArgs
from .auth import caller_brand
from .resource import resource_blueprint

URL = "exports"
blp = resource_blueprint(
    "exports", "CSV exports of payments, refunds and invoices, in the brand's time zone."
)
CSV_DOC = {
    200: {
        "description": "CSV (RFC 4180, UTF-8), one header row; times in the brand's time zone.",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    },
    422: {
        "description": "VALIDATION_ERROR: a day that is not a date (YYYY-MM-DD) on its field, or "
        "`to` before `from` or more than ten years (3660 days) after it, on `to`.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    },
}


def csv_response(kind, args):
    """The export streamed as an attachment (never built in memory)."""
    brand = caller_brand()
    day_from, day_to = args.get("from"), args.get("to")
    name = file_name(kind, brand, day_from, day_to)
    return Response(
        stream_with_context(csv_chunks(kind, brand, day_from, day_to, current_livemode())),
        mimetype="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        },
    )


@blp.get("/payments.csv")
@blp.arguments(ExportArgs(), location="query")
@blp.doc(responses=CSV_DOC)
def export_payments(args):
    """Payments created in the range, oldest first."""
    return csv_response(EXPORTS["payments"], args)


@blp.get("/invoices.csv")
@blp.arguments(ExportArgs(), location="query")
@blp.doc(responses=CSV_DOC)
def export_invoices(args):
    """Invoices written in the range (drafts included), oldest first."""
    return csv_response(EXPORTS["invoices"], args)


@blp.get("/refunds.csv")
@blp.arguments(ExportArgs(), location="query")
@blp.doc(responses=CSV_DOC)
def export_refunds(args):
    """Refunds made in the range, oldest first."""
    return csv_response(EXPORTS["refunds"], args)
