"""CSV exports: row by row, in the brand's time zone, bounded by local days, safe in a
spreadsheet."""

import csv
import io
from datetime import datetime, timezone
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.reports import exports
from tests.factories import PaymentFactory, completed_payment
from tests.links.support import make_link, submit_link
from tests.panel.conftest import as_staff, sign_in, staff  # noqa: F401 - fixtures

UTC = timezone.utc
PAYMENT_HEADER = (
    "payment_id,created_at,completed_at,status,reference,amount,amount_refunded,currency,"
    "provider,provider_trx_id,trx_id,customer_name,customer_email,customer_phone,payment_link,"
    "fee,amount_paid,amount_bdt,exchange_rate"
).split(",")


def rows_of(response):
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.mimetype == "text/csv"
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


def at(*parts):
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture
def january(brand):
    """Payments around the edges of January 2025 in Dhaka (UTC+6)."""
    made = {
        "before": PaymentFactory(
            brand=brand, reference="BEFORE", created_at=at(2024, 12, 31, 17, 59, 59)
        ),
        "first": PaymentFactory(
            brand=brand, reference="FIRST", created_at=at(2024, 12, 31, 18, 0, 0)
        ),
        "last": PaymentFactory(
            brand=brand, reference="LAST", created_at=at(2025, 1, 31, 17, 59, 59)
        ),
        "after": PaymentFactory(
            brand=brand, reference="AFTER", created_at=at(2025, 1, 31, 18, 0, 0)
        ),
    }
    return made


def test_payments_csv_has_one_row_per_payment_in_the_local_day_range(client, auth, january):
    response = client.get(
        "/api/v1/exports/payments.csv?from=2025-01-01&to=2025-01-31", headers=auth
    )

    header, *rows = rows_of(response)
    assert header == PAYMENT_HEADER
    assert response.headers["Content-Disposition"] == (
        'attachment; filename="test-shop-payments-2025-01-01-to-2025-01-31.csv"'
    )
    first, last = january["first"], january["last"]
    assert rows == [
        [
            first.public_id,
            "2025-01-01T00:00:00+06:00",
            "",
            "created",
            "FIRST",
            "500.00",
            "0.00",
            "BDT",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "0.00",
            "500.00",
            "500.00",
            "",  # amount_bdt, exchange_rate: a payment in taka
        ],
        [
            last.public_id,
            "2025-01-31T23:59:59+06:00",
            "",
            "created",
            "LAST",
            "500.00",
            "0.00",
            "BDT",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "0.00",
            "500.00",
            "500.00",
            "",  # amount_bdt, exchange_rate: a payment in taka
        ],
    ]


def test_the_brands_own_time_zone_moves_the_day_boundaries(client, auth, brand, january):
    brand.timezone = "UTC"
    db.session.commit()

    _, *rows = rows_of(
        client.get("/api/v1/exports/payments.csv?from=2025-01-31&to=2025-01-31", headers=auth)
    )

    assert [(row[4], row[1]) for row in rows] == [
        ("LAST", "2025-01-31T17:59:59+00:00"),
        ("AFTER", "2025-01-31T18:00:00+00:00"),
    ]


def test_open_ranges_and_another_brands_rows(client, auth, brand, other_brand, january):
    PaymentFactory(brand=other_brand, reference="NOT-YOURS", created_at=at(2025, 1, 10))

    _, *everything = rows_of(client.get("/api/v1/exports/payments.csv", headers=auth))
    _, *from_feb = rows_of(client.get("/api/v1/exports/payments.csv?from=2025-02-01", headers=auth))
    _, *to_dec = rows_of(client.get("/api/v1/exports/payments.csv?to=2024-12-31", headers=auth))

    assert [row[4] for row in everything] == ["BEFORE", "FIRST", "LAST", "AFTER"]
    assert [row[4] for row in from_feb] == ["AFTER"]
    assert [row[4] for row in to_dec] == ["BEFORE"]


def test_a_completed_refunded_link_payment_fills_every_column(client, auth, brand):
    link = make_link(brand, slug="eid-hamper", custom_fields=[{"kind": "name"}, {"kind": "phone"}])
    with freeze_time("2025-03-10 04:00:00"):
        submit_link(client, link, name="Rahim", phone="01712345678")
    from gateway.links.models.link import LinkPayment
    from gateway.payments.amounts import charge_fee
    from gateway.payments.lifecycle import complete_payment

    payment = db.session.execute(db.select(LinkPayment)).scalar_one().payment
    charge_fee(payment, Decimal("9.25"))  # the method the customer chose adds a fee
    db.session.commit()
    with freeze_time("2025-03-10 05:30:00"):
        complete_payment(payment, provider="bkash", provider_trx_id="9A7B6C5D4E")
    with freeze_time("2025-03-11 19:00:00"):
        refund = create_refund(brand, payment.transaction.trx_id, Decimal("200.00"), "=1+1 broken")

    _, row = rows_of(client.get("/api/v1/exports/payments.csv", headers=auth))
    assert row == [
        payment.public_id,
        "2025-03-10T10:00:00+06:00",
        "2025-03-10T11:30:00+06:00",
        "partially_refunded",
        "eid-hamper",
        "500.00",
        "200.00",
        "BDT",
        "bkash",
        "9A7B6C5D4E",
        payment.transaction.trx_id,
        "Rahim",
        "",
        "'+8801712345678",
        "eid-hamper",
        "9.25",
        "509.25",
        "500.00",
        "",  # amount_bdt, exchange_rate: a payment in taka
    ]
    _, refund_row = rows_of(
        client.get("/api/v1/exports/refunds.csv?from=2025-03-12&to=2025-03-12", headers=auth)
    )
    assert refund_row == [
        str(refund.id),
        "2025-03-12T01:00:00+06:00",
        payment.transaction.trx_id,
        payment.public_id,
        "eid-hamper",
        "200.00",
        "BDT",
        "'=1+1 broken",
        "completed",
    ]
    _, *none = rows_of(client.get("/api/v1/exports/refunds.csv?to=2025-03-11", headers=auth))
    assert none == []


@pytest.mark.parametrize(
    "typed, written",
    [
        ('=HYPERLINK("http://evil")', '\'=HYPERLINK("http://evil")'),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\t=1", "'\t=1"),
        ('Plain, "quoted"\nnext line', 'Plain, "quoted"\nnext line'),
        ("a=b", "a=b"),
    ],
)
def test_cells_a_spreadsheet_would_run_are_quoted(client, auth, brand, typed, written):
    PaymentFactory(brand=brand, reference="R", customer_name=typed)

    _, row = rows_of(client.get("/api/v1/exports/payments.csv", headers=auth))

    assert row[PAYMENT_HEADER.index("customer_name")] == written


def test_the_export_is_streamed_in_batches(client, auth, brand, monkeypatch):
    monkeypatch.setattr(exports, "BATCH", 2)
    for n in range(5):
        PaymentFactory(brand=brand, reference=f"R{n}", created_at=at(2025, 1, 1, 0, n))

    response = client.get("/api/v1/exports/payments.csv", headers=auth, buffered=False)

    assert response.is_streamed
    chunks = list(response.iter_encoded())
    assert len(chunks) == 3  # header and rows 1-2, rows 3-4, row 5
    assert b"".join(chunks).decode().count("\r\n") == 6


@pytest.mark.parametrize(
    "query, field",
    [
        ("from=2025-13-01", "from"),
        ("to=yesterday", "to"),
        ("from=2025-02-01&to=2025-01-01", "to"),
        ("from=2000-01-01&to=2030-01-01", "to"),
    ],
)
def test_a_bad_range_is_a_422_in_the_envelope(client, auth, query, field):
    response = client.get(f"/api/v1/exports/payments.csv?{query}", headers=auth)
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "VALIDATION_ERROR"
    assert field in {item["field"] for item in body["errors"]}


def test_exports_need_a_key_with_read(client, brand, make_key):
    assert client.get("/api/v1/exports/refunds.csv").status_code == 401
    assert (
        client.get("/api/v1/exports/refunds.csv", headers=make_key(brand, ["write"])).status_code
        == 403
    )


def test_the_panel_downloads_the_same_rows_for_its_date_range(app, brand, staff, january):
    from tests.panel.conftest import panel_client

    browser = panel_client(app)
    sign_in(browser, staff)

    page = browser.get("/panel/reports")
    assert page.status_code == 200
    assert "Asia/Dhaka" in page.get_data(as_text=True)
    _, *rows = rows_of(
        browser.get("/panel/reports/payments.csv?date_from=2025-01-01&date_to=2025-01-31")
    )
    assert [(row[4], row[1]) for row in rows] == [
        ("FIRST", "2025-01-01T00:00:00+06:00"),
        ("LAST", "2025-01-31T23:59:59+06:00"),
    ]
    assert (
        browser.get(
            "/panel/reports/payments.csv?date_from=2025-02-01&date_to=2025-01-01"
        ).status_code
        == 422
    )
    assert browser.get("/panel/reports/invoices-nope.csv").status_code == 404
    signed_out = panel_client(app).get("/panel/reports/payments.csv")
    assert signed_out.status_code == 302


def test_invoices_csv_lists_each_invoice_of_the_range_with_its_totals_in_local_time(
    client, auth, brand
):
    from tests.invoices.conftest import an_invoice

    with freeze_time("2025-01-31 17:59:59"):  # 23:59:59 on 31 January in Dhaka
        inside = an_invoice(brand)
    with freeze_time("2025-01-31 18:00:00"):  # already 1 February in Dhaka
        an_invoice(brand)

    response = client.get(
        "/api/v1/exports/invoices.csv?from=2025-01-01&to=2025-01-31", headers=auth
    )

    header, *rows = rows_of(response)
    assert header == exports.INVOICE_HEADER
    assert rows == [
        [
            inside.public_id,
            inside.number_text,
            "2025-01-31T23:59:59+06:00",
            "2026-12-31",
            "draft",
            "রহিম উদ্দিন",
            "rahim@example.com",
            "'+8801712345678",
            "BDT",
            f"{inside.subtotal:.2f}",
            "100.00",
            "15.00",
            f"{inside.vat_amount:.2f}",
            f"{inside.total:.2f}",
            "",
            "",
            "",
        ]
    ]
    assert Decimal(rows[0][13]) == Decimal(rows[0][9]) - Decimal("100.00") + Decimal(rows[0][12])
