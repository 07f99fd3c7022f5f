"""A panel action and its audit row commit together: no commit between the change and its audit
entry.
"""

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory
from tests.panel.conftest import post_form
from tests.test_unit_of_work import trail  # noqa: F401 - the fixture


def test_a_panel_cancel_and_its_audit_row_commit_in_one_transaction(as_admin, brand, trail):
    payment = PaymentFactory(brand=brand)
    trail.clear()
    post_form(as_admin, f"/panel/payments/{payment.public_id}/cancel")
    moved = trail.index("UPDATE payments")
    audited = trail.index("INSERT audit_logs", moved)
    assert "COMMIT" not in trail[moved:audited]
    assert "COMMIT" in trail[audited:]
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "cancelled"
