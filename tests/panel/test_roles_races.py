"""Racing writers on users: one TOTP code or recovery code wins once, and two owners cannot demote
each other.

Each thread has its own application context, hence its own session and connection, on the engine the
suite runs on (SQLite file by default, PostgreSQL with TEST_DB=postgres).
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pyotp
from freezegun import freeze_time

from gateway.accounts.models.user import User
from gateway.accounts.two_factor import confirm_enrolment, start_enrolment, verify_second_factor
from gateway.accounts.users import change_role, set_user_active
from gateway.clock import utcnow
from gateway.domain_errors import DomainError
from gateway.extensions import db
from tests.factories import UserFactory

RACERS = 8


def race(app, jobs):
    """Run every job at once, each in its own app context; returns results (DomainErrors as
    values)."""
    barrier = threading.Barrier(len(jobs))

    def run(job):
        with app.app_context():
            barrier.wait()
            try:
                result = job()
                db.session.commit()
                return result
            except DomainError as error:
                db.session.rollback()
                return error
            finally:
                db.session.remove()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


def enrolled_owner(brand, email="owner@shop.test"):
    """An owner with two-factor on (enrolled a minute ago); returns (user id, secret, recovery
    codes).
    """
    user = UserFactory(brand=brand, role="owner", email=email)
    with freeze_time(utcnow() - timedelta(minutes=1)):
        secret = start_enrolment(user)
        codes = confirm_enrolment(user, pyotp.TOTP(secret).now())
    return user.id, secret, codes


def test_one_code_sent_by_racing_requests_is_accepted_once(app, brand):
    user_id, secret, _ = enrolled_owner(brand)
    code = pyotp.TOTP(secret).now()

    def use_code():
        return verify_second_factor(db.session.get(User, user_id), code)

    results = race(app, [use_code] * RACERS)
    assert results.count("totp") == 1 and results.count(None) == RACERS - 1


def test_one_recovery_code_sent_by_racing_requests_is_spent_once(app, brand):
    user_id, _, codes = enrolled_owner(brand)

    def use_code():
        return verify_second_factor(db.session.get(User, user_id), codes[0])

    results = race(app, [use_code] * RACERS)
    assert results.count("recovery") == 1 and results.count(None) == RACERS - 1


def test_two_owners_demoting_each_other_at_once_leave_one_owner(app, brand):
    first = UserFactory(brand=brand, role="owner", email="first@shop.test")
    second = UserFactory(brand=brand, role="owner", email="second@shop.test")
    ids = (first.id, second.id)

    def demote(target_id, actor_id):
        def job():
            return change_role(
                db.session.get(User, target_id), "admin", db.session.get(User, actor_id)
            ).role

        return job

    def deactivate(target_id, actor_id):
        def job():
            user = db.session.get(User, target_id)
            return set_user_active(user, False, db.session.get(User, actor_id)).active

        return job

    results = race(app, [demote(ids[0], ids[1]), deactivate(ids[1], ids[0])])
    assert sum(not isinstance(result, DomainError) for result in results) <= 1
    db.session.expire_all()
    owners = db.session.execute(
        db.select(User).where(User.role == "owner", User.active.is_(True))
    ).scalars()
    assert len(list(owners)) >= 1
