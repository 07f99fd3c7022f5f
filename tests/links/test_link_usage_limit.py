"""A link's usage limit under concurrent payers (real threaded server), and slots given back."""

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import requests

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.links.models.link import LinkPayment, PaymentLink
from gateway.payments.lifecycle import cancel_payment, expire_due_payments
from gateway.payments.models.payment import Payment
from tests.factories import reload
from tests.links.support import make_link, submit_link

RACERS = 12
LIMIT = 3
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def race(origin, link):
    """Every payer opens the page, then all submit at once; the status each got back."""
    start = threading.Barrier(RACERS)

    def pay(_):
        with requests.Session() as session:
            page = session.get(f"{origin}/pay/{link.slug}", timeout=60)
            token = CSRF_FIELD.search(page.text).group(1)
            start.wait()
            response = session.post(
                f"{origin}/pay/{link.slug}",
                data={"csrf_token": token},
                allow_redirects=False,
                timeout=60,
            )
            return response.status_code

    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        return list(pool.map(pay, range(RACERS)))


def committed(link):
    db.session.expire_all()
    count = db.session.execute(
        db.select(db.func.count()).select_from(LinkPayment).where(LinkPayment.link_id == link.id)
    ).scalar_one()
    return db.session.get(PaymentLink, link.id).used_count, count


def test_concurrent_payers_never_exceed_the_usage_limit(live_server, brand):
    link = make_link(brand, usage_limit=LIMIT)

    statuses = race(live_server, link)

    assert sorted(statuses) == [303] * LIMIT + [410] * (RACERS - LIMIT)
    assert committed(link) == (LIMIT, LIMIT)
    assert db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one() == LIMIT


def test_a_cancelled_payment_gives_its_slot_back_once(client, brand):
    link = make_link(brand, usage_limit=1)
    submit_link(client, link)
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert client.get(f"/pay/{link.slug}").status_code == 410

    cancel_payment(payment)

    assert committed(link) == (0, 1)
    assert reload(db.session.execute(db.select(LinkPayment)).scalar_one()).holds_slot is False
    assert submit_link(client, link).status_code == 303
    assert committed(link) == (1, 2)


def test_an_expired_payment_gives_its_slot_back(client, brand):
    link = make_link(brand, usage_limit=1)
    submit_link(client, link)

    expired = expire_due_payments(now=utcnow() + timedelta(hours=2))

    assert len(expired) == 1
    assert committed(link) == (0, 1)
