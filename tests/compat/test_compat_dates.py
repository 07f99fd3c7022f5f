"""Dates in each dialect's format, in the brand's time zone."""

from freezegun import freeze_time

from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER, compat_row
from tests.compat.test_compat_errors import P2_BODY, P3_BODY, U_BODY


def test_each_dialect_dates_the_payment_in_the_brand_zone(client, brand, compat_key):
    brand.timezone = "Asia/Dhaka"  # UTC+6
    db.session.commit()
    keys = {name: compat_key(name) for name in ("uddoktapay", "piprapay2", "piprapay3")}
    u = client.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: keys["uddoktapay"]})
    assert u.status_code == 200
    p2 = client.post("/api/create-charge", json=P2_BODY, headers={P2_HEADER: keys["piprapay2"]})
    p3 = client.post("/api/checkout/redirect", json=P3_BODY, headers={P3_HEADER: keys["piprapay3"]})
    invoice = db.session.execute(
        db.select(CompatPayment.external_id).where(CompatPayment.dialect == "uddoktapay")
    ).scalar_one()
    rows = [
        compat_row(invoice),
        compat_row(p2.get_json()["pp_id"]),
        compat_row(p3.get_json()["pp_id"]),
    ]
    with freeze_time("2026-01-05 20:30:00"):  # 02:30 on the 6th in Dhaka
        for row in rows:
            complete_payment(
                row.payment, provider="bkash", provider_trx_id="TZ" + row.external_id[-8:]
            )
    dates = [
        client.post(path, json=body, headers=headers).get_json()["date"]
        for path, body, headers in (
            ("/api/verify-payment", {"invoice_id": invoice}, {U_HEADER: keys["uddoktapay"]}),
            (
                "/api/verify-payments",
                {"pp_id": p2.get_json()["pp_id"]},
                {P2_HEADER: keys["piprapay2"]},
            ),
            (
                "/api/verify-payment",
                {"pp_id": p3.get_json()["pp_id"]},
                {P3_HEADER: keys["piprapay3"]},
            ),
        )
    ]
    assert dates == ["2026-01-06 02:30:00", "2026-01-06 02:30:00", "Jan 06, 2026 02:30 AM"]
