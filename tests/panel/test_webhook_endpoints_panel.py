"""Developers → Endpoints: owners and admins add endpoints (secret shown once), switch them off and
on, rotate and delete them, each action audited and CSRF-checked; an event is replayed from the
delivery log."""

import re

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.webhooks.endpoint_secrets import open_secret
from gateway.webhooks.endpoints import create_endpoint
from gateway.webhooks.models.endpoint import WebhookEndpoint
from gateway.webhooks.models.event import Event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.endpoint_support import deliver_all, endpoint_receivers  # noqa: F401 - fixture
from tests.factories import completed_payment
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
from tests.panel.conftest import audit_actions, panel_client, post_form, reloaded, sign_in

PAGE = "/panel/developers/webhook-endpoints"
SECRET = re.compile(r'<code id="endpoint-secret">([^<]+)</code>')


def endpoint_rows():
    db.session.expire_all()
    return (
        db.session.execute(db.select(WebhookEndpoint).order_by(WebhookEndpoint.id)).scalars().all()
    )


def test_adding_an_endpoint_shows_its_secret_once_and_is_audited(as_admin, brand, admin):
    response = post_form(
        as_admin,
        PAGE,
        {
            "url": "https://shop.example.com/hooks",
            "description": "Shop server",
            "enabled_events": ["payment.completed", "refund.completed"],
            "mode": "test",
        },
    )

    assert response.status_code == 200
    secret = SECRET.search(response.get_data(as_text=True)).group(1)
    [endpoint] = endpoint_rows()
    assert open_secret(endpoint.secret_sealed, endpoint.public_id) == secret
    assert (endpoint.url, endpoint.enabled_events, endpoint.livemode, endpoint.description) == (
        "https://shop.example.com/hooks",
        ["payment.completed", "refund.completed"],
        False,
        "Shop server",
    )
    assert audit_actions(brand)[-1] == ("webhook_endpoint.create", admin.email, endpoint.public_id)
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "webhook_endpoint.create")
    ).scalar_one()
    assert secret not in str(entry.details)
    page = as_admin.get(PAGE).get_data(as_text=True)
    assert endpoint.public_id in page and secret not in page


def test_a_bad_endpoint_is_refused_on_its_field(app, as_admin, monkeypatch):
    for data, message in (
        ({"url": "ftp://shop.example.com", "enabled_events": ["*"]}, "absolute http"),
        ({"url": "https://shop.example.com/hooks"}, "Choose at least one event."),
        (
            {"url": "https://shop.example.com/hooks", "enabled_events": ["payment.paid"]},
            "not a valid choice",
        ),
    ):
        response = post_form(as_admin, PAGE, {"mode": "live", **data})
        assert response.status_code == 422
        assert message in response.get_data(as_text=True)
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = post_form(
        as_admin, PAGE, {"mode": "live", "url": "http://10.0.0.5/hooks", "enabled_events": ["*"]}
    )
    assert response.status_code == 422
    assert 'id="url-error">The callback URL resolves to a private' in response.get_data(
        as_text=True
    )
    assert endpoint_rows() == []


def test_an_action_without_the_csrf_token_changes_nothing(as_admin, brand):
    response = as_admin.post(
        PAGE, data={"url": "https://shop.example.com/h", "enabled_events": "*"}
    )
    assert response.status_code in (400, 422)
    endpoint, _ = create_endpoint(brand, True, "https://shop.example.com/hooks", ["*"])
    as_admin.post(f"{PAGE}/{endpoint.public_id}/delete")
    assert [e.deleted_at for e in endpoint_rows()] == [None]


def test_switching_rotating_and_deleting_are_audited(as_admin, brand, admin):
    endpoint, first_secret = create_endpoint(brand, True, "https://shop.example.com/hooks", ["*"])
    base = f"{PAGE}/{endpoint.public_id}"

    assert post_form(as_admin, f"{base}/toggle").status_code == 302
    assert reloaded(endpoint).enabled is False
    post_form(as_admin, f"{base}/toggle")
    assert reloaded(endpoint).enabled is True
    rotated = post_form(as_admin, f"{base}/rotate")
    new_secret = SECRET.search(rotated.get_data(as_text=True)).group(1)
    db.session.refresh(endpoint)
    assert open_secret(endpoint.secret_sealed, endpoint.public_id) == new_secret != first_secret
    assert open_secret(endpoint.secret_previous_sealed, endpoint.public_id) == first_secret
    assert 'id="previous-secret-until"' in rotated.get_data(as_text=True)
    post_form(as_admin, f"{base}/delete")
    assert reloaded(endpoint).deleted_at is not None
    assert endpoint.public_id not in as_admin.get(PAGE).get_data(as_text=True)

    assert [a for a in audit_actions(brand) if a[0].startswith("webhook_endpoint.")] == [
        (action, admin.email, endpoint.public_id)
        for action in (
            "webhook_endpoint.disable",
            "webhook_endpoint.enable",
            "webhook_endpoint.rotate",
            "webhook_endpoint.delete",
        )
    ]
    assert post_form(as_admin, f"{base}/toggle").status_code == 404


def test_staff_may_not_manage_endpoints(as_staff, brand):
    endpoint, _ = create_endpoint(brand, True, "https://shop.example.com/hooks", ["*"])
    assert as_staff.get(PAGE).status_code == 403
    for action in ("toggle", "rotate", "delete"):
        assert post_form(as_staff, f"{PAGE}/{endpoint.public_id}/{action}").status_code == 403
    [row] = endpoint_rows()
    assert (row.enabled, row.deleted_at) == (True, None)


def test_the_delivery_page_replays_its_event_to_every_endpoint(
    as_staff, brand, staff, endpoint_receivers
):
    endpoint, endpoint_receiver = endpoint_receivers(["payment.completed"])
    completed_payment(brand=brand)
    deliver_all()
    [delivery] = db.session.execute(db.select(WebhookDelivery)).scalars()
    event = db.session.execute(db.select(Event)).scalar_one()

    page = as_staff.get(f"/panel/developers/webhook-deliveries/{delivery.id}")
    assert f"/panel/developers/events/{event.public_id}/redeliver" in page.get_data(as_text=True)
    assert endpoint.public_id in page.get_data(as_text=True)
    response = post_form(as_staff, f"/panel/developers/events/{event.public_id}/redeliver")

    assert response.status_code == 302
    deliver_all()
    assert [e["id"] for e in endpoint_receiver.events()] == [event.public_id, event.public_id]
    assert audit_actions(brand)[-1] == ("event.redeliver", staff.email, event.public_id)
    assert post_form(as_staff, "/panel/developers/events/evt_nope/redeliver").status_code == 404


def test_the_endpoints_page_speaks_bangla(app, brand, admin, tmp_path):
    create_endpoint(brand, False, "https://shop.example.com/hooks", ["payment.completed"])
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = panel_client(bangla)
        sign_in(client, admin)
        page = client.get(f"{PAGE}?lang=bn").get_data(as_text=True)
    finally:
        dispose(bangla)
    assert "একটি এন্ডপয়েন্ট যোগ করুন" in page and "টেস্ট" in page
    assert "Add an endpoint" not in page and "No endpoints yet" not in page
