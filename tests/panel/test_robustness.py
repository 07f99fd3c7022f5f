"""Robustness of the panel: ids no row can have, the pairing QR's server address, Bangla on the SMS
pages.
"""

import json

import pytest

from gateway.accounts.models.user import User
from gateway.accounts.users import get_user
from gateway.db_types import MAX_ROW_ID, row_id
from gateway.devices.pairing import pairing_qr_payload
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.methods import get_method
from gateway.payments.models.payment_method import PaymentMethod
from gateway.sms.models.sms_template import SmsTemplate
from gateway.sms.outbound import queue_sms
from gateway.sms.templates import get_template
from tests.factories import PaymentMethodFactory, UserFactory
from tests.panel.conftest import post_form
from tests.panel.test_sms_inbox import forward

HUGE_IDS = ["99999999999999999999", str(2**63), str(2**31)]
ROUTES = [
    "/panel/users/{id}/deactivate",
    "/panel/users/{id}/reactivate",
    "/panel/sms-templates/{id}/toggle",
    "/panel/sms-templates/{id}/delete",
    "/panel/settings/methods/{id}/toggle",
]


@pytest.mark.parametrize("huge", HUGE_IDS)
@pytest.mark.parametrize("route", ROUTES)
def test_an_out_of_range_id_is_a_404_not_a_500(as_admin, route, huge):
    response = post_form(as_admin, route.format(id=huge))
    assert response.status_code == 404


def test_an_out_of_range_id_changes_nothing(as_admin, brand):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    method = PaymentMethodFactory(brand=brand)
    for route in ROUTES:
        assert post_form(as_admin, route.format(id=HUGE_IDS[0])).status_code == 404
    db.session.expire_all()
    assert (
        db.session.get(User, clerk.id).active and db.session.get(PaymentMethod, method.id).enabled
    )
    assert db.session.execute(db.select(db.func.count()).select_from(SmsTemplate)).scalar() == 0


@pytest.mark.parametrize("value", [0, -1, MAX_ROW_ID + 1, 99999999999999999999, "abc", None, "1.5"])
def test_row_id_refuses_ids_no_row_can_have(value):
    assert row_id(value) is None


@pytest.mark.parametrize("value, expected", [(1, 1), ("42", 42), (MAX_ROW_ID, MAX_ROW_ID)])
def test_row_id_keeps_ids_a_row_can_have(value, expected):
    assert row_id(value) == expected


@pytest.mark.parametrize("getter", [get_user, get_template, get_method])
def test_the_getters_answer_404_for_an_out_of_range_id(brand, getter):
    with pytest.raises(DomainError) as raised:
        getter(brand, 99999999999999999999)
    assert http_status(raised.value) == 404


def test_the_pairing_qr_carries_the_brand_s_base_url_when_it_has_one(app, as_admin, brand):
    brand.base_url = "https://pay.shop.test"
    db.session.commit()
    assert json.loads(pairing_qr_payload("123456", brand))["server_url"] == "https://pay.shop.test"
    html = post_form(as_admin, "/panel/devices/pairing").get_data(as_text=True)
    assert "https://pay.shop.test" in html and app.config["BASE_URL"] not in html


def test_the_pairing_qr_falls_back_to_base_url_without_a_brand_base_url(app, as_admin, brand):
    assert brand.base_url is None
    assert json.loads(pairing_qr_payload("123456", brand))["server_url"] == app.config["BASE_URL"]
    assert app.config["BASE_URL"] in post_form(as_admin, "/panel/devices/pairing").get_data(
        as_text=True
    )


def test_the_outbound_sms_page_is_fully_in_bangla(as_admin, brand):
    queue_sms(brand, "+8801712345678", "Your order shipped")
    db.session.commit()
    html = as_admin.get("/panel/outbound-sms?lang=bn").get_data(as_text=True)
    assert "অবস্থা অনুযায়ী মেসেজ" in html and "+8801712345678 নম্বরে" in html
    assert "Messages by status" not in html and "to +8801712345678" not in html
    empty = as_admin.get("/panel/outbound-sms?lang=bn&status=failed").get_data(as_text=True)
    assert "এই অবস্থার কোনো মেসেজ নেই।" in empty and "No message has this status." not in empty


def test_the_sms_inbox_shows_the_sender_in_bangla(as_admin, brand):
    forward(
        brand,
        "Dear customer, Tk 500 reached your wallet. Ref QX77PL12 thanks",
        sender="01812345678",
    )
    html = as_admin.get("/panel/sms-inbox?lang=bn").get_data(as_text=True)
    assert "01812345678 থেকে" in html and "from 01812345678" not in html
