"""Helpers of the payment link tests: links made through the service, the link page's form."""

import re
from decimal import Decimal

from gateway.links.links import create_link

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def make_link(brand, **values):
    """A link of `brand` created through the service (a fixed 500.00 unless told)."""
    data = {"title": "Eid hamper", "amount": Decimal("500.00"), **values}
    return create_link(brand, data)


def link_token(client, link):
    """The CSRF token the link page hands this client."""
    page = client.get(f"/pay/{link.slug}")
    return CSRF_FIELD.search(page.get_data(as_text=True)).group(1)


def submit_link(client, link, **fields):
    """Post the link page's form as the customer's browser would."""
    return client.post(f"/pay/{link.slug}", data={"csrf_token": link_token(client, link), **fields})
