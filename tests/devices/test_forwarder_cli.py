"""`flask gateway add-forwarder|list-forwarders|revoke-forwarder`: what they print, and that what
they print works against the intake URL."""

import re

import pytest

from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import bkash_text
from tests.forwarder_apps import signed, sms_received_event, sms_to_url_body, sms_to_url_headers

URL = re.compile(r"^url: (https?://\S+/api/forwarders/([0-9a-f-]{36})/sms)$")


def invoke(runner, *args):
    return runner.invoke(args=["gateway", *args])


@pytest.fixture
def bootstrapped(runner):
    result = invoke(runner, "bootstrap")
    assert result.exit_code == 0, result.output


def lines(result):
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()


def path_of(url):
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def stored_count():
    return db.session.scalar(db.select(db.func.count()).select_from(InboundSms))


def test_add_forwarder_for_sms_gateway_prints_a_url_and_a_key_that_work(
    runner, client, app, bootstrapped
):
    url_line, key_line = lines(
        invoke(runner, "add-forwarder", "--app", "android-sms-gateway", "--label", "Counter")
    )

    url, _ = URL.match(url_line).groups()
    assert url.startswith(app.config["BASE_URL"] + "/api/forwarders/")
    key = key_line.removeprefix("signing_key: ")
    assert key_line.startswith("signing_key: ") and len(key) >= 12
    body, headers = signed(sms_received_event(bkash_text()), key)
    answer = client.post(path_of(url), data=body, headers=headers)
    assert answer.status_code == 200 and answer.get_json()["data"]["status"] == "accepted"
    assert stored_count() == 1


def test_add_forwarder_takes_the_merchants_own_signing_key(runner, client, bootstrapped):
    result = invoke(
        runner,
        "add-forwarder",
        "--app",
        "android-sms-gateway",
        "--label",
        "Spare",
        "--signing-key",
        "my-own-signing-key",
    )
    url_line, key_line = lines(result)
    assert key_line == "signing_key: my-own-signing-key"
    body, headers = signed(sms_received_event(bkash_text()), "my-own-signing-key")
    answer = client.post(path_of(URL.match(url_line).group(1)), data=body, headers=headers)
    assert answer.status_code == 200


def test_add_forwarder_for_sms_to_url_prints_a_url_and_a_header_that_work(
    runner, client, bootstrapped
):
    url_line, header_line = lines(
        invoke(runner, "add-forwarder", "--app", "sms-to-url", "--label", "Till")
    )

    url, _ = URL.match(url_line).groups()
    assert re.fullmatch(r"header: X-Forwarder-Secret: [A-Za-z0-9_-]{40,}", header_line)
    header = header_line.removeprefix("header: ")
    answer = client.post(
        path_of(url), data=sms_to_url_body(bkash_text()), headers=sms_to_url_headers(header)
    )
    assert answer.status_code == 200 and answer.get_json()["data"]["status"] == "accepted"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--app", "android-sms-gateway", "--label", "X", "--signing-key", "elevenchars"], "12"),
        (["--app", "sms-to-url", "--label", "X", "--signing-key", "a-long-signing-key"], "header"),
        (["--app", "sms-to-url", "--label", "   "], "name"),
        (["--app", "ownpay-console", "--label", "X"], "ownpay-console"),
    ],
)
def test_add_forwarder_refuses_what_would_not_work(runner, bootstrapped, args, message):
    result = invoke(runner, "add-forwarder", *args)

    assert result.exit_code != 0 and message in result.output
    assert lines(invoke(runner, "list-forwarders")) == []


def test_list_and_revoke_forwarders(runner, client, bootstrapped):
    first_url, key_line = lines(
        invoke(runner, "add-forwarder", "--app", "android-sms-gateway", "--label", "Counter")
    )
    second_url, _ = lines(invoke(runner, "add-forwarder", "--app", "sms-to-url", "--label", "Till"))
    url, forwarder_id = URL.match(first_url).groups()

    listed = [line.split("\t") for line in lines(invoke(runner, "list-forwarders"))]
    assert [row[1:3] for row in listed] == [
        ["sms-to-url", "Till"],
        ["android-sms-gateway", "Counter"],
    ]
    assert listed[1][0] == forwarder_id and listed[1][5] == url
    assert listed[1][3:5] == ["-", "-"]

    revoked = lines(invoke(runner, "revoke-forwarder", forwarder_id))
    assert revoked == [f"Revoked forwarder 'Counter' ({forwarder_id})."]
    remaining = [line.split("\t")[2] for line in lines(invoke(runner, "list-forwarders"))]
    assert remaining == ["Till"]
    body, headers = signed(sms_received_event(bkash_text()), key_line.removeprefix("signing_key: "))
    answer = client.post(path_of(url), data=body, headers=headers)
    assert answer.status_code == 401 and answer.get_json()["code"] == "FORWARDER_REVOKED"
    assert stored_count() == 0

    unknown = invoke(runner, "revoke-forwarder", "00000000-0000-4000-8000-000000000000")
    assert unknown.exit_code != 0 and "No such forwarder" in unknown.output


def test_list_forwarders_shows_the_last_text(runner, client, bootstrapped):
    url_line, key_line = lines(
        invoke(runner, "add-forwarder", "--app", "android-sms-gateway", "--label", "Counter")
    )
    body, headers = signed(sms_received_event(bkash_text()), key_line.removeprefix("signing_key: "))
    client.post(path_of(URL.match(url_line).group(1)), data=body, headers=headers)

    [row] = [line.split("\t") for line in lines(invoke(runner, "list-forwarders"))]
    assert row[3] != "-" and row[4] == "-"
