"""Panel fixtures: users of the test brand, signed in through the real form, and a CSRF-aware
poster.
"""

import re

import pytest
from flask.testing import FlaskClient

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from tests.factories import UserFactory

PASSWORD = "correct horse battery"
TOKEN = re.compile(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"')


def csrf_token(client, url="/panel/account/password"):
    """A CSRF token of the client's session, read from a page as a browser would."""
    page = client.get(url)
    match = TOKEN.search(page.get_data(as_text=True))
    assert match, f"no CSRF token on {url} ({page.status_code})"
    return match.group(1)


def sign_in(client, user, password=PASSWORD):
    """Sign in through the sign-in form; returns the response."""
    token = csrf_token(client, "/panel/sign-in")
    return client.post(
        "/panel/sign-in", data={"email": user.email, "password": password, "csrf_token": token}
    )


def post_form(client, url, data=None, follow_redirects=False):
    """POST a panel form with a valid CSRF token, as the page's own form would."""
    return client.post(
        url,
        data={**(data or {}), "csrf_token": csrf_token(client)},
        follow_redirects=follow_redirects,
    )


def audit_actions(brand):
    """The audit log of a brand as (action, user e-mail, target id) tuples, oldest first."""
    return [
        (entry.action, entry.user_email, entry.target_id)
        for entry in db.session.execute(
            db.select(AuditLog).where(AuditLog.brand_id == brand.id).order_by(AuditLog.id)
        ).scalars()
    ]


class PanelClient(FlaskClient):
    """A test client whose every request runs in its own application context, as in production.

    The suite keeps one context open per test; without this, `g` (Flask-Login's loaded user,
    Flask-WTF's token) and the database session would carry over from one request to the next.
    """

    def open(self, *args, **kwargs):
        with self.application.app_context():
            return super().open(*args, **kwargs)


def reloaded(row):
    """A row as the database holds it now (requests write through their own session)."""
    db.session.refresh(row)
    return row


def panel_client(app):
    """A fresh browser-like client of an app (see PanelClient)."""
    return PanelClient(app, app.response_class, use_cookies=True)


@pytest.fixture
def client(app):
    """The panel's test client."""
    return panel_client(app)


@pytest.fixture
def admin(brand):
    """The brand's super-administrator."""
    return UserFactory(brand=brand, role="super_admin", email="owner@shop.test", name="Owner")


@pytest.fixture
def staff(brand):
    """A staff member of the brand."""
    return UserFactory(brand=brand, role="staff", email="clerk@shop.test", name="Clerk")


@pytest.fixture
def as_admin(client, admin):
    """A client signed in as the super-administrator."""
    assert sign_in(client, admin).status_code == 302
    return client


@pytest.fixture
def as_staff(client, staff):
    """A client signed in as staff."""
    assert sign_in(client, staff).status_code == 302
    return client
