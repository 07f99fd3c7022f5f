"""Units of work: the work inside one commits together, once, at its end; a failure keeps none of
it, unless the work was kept despite the error (a refund a wallet left unanswered).
"""

import pytest
from sqlalchemy import event

from gateway.accounts.models.audit import AuditLog
from gateway.answer_commit import keep_despite_error, unit_of_work
from gateway.extensions import db
from gateway.panel.audit import record_audit
from gateway.payments.lifecycle import cancel_payment
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory, UserFactory


@pytest.fixture
def trail(app):
    """The statements the database receives and its commits, in order."""
    seen = []

    def statement(conn, cursor, text, *args):
        seen.append(
            text.split()[0].upper()
            + " "
            + text.split()[2 if text.upper().startswith("INSERT") else 1]
        )

    def commit(conn):
        seen.append("COMMIT")

    event.listen(db.engine, "before_cursor_execute", statement)
    event.listen(db.engine, "commit", commit)
    yield seen
    event.remove(db.engine, "before_cursor_execute", statement)
    event.remove(db.engine, "commit", commit)


def test_work_in_a_unit_commits_once_at_its_end(brand, trail):
    user = UserFactory(brand=brand, role="super_admin")
    payment = PaymentFactory(brand=brand)
    trail.clear()
    with unit_of_work():
        cancel_payment(payment)
        record_audit(user, "payment.cancel", payment)
        assert "COMMIT" not in trail
    assert trail.count("COMMIT") == 1
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "cancelled"
    assert db.session.execute(db.select(AuditLog.action)).scalars().all() == ["payment.cancel"]


def test_a_failure_in_a_unit_keeps_neither_the_action_nor_its_audit_row(brand):
    user = UserFactory(brand=brand, role="super_admin")
    payment = PaymentFactory(brand=brand)
    with pytest.raises(RuntimeError), unit_of_work():
        cancel_payment(payment)
        record_audit(user, "payment.cancel", payment)
        raise RuntimeError("the edge failed after the service")
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "created"
    assert db.session.execute(db.select(AuditLog)).first() is None


def test_a_nested_unit_joins_the_outer_one(brand, trail):
    payment = PaymentFactory(brand=brand)
    trail.clear()
    with unit_of_work():
        with unit_of_work():
            cancel_payment(payment)
        assert "COMMIT" not in trail
    assert trail.count("COMMIT") == 1


def test_outside_a_unit_a_service_still_commits_its_own_work(brand, trail):
    payment = PaymentFactory(brand=brand)
    trail.clear()
    cancel_payment(payment)
    assert trail.count("COMMIT") == 1


def test_work_kept_despite_an_error_commits_once_with_its_audit_row(brand, trail):
    user = UserFactory(brand=brand, role="super_admin")
    payment = PaymentFactory(brand=brand)
    trail.clear()
    with pytest.raises(RuntimeError), unit_of_work():
        cancel_payment(payment)
        record_audit(user, "payment.cancel", payment)
        keep_despite_error()
        assert "COMMIT" not in trail
        raise RuntimeError("the error the kept work goes with")
    assert trail.count("COMMIT") == 1
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "cancelled"
    assert db.session.execute(db.select(AuditLog.action)).scalars().all() == ["payment.cancel"]


def test_work_kept_then_rolled_back_is_not_kept(brand):
    payment = PaymentFactory(brand=brand)
    with pytest.raises(RuntimeError), unit_of_work():
        cancel_payment(payment)
        keep_despite_error()
        db.session.rollback()  # whatever undoes the transaction undoes the keeping with it
        cancel_payment(payment)  # new work of a new transaction, not kept
        raise RuntimeError("a later failure")
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "created"
