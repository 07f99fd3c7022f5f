"""Acknowledgements are per phone: a brand-wide notification one phone has read stays unread on the
brand's other phones (docs/companion-app-api.md: "the notifications this phone has not
acknowledged").

The race runs two requests in threads of their own (each its own session and connection) on the
engine the suite runs on (SQLite file by default, PostgreSQL with TEST_DB=postgres).
"""

import threading
import time
from datetime import timedelta

from freezegun import freeze_time
from sqlalchemy import event, text

from gateway.clock import utcnow
from gateway.devices.models.notification import Notification
from gateway.extensions import db
from tests.factories import paired_device

API = "/api/mobile/v1"
NOTES = f"{API}/notifications"
ACKS = f"{API}/notifications/acknowledgements"


def bearer(tokens):
    return {"Authorization": f"Bearer {tokens['access_token']}"}


def phone(brand, name):
    """A paired phone of `brand` and its bearer headers; its pairing notice already read."""
    device, tokens, _ = paired_device(brand, name=name)
    return device, bearer(tokens)


def notice(brand, title, device=None):
    """A notification for one phone, or, without one, for every phone of the brand; its id."""
    note = Notification(
        brand_id=brand.id, device_id=device.id if device else None, kind="x", title=title
    )
    db.session.add(note)
    db.session.commit()
    return note.id


def unread(client, headers):
    """What a phone is told is unread: (titles listed, the list's count, the dashboard's two
    counts, the heartbeat's count)."""
    feed = client.get(NOTES, headers=headers).get_json()
    dashboard = client.get(f"{API}/dashboard", headers=headers).get_json()["data"]
    heartbeat = client.post(f"{API}/devices/heartbeats", headers=headers, json={})
    return (
        sorted(note["title"] for note in feed["data"]),
        feed["meta"]["unacknowledged"],
        dashboard["unread_notifications"],
        dashboard["pending_notifications"],
        heartbeat.get_json()["data"]["pending_notifications"],
    )


def acknowledge(client, headers, *ids):
    answer = client.post(ACKS, headers=headers, json={"ids": list(ids)})
    assert answer.status_code == 200
    return answer.get_json()["data"]["acknowledged"]


def test_a_brand_wide_notification_read_on_one_phone_stays_unread_on_the_others(client, brand):
    _, phone_a = phone(brand, "Phone A")
    _, phone_b = phone(brand, "Phone B")
    brand_wide = notice(brand, "Check payment")

    assert acknowledge(client, phone_a, brand_wide) == 1

    assert unread(client, phone_a) == (["Phone A paired"], 1, 1, 1, 1)
    assert unread(client, phone_b) == (["Check payment", "Phone B paired"], 2, 2, 2, 2)
    assert acknowledge(client, phone_b, brand_wide) == 1
    assert unread(client, phone_b) == (["Phone B paired"], 1, 1, 1, 1)


def test_acknowledging_a_notification_again_changes_nothing(client, brand):
    _, phone_a = phone(brand, "Phone A")
    _, phone_b = phone(brand, "Phone B")
    brand_wide = notice(brand, "Check payment")

    assert acknowledge(client, phone_a, brand_wide) == 1
    assert acknowledge(client, phone_a, brand_wide, brand_wide) == 0

    assert unread(client, phone_a) == (["Phone A paired"], 1, 1, 1, 1)
    assert unread(client, phone_b) == (["Check payment", "Phone B paired"], 2, 2, 2, 2)


def test_a_phone_sees_its_own_notifications_and_the_brands_never_another_phones(
    client, brand, other_brand
):
    device_a, phone_a = phone(brand, "Phone A")
    device_b, phone_b = phone(brand, "Phone B")
    mine = notice(brand, "For A", device=device_a)
    theirs = notice(brand, "For B", device=device_b)
    brand_wide = notice(brand, "For both")
    another_shop = notice(other_brand, "Another shop's")

    assert unread(client, phone_a) == (["For A", "For both", "Phone A paired"], 3, 3, 3, 3)
    # Ids it may not see are ignored: B's own notification stays unread on B.
    assert acknowledge(client, phone_a, mine, theirs, brand_wide, another_shop) == 2

    assert unread(client, phone_a) == (["Phone A paired"], 1, 1, 1, 1)
    assert unread(client, phone_b) == (["For B", "For both", "Phone B paired"], 3, 3, 3, 3)


def acknowledgement_rows():
    return db.session.execute(
        text("SELECT notification_id, device_id FROM notification_acknowledgements")
    ).all()


def test_racing_acknowledgements_of_one_notification_by_one_phone_both_succeed(app, brand):
    """The first request has written the acknowledgement and not committed; the second writes the
    same pair meanwhile (on PostgreSQL it waits on the first's row, on SQLite for the write lock),
    then the first commits: neither is a 500, and the pair is stored once."""
    device, headers = phone(brand, "Phone A")
    brand_wide = notice(brand, "Check payment")
    written, go_on = threading.Event(), threading.Event()

    def hold_the_first(conn, cursor, statement, *args):
        if threading.current_thread().name == "first" and statement.lstrip().upper().startswith(
            "INSERT INTO NOTIFICATION_ACKNOWLEDGEMENTS"
        ):
            written.set()
            go_on.wait(30)

    answers = {}

    def post(name):
        answer = app.test_client().post(ACKS, headers=headers, json={"ids": [brand_wide]})
        acknowledged = (answer.get_json().get("data") or {}).get("acknowledged")
        answers[name] = (answer.status_code, acknowledged)

    first = threading.Thread(name="first", target=post, args=("first",))
    second = threading.Thread(name="second", target=post, args=("second",))
    event.listen(db.engine, "after_cursor_execute", hold_the_first)
    try:
        first.start()
        assert written.wait(10), "the first request never wrote an acknowledgement"
        second.start()
        wait_until_blocked()
        go_on.set()
        first.join(30)
        second.join(30)
    finally:
        go_on.set()
        event.remove(db.engine, "after_cursor_execute", hold_the_first)

    assert sorted(answers.values(), key=str) == [(200, 0), (200, 1)]
    assert acknowledgement_rows() == [(brand_wide, device.id)]


def wait_until_blocked():
    """Until the second request waits on the first's uncommitted write (PostgreSQL shows the wait in
    pg_locks; SQLite's writer waits in its busy handler, which shows nothing: a moment there)."""
    if db.engine.dialect.name != "postgresql":
        time.sleep(0.5)
        return
    deadline = time.monotonic() + 10
    with db.engine.connect() as connection:
        while time.monotonic() < deadline:
            waiting = connection.execute(
                text("SELECT count(*) FROM pg_locks WHERE NOT granted")
            ).scalar_one()
            if waiting:
                return
            connection.rollback()
            time.sleep(0.02)
    raise AssertionError("the second request never waited on the first")


def test_a_phone_paired_later_is_not_handed_the_brands_older_notices(client, brand):
    _, first = phone(brand, "Counter")
    notice(brand, "Before the spare phone")
    with freeze_time(utcnow() + timedelta(seconds=2)):  # paired after that notice
        _, spare = phone(brand, "Spare")
        notice(brand, "After it")

        seen_by_spare, seen_by_first = unread(client, spare)[0], unread(client, first)[0]
    assert "After it" in seen_by_spare and "Before the spare phone" not in seen_by_spare
    assert {"After it", "Before the spare phone"} <= set(seen_by_first)


def test_phone_notifications_are_forgotten_after_90_days_read_or_not(client, brand):
    from gateway.devices.models.notification import NotificationAcknowledgement
    from gateway.devices.notifications import prune_phone_notifications

    _, headers = phone(brand, "Counter")
    read, unread_one = notice(brand, "Read"), notice(brand, "Unread")
    acknowledge(client, headers, read)
    written = db.session.execute(
        db.select(db.func.count(Notification.id))
    ).scalar()  # pairing's too
    with freeze_time(utcnow() + timedelta(days=89)):
        assert prune_phone_notifications() == 0
    with freeze_time(utcnow() + timedelta(days=91)):
        assert prune_phone_notifications() == written
        later = notice(brand, "Later")

    kept = db.session.execute(db.select(Notification.id)).scalars().all()
    assert kept == [later] and read not in kept and unread_one not in kept
    assert db.session.execute(db.select(NotificationAcknowledgement)).scalars().all() == []
