"""One hanging receiver holds one worker, not all of them: other hosts' webhooks keep arriving
meanwhile.
"""

import threading
import time

import pytest

from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory
from tests.webhook_support import (  # noqa: F401,F811 - fixtures
    HOLDING,
    WebhookReceiver,
    receiver,
    rq_redis,
    start_worker,
)

pytestmark = pytest.mark.slow


class HangingReceiver(WebhookReceiver):
    """A verifying receiver that holds every request open until released, counting how many it holds
    at once.
    """

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
    workers = [start_worker(**HOLDING), start_worker(**HOLDING)]
    for _ in range(6):  # queued first: without a fair share both workers would sit on these
        complete_payment(PaymentFactory(brand=brand, callback_url=hanging.url))
    assert hanging.wait_for(1), workers[0].output()
    for _ in range(10):
        complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))

    assert receiver.wait_for(10, timeout=60), workers[0].output() + workers[1].output()
    # Every healthy webhook arrived while the hanging receiver still held its first request: no
    # hanging attempt has ended, and it never had more than its one share of the workers.
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


def test_an_attempt_left_in_flight_by_a_dead_process_is_taken_over_not_parked(app, rq_redis):
    """A worker killed between admitting an attempt and claiming it leaves the attempt's place
    taken: the same attempt, woken again, takes it over instead of waiting out the lease."""
    from gateway.webhooks.hosts import admit

    url = "http://127.0.0.1:9/hooks"
    assert admit(url, 1, 1, brand_id=1) is True  # then the process dies
    assert admit(url, 1, 1, brand_id=1) is True  # the sweep's wake-up of the same attempt
    assert admit(url, 2, 1, brand_id=1) is False  # another delivery still waits its turn


def test_a_slow_answer_keeps_the_host_to_one_attempt_at_a_time(app, rq_redis):
    from gateway.webhooks.hosts import admit, release

    url = "http://127.0.0.1:9/hooks"
    assert admit(url, 1, 1) is True
    release(url, 1, 1, seconds=app.config["WEBHOOK_SLOW_SECONDS"] + 1)
    assert admit(url, 2, 1) is True
    assert admit(url, 3, 1) is False


def test_a_brand_has_at_most_its_share_of_attempts_to_slow_hosts(app, rq_redis):
    from rq import Queue

    from gateway import jobs
    from gateway.webhooks.hosts import admit, release

    slow = [
        f"http://127.0.0.1:{port}/hooks" for port in (9, 10, 11)
    ]  # three hosts never heard from
    assert admit(slow[0], 1, 1, brand_id=1) is True
    assert admit(slow[1], 2, 1, brand_id=1) is True
    assert (
        admit(slow[2], 3, 1, brand_id=1) is False
    )  # its host is free, but the brand's share is not
    assert admit(slow[2], 4, 1, brand_id=2) is True  # another brand's share is its own
    queue = Queue(jobs.WEBHOOKS, connection=rq_redis)
    assert queue.count == 0

    release(slow[0], 1, 1, seconds=30, brand_id=1)  # a slow answer frees the brand's place ...
    assert [job.args for job in queue.jobs] == [(jobs.DELIVER_WEBHOOK, 3)]  # ... for the parked one
    assert admit(slow[2], 3, 1, brand_id=1) is False  # its host is now busy with brand 2's attempt
    assert admit(slow[0], 5, 1, brand_id=1) is True


def test_one_brands_slow_receivers_do_not_hold_back_another_brands_webhooks(
    app, brand, other_brand, start_worker
):
    hanging = [HangingReceiver(brand.webhook_secret) for _ in range(3)]
    fast = WebhookReceiver(other_brand.webhook_secret)
    try:
        workers = [start_worker(**HOLDING) for _ in range(3)]
        for (
            server
        ) in hanging:  # three hosts, each within its own share: only the brand's share stops them
            for _ in range(2):
                complete_payment(PaymentFactory(brand=brand, callback_url=server.url))
        deadline = time.monotonic() + 60
        while sum(len(server.received) for server in hanging) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(5):
            complete_payment(PaymentFactory(brand=other_brand, callback_url=fast.url))

        logs = "".join(worker.output() for worker in workers)
        assert fast.wait_for(5, timeout=60), logs
        # Brand B's webhooks all arrived while brand A's receivers still hung: A held two workers,
        # not three.
        assert sum(server.open_now for server in hanging) == 2
        assert sum(len(server.received) for server in hanging) == 2
    finally:
        for server in hanging:
            server.hold.set()
            server.close()
        fast.close()
    assert fast.rejected == []


def test_a_running_attempt_keeps_its_place_and_a_dead_ones_lapses(app, rq_redis, monkeypatch):
    from gateway.webhooks import hosts

    monkeypatch.setattr(hosts, "SLOT_SECONDS", 2)
    monkeypatch.setattr(hosts, "RENEW_EVERY", 0.2)
    url = "http://127.0.0.1:9/hooks"  # a host never heard from: one attempt at a time
    assert hosts.admit(url, 1, 1) is True
    time.sleep(3)
    assert hosts.admit(url, 2, 1) is False  # its process renews the running attempt's place
    # Its process dies: nothing renews the place any more, nor ever releases it.
    hosts.PLACES.let_go(hosts.keys(hosts.host_of(url))[0], hosts.attempt_member(1, 1))
    time.sleep(3)
    assert hosts.admit(url, 2, 1) is True
