"""The periodic watch: one notification per phone outage (and one "back online"), texts nobody
claimed.
"""

from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.tokens import access_token
from gateway.extensions import db
from gateway.notifications.catalogue import PHONE_OFFLINE, PHONE_ONLINE, SMS_UNCLAIMED
from gateway.notifications.watch import sweep_notifications
from tests.factories import bkash_text, forward_from, paired_device
from tests.notifications.conftest import configure, notifications, send_due, sent_texts


def heartbeat(client, device, **body):
    """The companion app's heartbeat, with a token minted at the (frozen) time."""
    answer = client.post(
        "/api/mobile/v1/devices/heartbeats",
        json=body,
        headers={"Authorization": f"Bearer {access_token(device)}"},
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer


def test_a_phone_going_offline_raises_one_notification_per_outage_not_one_per_sweep(
    client, brand, telegram
):
    configure(brand, offline_minutes=15)
    device, _, _ = paired_device(brand, name="Counter phone")
    start = utcnow().replace(microsecond=0)
    with freeze_time(start):
        heartbeat(client, device, battery_level=40, app_version="2.5.0")

    swept = []
    for minutes in (5, 14, 16, 20, 45, 180):  # a sweep every so often through the outage
        with freeze_time(start + timedelta(minutes=minutes)):
            swept.append(sweep_notifications())
            send_due()

    assert swept == [0, 0, 1, 0, 0, 0]  # at 16 minutes: one raised (woken after its commit)
    [offline] = notifications(brand, PHONE_OFFLINE)
    assert offline.subject == "Phone Counter phone is offline"
    local = (start + timedelta(hours=6)).strftime("%Y-%m-%d %H:%M")
    assert f"No heartbeat for more than 15 minutes (last at {local} (Asia/Dhaka))" in offline.text
    assert [body["text"].splitlines()[0] for body in sent_texts(telegram)] == [
        "Phone Counter phone is offline"
    ]

    with freeze_time(start + timedelta(hours=4)):
        heartbeat(client, device)
        heartbeat(client, device)
        sweep_notifications()
        send_due()
    [online] = notifications(brand, PHONE_ONLINE)
    assert online.subject == "Phone Counter phone is back online"
    assert len(sent_texts(telegram)) == 2

    # A second outage is a second notification.
    with freeze_time(start + timedelta(hours=4, minutes=16)):
        sweep_notifications()
        sweep_notifications()
    assert len(notifications(brand, PHONE_OFFLINE)) == 2


def test_back_online_is_optional_and_a_revoked_phone_is_not_watched(client, brand, telegram):
    configure(brand, offline_minutes=10, notify_back_online=False)
    device, _, _ = paired_device(brand)
    gone, _, _ = paired_device(brand, name="Lost phone")
    start = utcnow().replace(microsecond=0)
    with freeze_time(start):
        heartbeat(client, device)
        heartbeat(client, gone)
    gone.revoked_at = start
    db.session.commit()
    with freeze_time(start + timedelta(minutes=11)):
        sweep_notifications()
    with freeze_time(start + timedelta(minutes=12)):
        heartbeat(client, device)
    assert [n.subject for n in notifications(brand)] == ["Phone Shop phone is offline"]


def test_a_text_no_payment_claimed_is_told_once_after_the_grace_period(brand, telegram):
    configure(brand, unclaimed_minutes=30)
    start = utcnow().replace(microsecond=0)
    with freeze_time(start):
        sms = forward_from(brand, bkash_text(amount="750.00", trx_id="9XK2LM4PQ1"))
    assert sms.status == "unmatched"

    with freeze_time(start + timedelta(minutes=29)):
        sweep_notifications()
    assert notifications(brand, SMS_UNCLAIMED) == []

    for minutes in (31, 40, 90):
        with freeze_time(start + timedelta(minutes=minutes)):
            sweep_notifications()
            send_due()
    [told] = notifications(brand, SMS_UNCLAIMED)
    assert told.subject == "Bkash 750.00 received, but no payment claimed it"
    [body] = sent_texts(telegram)
    assert "9XK2LM4PQ1" in body["text"] and f"/panel/sms-inbox/{sms.public_id}" in body["text"]


def test_old_notifications_are_pruned_but_outages_and_pending_ones_are_kept(
    client, brand, telegram
):
    from gateway.notifications.catalogue import PAYMENT_COMPLETED
    from gateway.notifications.watch import prune_notifications
    from tests.factories import completed_payment

    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"], PHONE_OFFLINE: ["telegram"]})
    device, _, _ = paired_device(brand)
    start = utcnow().replace(microsecond=0)
    with freeze_time(start):
        heartbeat(client, device)
        completed_payment(brand=brand, reference="ORDER-OLD")
        send_due()
        completed_payment(brand=brand, reference="ORDER-UNSENT")  # never sent: still pending
    with freeze_time(start + timedelta(minutes=20)):
        sweep_notifications()

    with freeze_time(start + timedelta(days=89)):
        assert prune_notifications() == 0
    with freeze_time(start + timedelta(days=91)):
        assert prune_notifications() == 1
        sweep_notifications()  # the outage is still remembered: not raised again
    assert sorted(n.subject for n in notifications(brand)) == [
        "Payment ORDER-UNSENT completed: 500.00 BDT",
        "Phone Shop phone is offline",
    ]
