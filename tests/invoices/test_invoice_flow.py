"""An invoice from draft to paid through the real pieces: the API, the SMTP server, the customer's
page, the hosted checkout's claim, a simulated SMS, and the invoice.paid webhook on a local
receiver."""

import json
import re
from decimal import Decimal
from urllib.parse import urlsplit

from gateway.extensions import db
from gateway.invoices.models.invoice import Invoice
from gateway.mail.models.mail import OutboundMail
from gateway.mail.sending import deliver_mail
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import bkash, simulate_sms, submit_trx_id  # noqa: F401 - fixture
from tests.invoices.test_invoices import pdf_text
from tests.webhook_support import receiver  # noqa: F401 - fixture

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
BODY = {
    "customer": {"name": "Karim", "email": "karim@example.com", "phone": "+8801711111111"},
    "items": [
        {"description": "Monthly plan", "quantity": "1", "unit_price": "400.00"},
        {"description": "Setup", "quantity": "2", "unit_price": "50.00"},
    ],
    "due_date": "2026-12-31",
    "language": "bn",
}


def test_an_invoice_goes_from_draft_to_paid_with_its_webhook(
    client,
    auth,
    brand,
    bkash,
    runner,
    smtp_server,
    receiver,  # noqa: F811
):
    brand.webhook_url = receiver.url
    db.session.commit()
    smtp_server.configure(brand)

    created = client.post("/api/v1/invoices", json=BODY, headers=auth)
    assert created.status_code == 201, created.json
    invoice = created.json["data"]
    assert (invoice["number"], invoice["status"], invoice["total"]) == (
        "INV-0001",
        "draft",
        "500.00",
    )
    assert client.get(urlsplit(invoice["url"]).path).status_code == 404  # a draft has no page

    sent = client.post(
        f"/api/v1/invoices/{invoice['invoice_id']}/send",
        json={"channels": ["email", "sms"]},
        headers=auth,
    )
    assert sent.status_code == 200 and sent.json["data"]["status"] == "sent"

    # The e-mail, in Bangla, with the PDF and the link, through the real SMTP server.
    mail = db.session.execute(db.select(OutboundMail)).scalar_one()
    assert deliver_mail(mail.id) == "sent"
    (message,) = smtp_server.wait_for(1)
    assert message["To"] == "karim@example.com"
    assert "INV-0001" in message["Subject"] and "চালান" in message["Subject"]
    body = message.get_body(("plain",)).get_content()
    link = re.search(r"https?://\S+/invoice/\S+", body).group(0)
    assert link == invoice["url"] + "?lang=bn"  # the page opens in the message's language
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == "INV-0001.pdf"
    assert "৳৫০০.০০" in pdf_text(attachment.get_content())

    # The SMS waits in the outbound queue for the phone.
    text = db.session.execute(db.select(OutboundSms)).scalar_one()
    assert text.to_number == "+8801711111111" and link in text.body and "INV-0001" in text.body

    # The customer opens the link and presses Pay: a payment of the total at the hosted checkout.
    path = urlsplit(link).path
    page = client.get(path)
    assert page.status_code == 200 and "৳500.00" in page.get_data(as_text=True)
    token = CSRF.search(page.get_data(as_text=True)).group(1)
    paying = client.post(f"{path}/pay", data={"csrf_token": token})
    assert paying.status_code == 303 and paying.headers["Location"].startswith("/checkout/")
    from gateway.payments.models.payment import Payment

    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert (payment.amount, payment.reference, payment.status) == (
        Decimal("500.00"),
        "INV-0001",
        "created",
    )

    # The claim at checkout, then the provider's SMS through the real ingestion path.
    submit_trx_id(client, payment, bkash, trx_id="9Q8W7E6R5T")
    simulate_sms(runner, "9Q8W7E6R5T", amount="500.00")
    db.session.expire_all()
    paid = db.session.execute(db.select(Invoice)).scalar_one()
    assert paid.status == "paid" and paid.paid_at is not None

    # invoice.paid went through the outbox to the brand's endpoint, signed.
    delivery = db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.event == "invoice.paid")
    ).scalar_one()
    assert deliver_webhook(delivery.id) == "sent"
    (event,) = [r["json"] for r in receiver.received if r["json"]["event"] == "invoice.paid"]
    assert event["data"]["invoice_id"] == invoice["invoice_id"]
    assert event["data"]["number"] == "INV-0001" and event["data"]["status"] == "paid"
    assert event["data"]["total"] == "500.00"
    assert event["data"]["provider_trx_id"] == "9Q8W7E6R5T"
    assert event["data"]["trx_id"].startswith("TRX")
    assert json.loads(delivery.payload)["data"]["payment_id"] == payment.public_id

    # The page now says paid with the TrxID and offers no Pay button; the API agrees.
    page = client.get(path).get_data(as_text=True)
    assert "9Q8W7E6R5T" in page and "/pay" not in page
    assert (
        client.get(f"/api/v1/invoices/{invoice['invoice_id']}", headers=auth).json["data"]["status"]
        == "paid"
    )
    listed = client.get(f"/api/v1/payments?invoice={invoice['invoice_id']}", headers=auth).json
    assert [p["payment_id"] for p in listed["data"]] == [payment.public_id]
    assert client.get("/api/v1/payments?invoice=nope", headers=auth).json["data"] == []
