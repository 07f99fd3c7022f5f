"""Revision 0014 (chain wallets): existing chains keep their texts following; a number one phone
named becomes that number's chain, others stay their phone's."""

import logging.config
from pathlib import Path

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import text

from gateway import create_app
from gateway.extensions import db
from tests.test_migrations import POSTGRES_URL, postgres_schemas, schema_options  # noqa: F401

MIGRATIONS = str(Path(__file__).resolve().parents[2] / "migrations")
CHAINS = text("SELECT id, wallet, device_id, receiving_number FROM sms_balance_chains ORDER BY id")


@pytest.fixture(autouse=True)
def keep_test_logging(monkeypatch):
    """migrations/env.py loads alembic.ini's logging setup, which would close pytest's log
    handlers."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


@pytest.fixture(params=["sqlite", "postgres"])
def migrated_app(request, tmp_path):
    """An app on a fresh database of each engine, for running the migrations by hand."""
    if request.param == "sqlite":
        url, options = f"sqlite:///{tmp_path / 'chains.sqlite3'}", {}
    else:
        url, options = POSTGRES_URL, schema_options(request.getfixturevalue("postgres_schemas")())
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": url,
            "SQLALCHEMY_ENGINE_OPTIONS": options,
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
        }
    )
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


def test_existing_chains_become_wallets_and_keep_their_links(migrated_app):
    upgrade(directory=MIGRATIONS, revision="0013")
    with db.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO brands (id, name, slug, primary_color, timezone, currencies,"
                " webhook_secret, receipt_sms_enabled, created_at) VALUES (1, 'Shop', 'shop',"
                " '#0f766e', 'Asia/Dhaka', 'BDT', 'whsec_x', false, '2026-01-01 00:00:00')"
            )
        )
        for device in (1, 2):
            connection.execute(
                text(
                    "INSERT INTO devices (id, brand_id, uuid, device_id, name, aes_key_sealed,"
                    " created_at) VALUES (:id, 1, :uuid, :device, 'Phone', 'x',"
                    " '2026-01-01 00:00:00')"
                ),
                {"id": device, "uuid": f"uuid-{device}", "device": f"device-{device}"},
            )
        chains = [
            (1, 1, "bkash", ""),  # a phone that names no number: stays the phone's
            (2, 1, "nagad", "01711000001"),  # a number only this phone named: the number's
            (3, 1, "bkash", "01811000002"),  # a number two phones named: each stays its phone's
            (4, 2, "bkash", "01811000002"),
        ]
        for chain_id, device, provider, number in chains:
            connection.execute(
                text(
                    "INSERT INTO sms_balance_chains (id, brand_id, device_id, provider,"
                    " receiving_number, balance, anchor_followed, version, updated_at) VALUES"
                    " (:id, 1, :device, :provider, :number, 150000, false, 1,"
                    " '2026-01-01 00:00:00')"
                ),
                {"id": chain_id, "device": device, "provider": provider, "number": number},
            )
        # One stored text linked into each chain: rebuilding the tables must keep every link.
        for chain_id, *_ in chains:
            connection.execute(
                text(
                    "INSERT INTO inbound_sms (id, public_id, brand_id, sender, body, content_hash,"
                    " incoming, status, created_at) VALUES (:id, :public_id, 1, 'bKash', 'x',"
                    " :hash, true, 'matched', '2026-01-01 00:00:00')"
                ),
                {"id": chain_id, "public_id": f"sms-{chain_id}", "hash": f"hash-{chain_id}"},
            )
            connection.execute(
                text(
                    "INSERT INTO sms_balance_links (chain_id, sms_id, printed_at, before, after,"
                    " status, followed, held, created_at) VALUES (:id, :id,"
                    " '2026-01-01 00:00:00', 100000, 150000, 'start', false, false,"
                    " '2026-01-01 00:00:00')"
                ),
                {"id": chain_id},
            )

    upgrade(directory=MIGRATIONS)

    with db.engine.connect() as connection:
        assert connection.execute(CHAINS).all() == [
            (1, "phone:1", 1, ""),
            (2, "number:01711000001", None, "01711000001"),
            (3, "phone:1:01811000002", 1, "01811000002"),
            (4, "phone:2:01811000002", 2, "01811000002"),
        ]
        shared = connection.execute(text("SELECT sms_shared_wallets FROM brands")).scalar_one()
        assert shared in (False, 0)
        links = text("SELECT chain_id, sms_id, before, after FROM sms_balance_links ORDER BY id")
        assert connection.execute(links).all() == [(n, n, 100000, 150000) for n in (1, 2, 3, 4)]

    downgrade(directory=MIGRATIONS, revision="0013")
    with db.engine.connect() as connection:
        kept = connection.execute(
            text("SELECT id, device_id, receiving_number FROM sms_balance_chains ORDER BY id")
        ).all()
        links = connection.execute(text("SELECT chain_id FROM sms_balance_links ORDER BY id"))
        assert links.scalars().all() == [1, 3, 4]
    assert kept == [(1, 1, ""), (3, 1, "01811000002"), (4, 2, "01811000002")]
