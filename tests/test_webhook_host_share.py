"""One hanging receiver holds one worker, not all of them: other hosts' webhooks keep arriving meanwhile."""
import threading

import pytest

from gateway.extensions import db
from gateway.models import WebhookDelivery
from gateway.services.payments import complete_payment
from tests.factories import PaymentFactory
from tests.webhook_support import WebhookReceiver, receiver, rq_redis, start_worker  # noqa: F401,F811 - fixtures

pytestmark = pytest.mark.slow


class HangingReceiver(WebhookReceiver):
    """A verifying receiver that holds every request open until released, counting how many it holds at once."""

    def __init__(self, secret):
        super().__init__(secret)
        self.hold = threading.Event()
        self.open_now = self.most_open = 0
        self.count_lock = threading.Lock()

    def wsgi(self, environ, start_response):
        with self.count_lock:
            self.open_now += 1
            self.most_open = max(self.most_open, self.open_now)
        try:
            return super().wsgi(environ, start_response)
        finally:
            with self.count_lock:
                self.open_now -= 1


@pytest.fixture
def hanging(brand):
    server = HangingReceiver(brand.webhook_secret)
    yield server
    server.close()
    assert server.rejected == []


def statuses_for(url):
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery.status, WebhookDelivery.attempts)
                              .where(WebhookDelivery.url == url)).all()


def test_a_hanging_receiver_does_not_hold_back_another_hosts_webhooks(brand, receiver, hanging, start_worker):
    workers = [start_worker(), start_worker()]
    for _ in range(6):  # queued first: without a fair share both workers would sit on these for 30 s
        complete_payment(PaymentFactory(brand=brand, callback_url=hanging.url))
    assert hanging.wait_for(1), workers[0].output()
    for _ in range(10):
        complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))

    assert receiver.wait_for(10, timeout=60), workers[0].output() + workers[1].output()
    # Every healthy webhook arrived while the hanging receiver still held its first request: no hanging
    # attempt has ended, and it never had more than its one share of the workers.
    hanging_rows = statuses_for(hanging.url)
    assert len(hanging.received) == 1 and hanging.open_now == 1
    assert sorted(hanging_rows) == [("pending", 0)] * 5 + [("pending", 1)]
    assert hanging.most_open == 1
    hanging.hold.set()
