"""Overdue invoices: past the due date in the brand's zone they become overdue, with one
reminder."""

import logging
from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from gateway.domain_errors import ValidationFailed
from gateway.extensions import db
from gateway.invoices import overdue
from gateway.invoices.lifecycle import mark_sent
from gateway.invoices.models.invoice import Invoice
from gateway.invoices.overdue import sweep_overdue_invoices
from gateway.mail.models.mail import OutboundMail
from gateway.mail.sending import deliver_mail
from gateway.payments.customers import create_customer
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


@pytest.mark.parametrize("address", ["buyer@shop.test", "a@b.local", "shop@localhost"])
def test_an_address_mail_refuses_gets_the_sms_reminder_and_holds_back_no_later_invoice(
    brand, smtp_server, caplog, address
):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    smtp_server.configure(brand)
    # An address the customers API takes (marshmallow's Email) but send_mail refuses.
    odd = create_customer(brand, {"name": "Odd", "email": address, "phone": "+8801712345678"})
    first = sent_invoice(brand, customer=None, customer_id=odd.id, due_date="2026-12-30")
    later = sent_invoice(brand, customer={"name": "Good", "email": "good@example.com"})

    with freeze_time(NEXT_DAY_IN_DHAKA), caplog.at_level(logging.WARNING):
        assert overdue.sweep_overdue_invoices() == 2

    assert {i.id: (i.status, i.reminder_count) for i in rows(Invoice)} == {
        first.id: ("overdue", 1),
        later.id: ("overdue", 1),
    }
    (text,) = rows(OutboundSms)
    assert (text.to_number, "overdue" in text.body) == ("+8801712345678", True)
    assert [mail.to_address for mail in rows(OutboundMail)] == ["good@example.com"]
    events = [d for d in rows(WebhookDelivery) if d.event == "invoice.overdue"]
    assert len(events) == 2
    assert f"invoice {first.id}:" in caplog.text and address not in caplog.text


def test_a_customer_with_only_an_address_mail_refuses_is_unreachable_yet_overdue(
    brand, smtp_server
):
    smtp_server.configure(brand)
    odd = create_customer(brand, {"name": "Odd", "email": "buyer@shop.test"})
    sent_invoice(brand, customer=None, customer_id=odd.id)
    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert overdue.sweep_overdue_invoices() == 1
    (invoice,) = rows(Invoice)
    assert (invoice.status, invoice.reminder_count) == ("overdue", 1)
    assert rows(OutboundMail) == [] and rows(OutboundSms) == []


def test_an_invoice_a_rule_refuses_is_rolled_back_alone_and_the_sweep_goes_on(
    brand, monkeypatch, caplog
):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    refused = sent_invoice(brand, due_date="2026-12-30")
    later = sent_invoice(brand)
    remind = overdue.send_reminder

    def refuse_the_first(invoice):
        if invoice.id == refused.id:
            raise ValidationFailed.field("to", "Refused.")
        return remind(invoice)

    monkeypatch.setattr(overdue, "send_reminder", refuse_the_first)
    with freeze_time(NEXT_DAY_IN_DHAKA), caplog.at_level(logging.WARNING):
        assert overdue.sweep_overdue_invoices() == 1

    assert {i.id: (i.status, i.reminder_count) for i in rows(Invoice)} == {
        refused.id: ("sent", 0),  # its move, event and reminder rolled back together
        later.id: ("overdue", 1),
    }
    events = [d for d in rows(WebhookDelivery) if d.event == "invoice.overdue"]
    assert [event.payload.count(later.number_text) for event in events] == [1]
    assert len(rows(OutboundSms)) == 1
    assert f"invoice {refused.id} left for the next sweep: VALIDATION_ERROR" in caplog.text

    monkeypatch.setattr(overdue, "send_reminder", remind)
    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert overdue.sweep_overdue_invoices() == 1  # the next sweep takes it
    assert {i.status for i in rows(Invoice)} == {"overdue"}
    assert len(rows(OutboundSms)) == 2
