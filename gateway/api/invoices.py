"""Invoices: create, list, read, change while draft, void, send."""

from flask import g

from ..invoices import drafting, lifecycle, sending
from ..livemode import current_livemode
from ..schemas.common import envelope
from ..schemas.invoice import (
    InvoiceCreateSchema,
    InvoiceListArgs,
    InvoiceSchema,
    InvoiceSendSchema,
    InvoiceUpdateSchema,
)
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "invoices"
blp = resource_blueprint("invoices", "Invoices sent to customers and paid at the hosted checkout.")


def callers_invoice(invoice_id):
    """The calling key's brand's invoice of the key's mode; 404 for any other."""
    return drafting.get_invoice(caller_brand(), invoice_id, current_livemode())


@blp.post("")
@blp.arguments(InvoiceCreateSchema())
@blp.response(201, envelope(InvoiceSchema))
def create_invoice(data):
    """Create a draft invoice with the brand's next number."""
    return single(drafting.create_invoice(caller_brand(), data, current_livemode()))


@blp.get("")
@blp.arguments(InvoiceListArgs(), location="query")
@blp.response(200, envelope(InvoiceSchema, many=True))
def list_invoices(args):
    """The brand's invoices, newest first."""
    return listing(
        *paginate(drafting.list_invoices_query(g.brand_id, args, current_livemode()), args)
    )


@blp.get("/<invoice_id>")
@blp.response(200, envelope(InvoiceSchema))
def read_invoice(invoice_id):
    """Read an invoice."""
    return single(callers_invoice(invoice_id))


@blp.patch("/<invoice_id>")
@blp.arguments(InvoiceUpdateSchema())
@blp.response(200, envelope(InvoiceSchema))
def update_invoice(data, invoice_id):
    """Change a draft invoice (409 INVALID_STATE once sent)."""
    invoice = callers_invoice(invoice_id)
    return single(drafting.update_invoice(invoice, data))


@blp.post("/<invoice_id>/void")
@blp.response(200, envelope(InvoiceSchema))
def void_invoice(invoice_id):
    """Void an unpaid invoice."""
    return single(lifecycle.void_invoice(callers_invoice(invoice_id)))


@blp.post("/<invoice_id>/send")
@blp.arguments(InvoiceSendSchema())
@blp.response(200, envelope(InvoiceSchema))
def send_invoice(data, invoice_id):
    """E-mail (with the PDF) and/or text the invoice's link to the customer; drafts become sent."""
    invoice = callers_invoice(invoice_id)
    return single(sending.send_invoice(invoice, data["channels"], data.get("language")))
