"""Helpers the checkout tests share: reading CSRF tokens off pages, posting the forms, reloading rows."""
import re

from gateway.extensions import db
from gateway.models import Payment

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client, payment):
    """The CSRF token the pay page hands this client."""
    page = client.get(f"/checkout/{payment.token}")
    return CSRF_FIELD.search(page.get_data(as_text=True)).group(1)


def submit_trx_id(client, payment, method, trx_id="8N7A6B5C4D", **fields):
    """Post the claim form of one method as the customer's browser would."""
    data = {"csrf_token": csrf_token(client, payment), "method_id": method.id, "trx_id": trx_id, **fields}
    return client.post(f"/checkout/{payment.token}/claim", data=data)


def cancel(client, payment):
    """Press the pay page's cancel button."""
    return client.post(f"/checkout/{payment.token}/cancel", data={"csrf_token": csrf_token(client, payment)})


def reloaded(payment):
    """The payment as the database now holds it."""
    db.session.expire_all()
    return db.session.get(Payment, payment.id)


def text_of(response):
    """The response body as text."""
    return response.get_data(as_text=True)
