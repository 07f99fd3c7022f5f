"""Overdue invoices: past the due date in the brand's zone they become overdue, with one
reminder."""

from datetime import datetime, timezone

from freezegun import freeze_time

from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent
from gateway.invoices.models.invoice import Invoice
from gateway.invoices.overdue import sweep_overdue_invoices
from gateway.mail.models.mail import OutboundMail
from gateway.mail.sending import deliver_mail
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.invoices.conftest import an_invoice

# Due 2026-12-31: in Dhaka (UTC+6) that day ends at 2026-12-31 18:00 UTC.
LAST_DUE_MOMENT = datetime(2026, 12, 31, 17, 59, tzinfo=timezone.utc)
NEXT_DAY_IN_DHAKA = datetime(2026, 12, 31, 18, 1, tzinfo=timezone.utc)


def sent_invoice(brand, **overrides):
    with freeze_time(datetime(2026, 12, 1, tzinfo=timezone.utc)):
        invoice = an_invoice(brand, **overrides)
        mark_sent(invoice)
        db.session.commit()
    return invoice


def rows(model):
    db.session.expire_all()
    return db.session.execute(db.select(model)).scalars().all()


def test_one_reminder_however_many_sweeps(brand, smtp_server):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    smtp_server.configure(brand)
    invoice = sent_invoice(brand)

    with freeze_time(LAST_DUE_MOMENT):
        assert sweep_overdue_invoices() == 0
    assert db.session.get(Invoice, invoice.id).status == "sent"

    with freeze_time(NEXT_DAY_IN_DHAKA) as clock:
        assert sweep_overdue_invoices() == 1
        for _ in range(5):
            clock.tick(900)
            assert sweep_overdue_invoices() == 0

    overdue = rows(Invoice)[0]
    assert (overdue.status, overdue.reminder_count) == ("overdue", 1)
    assert overdue.last_reminder_at == NEXT_DAY_IN_DHAKA
    (mail,) = rows(OutboundMail)
    (text,) = rows(OutboundSms)
    assert "overdue" in mail.subject.lower() and "overdue" in text.body
    (event,) = [d for d in rows(WebhookDelivery) if d.event == "invoice.overdue"]
    assert '"status":"overdue"' in event.payload

    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert deliver_mail(mail.id) == "sent"
    (message,) = smtp_server.wait_for(1)
    assert message["Subject"].startswith("Reminder: invoice INV-0001")
    assert [a.get_filename() for a in message.iter_attachments()] == ["INV-0001.pdf"]


def test_a_paid_void_or_undated_invoice_is_never_overdue(brand):
    undated = sent_invoice(brand, due_date=None)
    voided = sent_invoice(brand)
    voided.status = "void"
    db.session.commit()
    draft = an_invoice(brand)
    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert sweep_overdue_invoices() == 0
    assert {i.id: i.status for i in rows(Invoice)} == {
        undated.id: "sent",
        voided.id: "void",
        draft.id: "draft",
    }
    assert rows(OutboundSms) == []


def test_an_unreachable_customer_still_becomes_overdue_once(brand):
    invoice = sent_invoice(brand, customer={"name": "Mail only", "email": "m@example.com"})
    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert sweep_overdue_invoices() == 1  # no SMTP settings and no phone: nothing to send
        assert sweep_overdue_invoices() == 0
    overdue = db.session.get(Invoice, invoice.id)
    assert (overdue.status, overdue.reminder_count) == ("overdue", 1)
    assert rows(OutboundMail) == [] and rows(OutboundSms) == []
