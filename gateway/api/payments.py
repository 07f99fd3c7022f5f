"""Payments: initiate, read, list, cancel."""

from flask import g

from ..domain_errors import not_found
from ..invoices.drafting import invoice_row_id
from ..links.links import link_payment_ids
from ..livemode import current_livemode
from ..payments import lifecycle as payments
from ..schemas.common import envelope
from ..schemas.payment import (
    PaymentCreatedSchema,
    PaymentCreateSchema,
    PaymentListArgs,
    PaymentSchema,
)
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import brand_with_key, read_with_key, resource_blueprint

URL = "payments"
# Argument schemas are passed as instances: given a class, webargs builds a new instance per
# request.
blp = resource_blueprint("payments", "Payment intents and their status.")


@blp.post("")
@blp.arguments(PaymentCreateSchema())
@blp.response(201, envelope(PaymentCreatedSchema))
def create_payment(data):
    """Initiate a payment; redirect the customer to the returned checkout_url."""
    return single(payments.create_payment(caller_brand(), data, livemode=current_livemode()))


brand_with_key(blp, create_payment)


@blp.get("")
@blp.arguments(PaymentListArgs(), location="query")
@blp.response(200, envelope(PaymentSchema, many=True))
def list_payments(args):
    """The brand's payments, newest first."""
    if args.get("invoice"):
        args["invoice_id"] = invoice_row_id(g.brand_id, args["invoice"])
    query = payments.list_payment_views_query(g.brand_id, args, current_livemode())
    if args.get("payment_link"):  # a link's id or slug
        query = query.where(
            payments.PAYMENT_VIEW_ID.in_(link_payment_ids(g.brand_id, args["payment_link"]))
        )
    return listing(*paginate(query, args))


@blp.get("/<payment_id>")
@blp.response(200, envelope(PaymentSchema))
def read_payment(payment_id):
    """Read a payment back; fulfil only when status is `completed`."""
    row = g.api_key  # the key's row carries the payment's columns (read_with_key below)
    if row.public_id is None:
        raise not_found("payment")
    return single(row)


read_with_key(
    blp,
    read_payment,
    payments.PAYMENT_VIEW_FOR_KEY,
    lambda view_args: {"public_id": str(view_args["payment_id"])},
)


@blp.post("/<payment_id>/cancel")
@blp.response(200, envelope(PaymentSchema))
def cancel_payment(payment_id):
    """Cancel a payment that is still created or processing."""
    return single(
        payments.cancel_payment(
            payments.get_payment(caller_brand(), payment_id, current_livemode())
        )
    )
