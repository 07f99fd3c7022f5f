"""Payment links: create, list, read, change, disable (and enable again), delete."""

from ..links import links
from ..livemode import current_livemode
from ..schemas.common import DeletedSchema, envelope
from ..schemas.payment_link import (
    PaymentLinkCreateSchema,
    PaymentLinkListArgs,
    PaymentLinkSchema,
    PaymentLinkUpdateSchema,
)
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "payment-links"
blp = resource_blueprint(
    "payment-links", "Links a shop shares to be paid without a website (/pay/<slug>)."
)


def callers_link(link_id):
    """The calling key's brand's link of the key's mode, by id or slug; 404 for any other."""
    return links.get_link(caller_brand(), link_id, current_livemode())


def one(link):
    """A link in the envelope, with its paid count and total."""
    return single(links.with_totals([link])[0])


@blp.post("")
@blp.arguments(PaymentLinkCreateSchema())
@blp.response(201, envelope(PaymentLinkSchema))
def create_link(data):
    """Create a link; without `slug` a readable one is made from the title."""
    return one(links.create_link(caller_brand(), data, current_livemode()))


@blp.get("")
@blp.arguments(PaymentLinkListArgs(), location="query")
@blp.response(200, envelope(PaymentLinkSchema, many=True))
def list_links(args):
    """The brand's links, newest first."""
    rows, meta = paginate(links.list_links_query(caller_brand(), args, current_livemode()), args)
    return listing(links.with_totals(rows), meta)


@blp.get("/<link_id>")
@blp.response(200, envelope(PaymentLinkSchema))
def read_link(link_id):
    """Read a link by its id or slug."""
    return one(callers_link(link_id))


@blp.patch("/<link_id>")
@blp.arguments(PaymentLinkUpdateSchema())
@blp.response(200, envelope(PaymentLinkSchema))
def update_link(data, link_id):
    """Change a link; its currency cannot change."""
    return one(links.update_link(callers_link(link_id), data))


@blp.post("/<link_id>/disable")
@blp.response(200, envelope(PaymentLinkSchema))
def disable_link(link_id):
    """Stop a link taking payments; payments already started can still be paid."""
    return one(links.set_link_status(callers_link(link_id), "disabled"))


@blp.post("/<link_id>/enable")
@blp.response(200, envelope(PaymentLinkSchema))
def enable_link(link_id):
    """Let a disabled link take payments again."""
    return one(links.set_link_status(callers_link(link_id), "active"))


@blp.delete("/<link_id>")
@blp.response(200, envelope(DeletedSchema))
def delete_link(link_id):
    """Delete a link: it is 404 from then on and its page takes no payment; its payments stay.

    Its slug stays taken, so that an address already shared never pays a new link. To stop a link
    for a while, disable it instead.
    """
    link = links.delete_link(callers_link(link_id))
    return single({"id": link.public_id, "deleted": True})
