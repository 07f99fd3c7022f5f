"""gateway.rate_limits: `limited`, the decorator of the pages' and the companion app's limits (which
methods, what counts, shared scopes, the per-app switch, the shared store, Retry-After), and an API
request that runs none of it.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from flask import request

from gateway import create_app
from gateway.accounts.models.rate_limit import RateLimitCounter
from gateway.accounts.rate_limit_store import DatabaseStorage, RedisWithDatabaseFallback
from gateway.extensions import db
from gateway.rate_limits import limited
from tests.factories import UserFactory
from tests.limited_apps import limited_settings
from tests.panel.conftest import panel_client, sign_in
from tests.redis_server import own_redis  # noqa: F401 - fixture
from tests.services import REDIS_URL, redis_client


@pytest.fixture
def build(app):
    """Build apps over the suite's database with limits on (memory:// unless told otherwise) and
    LOGIN_RATE_LIMIT=3/minute; their connections are closed after the test.
    """
    built = []

    def build_app(**settings):
        served = create_app(
            limited_settings(
                app, **{"LOGIN_RATE_LIMIT": "3/minute", "SERVER_NAME": None, **settings}
            )
        )
        built.append(served)
        return served

    yield build_app
    for served in built:
        with served.app_context():
            db.session.remove()
            db.engine.dispose()


def with_test_routes(served):
    """Two routes sharing the scope `shared`, one with a scope of its own, one under /api/ (the
    envelope), and one counting only its failures; all 2/minute.
    """
    for path, scope in (
        ("/_test/first", "shared"),
        ("/_test/second", "shared"),
        ("/_test/own", "own"),
        ("/api/_test/limited", "api-shaped"),
    ):
        served.add_url_rule(
            path, scope + path, limited("2/minute", scope=scope)(lambda: "answered")
        )

    @served.get("/_test/attempt")
    @limited("2/minute", scope="attempts", counts=lambda response: response.status_code == 401)
    def attempt():
        return ("refused", 401) if request.args.get("fail") else "accepted"

    return served


def statuses(client, paths):
    return [client.get(path).status_code for path in paths]


def test_a_get_of_sign_in_is_never_limited(build, brand):
    client = panel_client(build())
    user = UserFactory(brand=brand, email="target@shop.test")

    assert statuses(client, ["/panel/sign-in"] * 10) == [200] * 10  # uses none of the 3 failures
    assert [sign_in(client, user, "guess").status_code for _ in range(4)] == [200] * 3 + [429]
    assert statuses(client, ["/panel/sign-in"] * 3) == [200] * 3  # the form opens past the limit


def test_successful_sign_ins_are_not_counted_and_the_fourth_failure_is_429(build, brand):
    served = build()
    user = UserFactory(brand=brand, email="owner@shop.test")

    # Five sign-ins from one address, each in a fresh browser: none uses the budget.
    assert [sign_in(panel_client(served), user).status_code for _ in range(5)] == [302] * 5
    client = panel_client(served)
    assert [sign_in(client, user, "guess").status_code for _ in range(3)] == [200] * 3
    blocked = sign_in(client, user, "guess")

    assert blocked.status_code == 429
    assert 1 <= int(blocked.headers["Retry-After"]) <= 60
    assert "X-RateLimit-Limit" not in blocked.headers
    # A full window refuses before the password is looked at: the right one is refused too.
    assert sign_in(panel_client(served), user).status_code == 429


# Where the limits count: in this process, the database, Redis (with the database as fallback).
STORES = {"memory": "memory://", "database": "gateway+db://", "redis": "gateway+" + REDIS_URL}


def empty_redis_around(request):
    """The suite's Redis database emptied now and after the test."""
    redis_client().flushdb()
    request.addfinalizer(lambda: redis_client().flushdb())


@pytest.fixture(params=sorted(STORES))
def store(request):
    """Each store a limit can count in (Redis emptied around the test)."""
    if request.param == "redis":
        empty_redis_around(request)
    return STORES[request.param]


def test_a_full_window_refuses_before_the_view_and_only_counted_answers_use_it(build, store):
    client = with_test_routes(build(RATELIMIT_STORAGE_URI=store)).test_client()

    assert statuses(client, ["/_test/attempt"] * 5) == [200] * 5
    assert statuses(client, ["/_test/attempt?fail=1"] * 2) == [401] * 2
    assert statuses(client, ["/_test/attempt", "/_test/attempt?fail=1"]) == [429] * 2


def test_requests_side_by_side_cannot_all_take_a_window_s_last_places(build, store):
    """Six failures at once against 2/minute: two reach the view, four are refused before it, even
    while the first two are still inside (counted before the view, given back only if they do not
    count)."""
    served = build(RATELIMIT_STORAGE_URI=store)
    inside, release = threading.Semaphore(0), threading.Event()

    @served.get("/_test/slow-attempt")
    @limited("2/minute", scope="slow", counts=lambda response: response.status_code == 401)
    def slow_attempt():
        inside.release()
        release.wait(10)
        return "refused", 401

    with ThreadPoolExecutor(6) as pool:
        answers = [pool.submit(served.test_client().get, "/_test/slow-attempt") for _ in range(6)]
        assert inside.acquire(timeout=10) and inside.acquire(timeout=10)
        deadline = time.monotonic() + 10  # the four past the window answer without waiting
        while sum(answer.done() for answer in answers) < 4 and time.monotonic() < deadline:
            release.wait(0.05)
        refused_while_inside = sum(answer.done() for answer in answers)
        release.set()
        codes = sorted(answer.result().status_code for answer in answers)
    assert (refused_while_inside, codes) == (4, [401, 401, 429, 429, 429, 429])


@pytest.mark.parametrize("storage", ["database", "redis"])
def test_a_hit_is_given_back_only_to_its_own_open_window_and_never_below_zero(
    app, request, storage
):
    if storage == "redis":
        empty_redis_around(request)
        counters = RedisWithDatabaseFallback(STORES["redis"])
    else:
        counters = DatabaseStorage()
    counters.incr("limit/key", 60, 2)
    counters.give_back("limit/key")
    assert counters.get("limit/key") == 1
    for _ in range(3):
        counters.give_back("limit/key")
    assert counters.get("limit/key") == 0

    counters.incr("short/key", 1)  # a one-second window: ended before its hit comes back
    time.sleep(1.1)
    counters.give_back("short/key")
    assert counters.incr("short/key", 60) == 1  # the next window starts at one, not at zero


def test_routes_naming_one_scope_share_its_budget(build):
    client = with_test_routes(build()).test_client()

    assert statuses(client, ["/_test/first", "/_test/second"]) == [200, 200]
    assert statuses(client, ["/_test/first", "/_test/second"]) == [429, 429]
    assert statuses(client, ["/_test/own", "/_test/own", "/_test/own"]) == [200, 200, 429]


def test_every_429_carries_retry_after_on_a_page_and_in_the_envelope(build):
    client = with_test_routes(build()).test_client()
    statuses(client, ["/_test/own"] * 2 + ["/api/_test/limited"] * 2)

    page, envelope = client.get("/_test/own"), client.get("/api/_test/limited")

    assert page.status_code == 429 and page.mimetype == "text/html"
    assert envelope.status_code == 429 and envelope.get_json()["code"] == "RATE_LIMITED"
    for refused in (page, envelope):
        assert 1 <= int(refused.headers["Retry-After"]) <= 60


def test_ratelimit_enabled_is_read_from_each_app_on_each_request(build, brand):
    user = UserFactory(brand=brand, email="target@shop.test")
    limited_app, open_app = build(), build(RATELIMIT_ENABLED=False)
    limited_client, open_client = panel_client(limited_app), panel_client(open_app)

    assert [sign_in(open_client, user, "guess").status_code for _ in range(5)] == [200] * 5
    assert [sign_in(limited_client, user, "guess").status_code for _ in range(4)] == [200] * 3 + [
        429
    ]
    assert [sign_in(open_client, user, "guess").status_code for _ in range(2)] == [200] * 2
    limited_app.config["RATELIMIT_ENABLED"] = False
    assert sign_in(limited_client, user, "guess").status_code == 200


def test_without_redis_the_sign_in_limit_counts_in_the_database_for_every_process(build, brand):
    """Two apps stand for two workers: a security limit never counts per process."""
    user = UserFactory(brand=brand, email="target@shop.test")
    workers = [panel_client(build(RATELIMIT_STORAGE_URI=None)) for _ in range(2)]

    answers = [sign_in(workers[n % 2], user, "guess").status_code for n in range(4)]

    assert answers == [200] * 3 + [429]
    assert db.session.execute(db.select(db.func.count()).select_from(RateLimitCounter)).scalar() > 0


def test_with_redis_the_sign_in_limit_counts_in_redis_for_every_process(build, own_redis, brand):
    user = UserFactory(brand=brand, email="target@shop.test")
    workers = [
        panel_client(build(REDIS_URL=own_redis.url, RATELIMIT_STORAGE_URI=None)) for _ in range(2)
    ]

    answers = [sign_in(workers[n % 2], user, "guess").status_code for n in range(4)]

    assert answers == [200] * 3 + [429]
    assert own_redis.client().keys("*LIMITER/sign-in/*")
    assert (
        db.session.execute(db.select(db.func.count()).select_from(RateLimitCounter)).scalar() == 0
    )


def test_an_api_request_runs_no_hook_and_no_limit_of_the_browser_routes(build, brand, make_key):
    served = build(RATELIMIT_STORAGE_URI=None)
    hooks = [
        hook
        for table in (
            served.before_request_funcs,
            served.after_request_funcs,
            served.teardown_request_funcs,
        )
        for functions in table.values()
        for hook in functions
    ] + served.teardown_appcontext_funcs

    assert [
        hook
        for hook in hooks
        if hook.__module__.startswith(("flask_limiter", "gateway.rate_limits"))
    ] == []
    assert served.test_client().get("/api/v1/payments", headers=make_key(brand)).status_code == 200
    # Only the API's own per-key limit was asked, in this process (no Redis): no browser limit's
    # window was built and the shared store was never opened.
    assert list(served.extensions["gateway_rate_limits"]) == ["API_RATE_LIMIT"]
    assert "gateway_rate_limit_store" not in served.extensions
