"""Manual methods end to end: the customer's reference and receipt at checkout, the proof in the
panel only, approve and reject (the webhook a real local receiver gets), racing clicks."""

import html
import io
import re
import threading
from decimal import Decimal

import pytest
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import encode_multipart

from gateway.extensions import db
from gateway.payments.manual import approve_manual, reject_manual
from gateway.payments.methods import add_account_method, update_method
from gateway.payments.models.payment_proof import PaymentProof
from tests.factories import PaymentFactory
from tests.panel.conftest import audit_actions, panel_client, post_form, reloaded, sign_in
from tests.proof_files import PHP, bomb_pdf, image_bytes, pdf_bytes
from tests.webhook_support import receiver  # noqa: F401 - fixture

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def manual(brand):
    return add_account_method(
        brand,
        "manual",
        display_name="Cash deposit",
        account_name="Shop Ltd",
        account_number="ACC-0042",
        instructions="Deposit at any branch, then type the slip number.",
        instructions_bn="যেকোনো শাখায় জমা দিন, তারপর স্লিপ নম্বর লিখুন।",
        proof="optional",
    )


@pytest.fixture
def customer(app):
    return panel_client(app)


def pay_page_token(client, payment):
    page = client.get(f"/checkout/{payment.token}")
    assert page.status_code == 200
    return CSRF.search(page.get_data(as_text=True)).group(1)


def send_manual(client, payment, method, reference="DEP12345", proof=None, filename="slip.jpg"):
    """Post the manual method's form as the customer's browser does (multipart, with the file)."""
    data = {"csrf_token": pay_page_token(client, payment), "method_id": str(method.id)}
    data["reference"] = reference
    if proof is not None:
        data["proof"] = FileStorage(io.BytesIO(proof), filename, content_type="image/jpeg")
    # Encoded in memory, as a browser sends it (the test client would spool a large body to a file).
    boundary, body = encode_multipart(MultiDict(data))
    return client.post(
        f"/checkout/{payment.token}/manual",
        data=body,
        content_type=f"multipart/form-data; boundary={boundary}",
    )


def stored_proof(payment):
    return db.session.execute(
        db.select(PaymentProof).where(PaymentProof.payment_id == payment.id)
    ).scalar_one_or_none()


def test_the_pay_page_shows_the_account_and_the_instructions_in_the_page_language(
    customer, brand, manual
):
    payment = PaymentFactory(brand=brand)
    english = customer.get(f"/checkout/{payment.token}").get_data(as_text=True)
    assert "Cash deposit" in english and "ACC-0042" in english and "Shop Ltd" in english
    assert "Deposit at any branch" in english and 'enctype="multipart/form-data"' in english
    bangla = customer.get(f"/checkout/{payment.token}?lang=bn").get_data(as_text=True)
    assert "যেকোনো শাখায় জমা দিন" in bangla and "Deposit at any branch" not in bangla
    assert "রসিদের ছবি বা PDF" in bangla  # the upload's label, translated


@pytest.mark.parametrize(
    ("proof", "kind"), [(image_bytes("JPEG"), "image/jpeg"), (pdf_bytes(), "application/pdf")]
)
def test_a_reference_and_receipt_put_the_payment_in_review_with_the_proof_stored(
    customer, brand, manual, proof, kind
):
    payment = PaymentFactory(brand=brand)
    response = send_manual(customer, payment, manual, proof=proof, filename="../../etc/passwd")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/checkout/{payment.token}/wait")
    payment = reloaded(payment)
    assert (payment.status, payment.provider, payment.provider_trx_id) == (
        "processing",
        "manual",
        "DEP12345",
    )
    assert payment.review_reason == "Manual payment: check the reference and the proof"
    row = stored_proof(payment)
    assert (row.content_type, row.size, bytes(row.content)) == (kind, len(proof), proof)
    assert len(row.sha256) == 64
    waiting = customer.get(f"/checkout/{payment.token}/wait")
    assert waiting.status_code == 200
    assert "checks your reference and receipt by hand" in waiting.get_data(as_text=True)
    bangla = customer.get(f"/checkout/{payment.token}/wait?lang=bn").get_data(as_text=True)
    assert "আপনার রেফারেন্স ও রসিদ নিজে যাচাই করে" in bangla


@pytest.mark.parametrize(
    ("proof", "message"),
    [
        (PHP, "Upload a JPEG, PNG or PDF file."),
        (bomb_pdf(), "The PDF's contents are too large once unpacked."),
    ],
    ids=["php-renamed-jpg", "pdf-bomb"],
)
def test_a_bad_upload_is_refused_on_the_pay_page_and_nothing_is_stored(
    customer, brand, manual, proof, message
):
    payment = PaymentFactory(brand=brand)
    response = send_manual(customer, payment, manual, proof=proof, filename="shell.php.jpg")
    assert response.status_code == 422
    assert message in html.unescape(response.get_data(as_text=True))
    assert reloaded(payment).status == "created" and stored_proof(payment) is None


def test_an_oversized_upload_is_refused_413_before_the_body_is_read(customer, brand, manual):
    payment = PaymentFactory(brand=brand)
    big = image_bytes("JPEG") + b"\0" * (6 * 1024 * 1024)
    response = send_manual(customer, payment, manual, proof=big)
    assert response.status_code == 413
    assert "The file is too large" in response.get_data(as_text=True)
    assert reloaded(payment).status == "created" and stored_proof(payment) is None


def test_only_the_manual_route_takes_a_body_over_one_megabyte(customer, brand, manual):
    payment = PaymentFactory(brand=brand)
    token = pay_page_token(customer, payment)
    body = {"csrf_token": token, "method_id": "1", "trx_id": "X" * (2 * 1024 * 1024)}
    assert customer.post(f"/checkout/{payment.token}/claim", data=body).status_code == 413
    # Two megabytes of receipt are within the manual route's own limit.
    two_mb = image_bytes("JPEG") + b"\0" * (2 * 1024 * 1024)
    assert send_manual(customer, payment, manual, proof=two_mb).status_code == 303


def test_a_required_proof_and_a_missing_reference_are_field_errors(customer, brand):
    method = add_account_method(
        brand,
        "manual",
        display_name="Wire",
        account_name="Shop",
        account_number="1",
        proof="required",
    )
    payment = PaymentFactory(brand=brand)
    no_proof = send_manual(customer, payment, method)
    assert no_proof.status_code == 422
    assert "Upload a photo or PDF of your receipt." in no_proof.get_data(as_text=True)
    no_reference = send_manual(customer, payment, method, reference="", proof=image_bytes())
    assert no_reference.status_code == 422
    assert "Enter the reference of your payment." in no_reference.get_data(as_text=True)
    assert reloaded(payment).status == "created"


def test_the_form_needs_its_csrf_token(customer, brand, manual):
    payment = PaymentFactory(brand=brand)
    response = customer.post(
        f"/checkout/{payment.token}/manual",
        data={"method_id": str(manual.id), "reference": "DEP12345"},
    )
    assert response.status_code == 400 and reloaded(payment).status == "created"


def test_the_proof_is_served_to_the_panel_only(app, customer, as_staff, brand, manual):
    payment = PaymentFactory(brand=brand)
    jpeg = image_bytes("JPEG")
    assert send_manual(customer, payment, manual, proof=jpeg).status_code == 303
    url = f"/panel/payments/{payment.public_id}/proof"
    # Not the customer's browser, nor anyone without a panel session.
    outsider = customer.get(url)
    assert outsider.status_code in (302, 401) and outsider.get_data() != jpeg
    assert panel_client(app).get(url).status_code in (302, 401)
    served = as_staff.get(url)
    assert served.status_code == 200 and served.get_data() == jpeg
    assert served.headers["Content-Type"] == "image/jpeg"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert served.headers["Content-Disposition"] == (
        f'inline; filename="payment-{payment.public_id}-proof.jpg"'
    )
    assert "sandbox" in served.headers["Content-Security-Policy"]
    assert "default-src 'none'" in served.headers["Content-Security-Policy"]
    page = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    assert f'src="{url}"' in page and "DEP12345" in page


def test_a_pdf_proof_is_a_download(customer, as_staff, brand, manual):
    payment = PaymentFactory(brand=brand)
    assert send_manual(customer, payment, manual, proof=pdf_bytes()).status_code == 303
    served = as_staff.get(f"/panel/payments/{payment.public_id}/proof")
    assert served.headers["Content-Disposition"].startswith("attachment;")
    assert served.headers["Content-Type"] == "application/pdf"


def test_another_brands_proof_is_not_found(customer, as_staff, other_brand):
    method = add_account_method(
        other_brand, "manual", display_name="X", account_name="Y", account_number="Z"
    )
    payment = PaymentFactory(brand=other_brand)
    assert send_manual(customer, payment, method, proof=image_bytes()).status_code == 303
    assert as_staff.get(f"/panel/payments/{payment.public_id}/proof").status_code == 404


def test_approving_completes_the_payment_and_the_shop_gets_the_webhook(
    app, customer, as_staff, brand, manual, staff, receiver, monkeypatch
):
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    payment = PaymentFactory(brand=brand, amount=Decimal("750.00"), callback_url=receiver.url)
    assert send_manual(customer, payment, manual, proof=image_bytes()).status_code == 303
    response = post_form(as_staff, f"/panel/payments/{payment.public_id}/approve")
    assert response.status_code == 302
    payment = reloaded(payment)
    assert payment.status == "completed" and payment.transaction is not None
    assert payment.transaction.provider_trx_id == "DEP12345"
    assert receiver.wait_for(1)
    event = receiver.events()[0]
    assert event["event"] == "payment.completed"
    assert event["data"]["payment_id"] == payment.public_id, event
    assert ("payment.approve", staff.email, payment.public_id) in audit_actions(brand)
    result = customer.get(f"/checkout/{payment.token}", follow_redirects=True)
    assert "Payment received" in result.get_data(as_text=True)


def test_rejecting_fails_the_payment_and_the_customer_reads_why(
    app, customer, as_staff, brand, manual, staff, receiver, monkeypatch
):
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    payment = PaymentFactory(brand=brand, callback_url=receiver.url)
    assert send_manual(customer, payment, manual, proof=image_bytes()).status_code == 303
    url = f"/panel/payments/{payment.public_id}/reject"
    # Without a reason the customer would learn nothing: refused, nothing changed.
    post_form(as_staff, url, {"reason": ""})
    assert reloaded(payment).status == "processing"
    post_form(as_staff, url, {"reason": "No deposit with slip DEP12345 reached us."})
    payment = reloaded(payment)
    assert (payment.status, payment.review_reason) == (
        "failed",
        "No deposit with slip DEP12345 reached us.",
    )
    assert receiver.wait_for(1) and receiver.events()[0]["event"] == "payment.failed"
    assert ("payment.reject", staff.email, payment.public_id) in audit_actions(brand)
    page = customer.get(f"/checkout/{payment.token}").get_data(as_text=True)
    assert "No deposit with slip DEP12345 reached us." in page
    bangla = customer.get(f"/checkout/{payment.token}?lang=bn").get_data(as_text=True)
    assert "কারণ" in bangla


def test_a_viewer_cannot_approve(app, customer, brand, manual):
    from tests.factories import UserFactory

    reader = UserFactory(brand=brand, role="viewer", email="viewer@shop.test")
    payment = PaymentFactory(brand=brand)
    assert send_manual(customer, payment, manual).status_code == 303
    client = panel_client(app)
    sign_in(client, reader)
    response = post_form(client, f"/panel/payments/{payment.public_id}/approve")
    assert response.status_code == 403 and reloaded(payment).status == "processing"


def test_an_approve_and_a_reject_racing_cannot_both_win(app, customer, brand, manual):
    payment = PaymentFactory(brand=brand)
    assert send_manual(customer, payment, manual).status_code == 303
    barrier, outcomes = threading.Barrier(2), []

    def act(action):
        with app.app_context():
            mine = db.session.get(type(payment), payment.id)
            barrier.wait()
            try:
                action(mine)
                outcomes.append("won")
            except Exception as error:  # noqa: BLE001 - the loser's refusal
                db.session.rollback()
                outcomes.append(type(error).__name__)
            finally:
                db.session.remove()

    threads = [
        threading.Thread(target=act, args=(approve_manual,)),
        threading.Thread(target=act, args=(lambda p: reject_manual(p, "not seen"),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["InvalidState", "won"]
    payment = reloaded(payment)
    assert payment.status in ("completed", "failed")
    assert (payment.transaction is not None) == (payment.status == "completed")


ACCOUNT_FORM = {
    "account-kind": "bank",
    "account-proof": "optional",
    "account-bank_name": "BRAC Bank",
    "account-account_name": "Shop Ltd",
    "account-account_number": "1303200002001",
    "account-bank_branch": "Gulshan",
    "account-instructions": "Use your order number as the reference.",
    "account-instructions_bn": "রেফারেন্সে অর্ডার নম্বর লিখুন।",
}


def methods_of(brand):
    from gateway.payments.methods import list_methods

    db.session.expire_all()
    return list_methods(brand)


def test_an_admin_adds_a_bank_method_in_settings_and_it_is_audited(as_admin, admin, brand):
    response = post_form(as_admin, "/panel/settings/methods/account", ACCOUNT_FORM)
    assert response.status_code == 302
    (method,) = methods_of(brand)
    assert (method.kind, method.display_name, method.account_number, method.bank_branch) == (
        "bank",
        "BRAC Bank",
        "1303200002001",
        "Gulshan",
    )
    assert ("payment_method.add", admin.email, str(method.id)) in audit_actions(brand)
    page = as_admin.get("/panel/settings").get_data(as_text=True)
    assert "1303200002001" in page and method.number not in page


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"account-account_number": ""}, "This field is required."),
        ({"account-bank_name": ""}, "Bank name is required."),
        ({"account-kind": "manual", "account-display_name": ""}, "Display name is required."),
        ({"account-kind": "wallet"}, "Not a valid choice."),
        ({"account-proof": "always"}, "Not a valid choice."),
        ({"account-account_name": "x" * 121}, "Field cannot be longer than 120 characters."),
    ],
)
def test_bad_settings_input_is_shown_next_to_its_field(as_admin, brand, changes, message):
    response = post_form(as_admin, "/panel/settings/methods/account", {**ACCOUNT_FORM, **changes})
    assert response.status_code == 422
    assert message in html.unescape(response.get_data(as_text=True))
    assert methods_of(brand) == []


def test_staff_cannot_add_a_method(as_staff, brand):
    response = post_form(as_staff, "/panel/settings/methods/account", ACCOUNT_FORM)
    assert response.status_code == 403 and methods_of(brand) == []


def test_the_panel_payment_page_in_bangla_shows_the_proof_heading(
    app, customer, as_staff, brand, manual
):
    payment = PaymentFactory(brand=brand)
    assert send_manual(customer, payment, manual, proof=image_bytes()).status_code == 303
    page = as_staff.get(f"/panel/payments/{payment.public_id}?lang=bn").get_data(as_text=True)
    assert "গ্রাহকের পেমেন্টের প্রমাণ" in page


def test_a_manual_method_s_fee_is_shown_and_charged_with_the_reference(customer, brand, manual):
    update_method(manual, fee_fixed="15")
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    page = customer.get(f"/checkout/{payment.token}").get_data(as_text=True)
    assert "৳515.00" in page
    assert send_manual(customer, payment, manual).status_code == 303
    payment = reloaded(payment)
    assert (payment.fee, payment.amount_paid) == (Decimal("15.00"), Decimal("515.00"))
