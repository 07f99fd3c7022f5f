"""Missed texts: a gap in a wallet's balance chain tells the merchant once, with the balances on
either side, through the real channels; healing is quiet; the panel shows it, escaped."""

from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.notifications.catalogue import DEFAULT_CHANNELS, SMS_GAP
from gateway.sms.balance_chain import set_chain_mode, set_starting_balance
from gateway.sms.chain_gaps import GRACE, open_gaps, tell_chain_gaps
from tests.factories import forward, paired_device
from tests.notifications.conftest import configure, notifications, send_due, sent_texts
from tests.panel.conftest import sign_in
from tests.sms.test_balance_chain import HOUR, credit, send_money

JUMP = (
    "bKash on Counter phone: balance jumped from 1,500.00 to 1,700.00: a text of 200.00 "
    f"(money in) may be missing (between the texts printed {HOUR:%d/%m/%Y %H}:00 and "
    f"{HOUR:%d/%m/%Y %H}:20)"
)


@pytest.fixture
def counter(brand):
    device, _, aes_key = paired_device(brand, name="Counter phone")
    return device, aes_key


def later(minutes=0):
    """A sweep's moment: past the grace of every text linked so far."""
    return utcnow() + GRACE + timedelta(seconds=1, minutes=minutes)


def gap_texts(server):
    return [body["text"] for body in sent_texts(server) if "may be missing" in body["text"]]


def test_a_gap_tells_the_merchant_once_and_healing_tells_nothing(brand, counter, telegram):
    configure(brand, channels={SMS_GAP: ["telegram"]})
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    held = forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))  # B (10:10) missed

    assert tell_chain_gaps() == 0  # within its grace: it may only be late
    assert tell_chain_gaps(later()) == 1
    send_due()
    [text] = gap_texts(telegram)
    assert text.startswith("bKash on Counter phone: a text may be missing\n\n" + JUMP)
    assert "credits after it wait for review until it arrives" in text
    assert text.endswith(f"/panel/sms-inbox/{held.public_id}")
    assert "parse_mode" not in sent_texts(telegram)[0]  # plain text: nothing in it is markup

    # Texts after the gap that continue the broken one are the same gap: nothing more is told.
    forward(counter, credit("100.00", "DDDD000004", "2100.00", 30))
    assert tell_chain_gaps(later(5)) == 0
    assert len(open_gaps(brand.id)) == 1

    forward(counter, credit("200.00", "BBBB000002", "1700.00", 10))  # the missed text arrives
    assert open_gaps(brand.id) == []
    assert tell_chain_gaps(later(10)) == 0
    send_due()
    assert len(gap_texts(telegram)) == 1
    assert len(notifications(brand, SMS_GAP)) == 1


def test_a_text_that_only_arrives_late_never_alarms(brand, counter, telegram):
    configure(brand, channels={SMS_GAP: ["telegram"]})
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))
    forward(counter, credit("200.00", "BBBB000002", "1700.00", 10))  # within the grace

    assert tell_chain_gaps(later()) == 0
    assert notifications(brand, SMS_GAP) == []


def test_a_missing_debit_is_told_as_money_out_and_a_second_gap_apart(brand, counter, telegram):
    configure(brand, channels={SMS_GAP: ["telegram"]})
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    # A send of 510.00 + 5.00 fee (10:05) never arrived: the next credit starts from 985.00.
    forward(counter, credit("15.00", "CRED000003", "1000.00", 9))
    assert tell_chain_gaps(later()) == 1
    # The missed send arrives, and closes that gap; later another text is missed.
    forward(counter, send_money("510.00", "5.00", "985.00", "SEND000002", 5))
    forward(counter, credit("50.00", "LAST000005", "1100.00", 20))
    assert tell_chain_gaps(later(1)) == 1
    send_due()

    first, second = gap_texts(telegram)
    assert "balance fell from 1,500.00 to 985.00: a text of 515.00 (money out) may be missing" in (
        first
    )
    assert "balance jumped from 1,000.00 to 1,050.00: a text of 50.00 (money in)" in second


def test_a_fork_is_not_a_missed_text(brand, counter, telegram):
    configure(brand, channels={SMS_GAP: ["telegram"]})
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("100.00", "BBBB000002", "1600.00", 5))
    forward(counter, credit("100.00", "FORK000003", "1600.00", 6))  # continues 1500.00 again

    assert open_gaps(brand.id) == []
    assert tell_chain_gaps(later()) == 0


def test_a_starting_balance_set_after_a_gap_closes_it(brand, counter):
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))
    assert len(open_gaps(brand.id)) == 1

    set_starting_balance(brand, counter[0], "bkash", Decimal("2000.00"))
    db.session.commit()

    assert open_gaps(brand.id) == []


def test_lenient_brands_are_told_their_credits_completed_flagged(brand, counter, telegram):
    configure(brand, channels={SMS_GAP: ["telegram"]})
    set_chain_mode(brand, "lenient")
    db.session.commit()
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))

    assert tell_chain_gaps(later()) == 1
    send_due()
    [text] = gap_texts(telegram)
    assert "credits after it complete, flagged" in text


def test_a_gap_reaches_the_merchant_by_email(brand, counter, smtp_server):
    from gateway.mail.models.mail import OutboundMail
    from gateway.mail.sending import deliver_mail

    smtp_server.configure(brand)
    configure(brand, channels={SMS_GAP: ["email"]}, email_to="owner@shop.example")
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))

    assert tell_chain_gaps(later()) == 1
    send_due()
    for mail_id in db.session.execute(db.select(OutboundMail.id)).scalars().all():
        assert deliver_mail(mail_id) == "sent"

    [message] = smtp_server.wait_for(1)
    assert message["Subject"] == "bKash on Counter phone: a text may be missing"
    assert JUMP in message.get_body(("plain",)).get_content()


def test_the_gap_event_is_on_the_grid_with_every_channel_by_default():
    assert DEFAULT_CHANNELS[SMS_GAP] == ("email", "telegram", "app")


def test_the_panel_shows_the_gap_and_escapes_the_phones_name(client, brand, telegram):
    from tests.panel.conftest import UserFactory

    configure(brand, channels={SMS_GAP: ["telegram"]})
    name = '<b onmouseover="x()">Till</b> & co'
    device, _, aes_key = paired_device(brand, name=name)
    forward((device, aes_key), credit("500.00", "AAAA000001", "1500.00", 0))
    held = forward((device, aes_key), credit("300.00", "CCCC000003", "2000.00", 20))
    tell_chain_gaps(later())
    send_due()
    admin = UserFactory(brand=brand, role="super_admin", email="owner@shop.test", name="Owner")
    assert sign_in(client, admin).status_code == 302

    escaped = "&lt;b onmouseover=&#34;x()&#34;&gt;Till&lt;/b&gt; &amp; co"
    pages = [
        "/panel/dashboard",
        "/panel/sms-inbox",
        "/panel/sms-inbox/balances",
        "/panel/notifications",
    ]
    for page in pages:
        html = client.get(page).get_data(as_text=True)
        assert escaped in html, page
        assert "<b onmouseover" not in html, page
    inbox = client.get("/panel/sms-inbox").get_data(as_text=True)
    assert "balance jumped from ৳ 1,500.00 to ৳ 1,700.00: a text of ৳ 200.00 may be missing." in (
        inbox
    )
    text_page = client.get(f"/panel/sms-inbox/{held.public_id}").get_data(as_text=True)
    assert "Missed text" in text_page and "a text of ৳ 200.00 may be missing" in text_page
    # Telegram gets the name as plain text (no parse mode), as the merchant typed it.
    assert gap_texts(telegram)[0].startswith(f"bKash on {name}: a text may be missing")

    forward((device, aes_key), credit("200.00", "BBBB000002", "1700.00", 10))
    assert "may be missing" not in client.get("/panel/sms-inbox").get_data(as_text=True)


def test_a_gap_right_after_the_starting_balance_is_measured_from_it(brand, counter):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from gateway.sms.parsing import build_sms_text

    set_starting_balance(brand, counter[0], "bkash", Decimal("5000.00"))
    db.session.commit()
    when = datetime.now(ZoneInfo("Asia/Dhaka")).replace(tzinfo=None) + timedelta(minutes=1)
    forward(
        counter,
        build_sms_text(
            "bkash", Decimal("200.00"), "GAPS000001", "01711000101", Decimal("5400.00"), when
        ),
    )

    [gap] = open_gaps(brand.id)
    assert (gap.previous, gap.start, gap.end, gap.missing) == (
        None,
        Decimal("5000.00"),
        Decimal("5200.00"),
        Decimal("200.00"),
    )


def test_a_gap_reaches_the_companion_apps_feed(brand, counter):
    from gateway.devices.models.notification import Notification

    configure(brand, channels={SMS_GAP: ["app"]})
    forward(counter, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(counter, credit("300.00", "CCCC000003", "2000.00", 20))

    assert tell_chain_gaps(later()) == 1
    send_due()

    [told] = db.session.execute(
        db.select(Notification).where(Notification.kind == SMS_GAP)
    ).scalars()
    assert told.title == "bKash on Counter phone: a text may be missing"
    assert told.body.startswith(JUMP)
