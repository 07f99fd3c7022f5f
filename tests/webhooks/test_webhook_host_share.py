"""One hanging receiver holds one worker, not all of them: other hosts' webhooks keep arriving meanwhile."""

import threading

import pytest

from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.models.webhook import WebhookDelivery
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
    return db.session.execute(
        db.select(WebhookDelivery.status, WebhookDelivery.attempts).where(
            WebhookDelivery.url == url
        )
    ).all()


def test_a_hanging_receiver_does_not_hold_back_another_hosts_webhooks(
    brand, receiver, hanging, start_worker
):
    workers = [start_worker(), start_worker()]
    for _ in range(
        6
    ):  # queued first: without a fair share both workers would sit on these for 30 s
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


def test_a_parked_delivery_is_woken_when_its_hosts_attempt_ends(app, rq_redis):
    from rq import Queue

    from gateway import jobs
    from gateway.webhooks.hosts import admit, release

    url = "http://127.0.0.1:9/hooks"  # a host never heard from: one attempt at a time
    assert admit(url, 1, 1) is True
    assert admit(url, 2, 1) is False  # parked, holding no worker
    queue = Queue(jobs.WEBHOOKS, connection=rq_redis)
    assert queue.count == 0

    release(
        url, 1, 1, seconds=0.01
    )  # a quick answer: the host is fast now, and what it held up goes
    assert [job.args for job in queue.jobs] == [(jobs.DELIVER_WEBHOOK, 2)]
    assert admit(url, 3, 1) is True and admit(url, 4, 1) is True


def test_a_slow_answer_keeps_the_host_to_one_attempt_at_a_time(app, rq_redis):
    from gateway.webhooks.hosts import admit, release

    url = "http://127.0.0.1:9/hooks"
    assert admit(url, 1, 1) is True
    release(url, 1, 1, seconds=app.config["WEBHOOK_SLOW_SECONDS"] + 1)
    assert admit(url, 2, 1) is True
    assert admit(url, 3, 1) is False
