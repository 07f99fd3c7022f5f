"""`flask gateway create-compat-key|list-compat-keys|revoke-compat-key`."""

from gateway.compat.models.compat import CompatKey
from gateway.extensions import db
from tests.compat.conftest import P2_HEADER
from tests.compat.test_compat_errors import P2_BODY


def invoke(runner, *args):
    return runner.invoke(args=["gateway", *args])


def test_a_key_made_on_the_command_line_works_until_revoked(runner, client, brand):
    made = invoke(runner, "create-compat-key", "--dialect", "piprapay2", "--label", "smm-panel")
    assert made.exit_code == 0, made.output
    secret = made.output.strip().splitlines()[-1]
    assert "IPN sends this key to your own server" in made.output
    assert (
        client.post("/api/create-charge", json=P2_BODY, headers={P2_HEADER: secret}).status_code
        == 200
    )
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    listed = invoke(runner, "list-compat-keys")
    assert f"{key.id}\tpiprapay2\tsmm-panel\t{key.display_prefix}…\tactive" in listed.output
    assert secret not in listed.output
    assert invoke(runner, "revoke-compat-key", str(key.id)).exit_code == 0
    assert (
        client.post("/api/create-charge", json=P2_BODY, headers={P2_HEADER: secret}).status_code
        == 400
    )


def test_an_unknown_dialect_or_key_is_refused(runner, brand):
    assert invoke(runner, "create-compat-key", "--dialect", "stripe", "--label", "x").exit_code == 2
    gone = invoke(runner, "revoke-compat-key", "999")
    assert gone.exit_code != 0 and "No active compatibility key" in gone.output
