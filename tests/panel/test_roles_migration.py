"""Revision 0007 (roles): super-administrators become owners, staff stay staff, nobody gains or
loses access.
"""

import logging.config
from pathlib import Path

import pytest
from flask_migrate import upgrade
from sqlalchemy import text

from gateway import create_app
from gateway.extensions import db

MIGRATIONS = str(Path(__file__).resolve().parents[2] / "migrations")
ROLES = text("SELECT email, role, active FROM users ORDER BY email")


@pytest.fixture(autouse=True)
def keep_test_logging(monkeypatch):
    """migrations/env.py loads alembic.ini's logging setup, which would close pytest's log
    handlers."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


@pytest.fixture
def migrated_app(tmp_path):
    """An app on a fresh SQLite file, for running the migrations by hand."""
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'roles.sqlite3'}",
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
        }
    )
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


def test_existing_users_keep_what_they_could_do(migrated_app):
    upgrade(directory=MIGRATIONS, revision="0005")
    with db.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO brands (id, name, slug, primary_color, timezone, currencies,"
                " webhook_secret, receipt_sms_enabled, created_at) VALUES (1, 'Shop', 'shop',"
                " '#0f766e', 'Asia/Dhaka', 'BDT', 'whsec_x', false, '2026-01-01 00:00:00')"
            )
        )
        for email, role in (("boss@shop.test", "super_admin"), ("clerk@shop.test", "staff")):
            connection.execute(
                text(
                    "INSERT INTO users (brand_id, email, password_hash, role, active, created_at)"
                    " VALUES (1, :email, 'x', :role, true, '2026-01-01 00:00:00')"
                ),
                {"email": email, "role": role},
            )
    upgrade(directory=MIGRATIONS)
    with db.engine.connect() as connection:
        assert connection.execute(ROLES).all() == [
            ("boss@shop.test", "owner", True),
            ("clerk@shop.test", "staff", True),
        ]
        versions = connection.execute(text("SELECT session_version FROM users")).scalars().all()
        assert versions == [0, 0]
        brand = connection.execute(
            text("SELECT require_two_factor, staff_refund_limit FROM brands")
        ).one()
        assert tuple(brand) == (False, None)
