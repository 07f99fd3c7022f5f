"""Issue 14, finding 2: a merchant's SMS template cannot stall a worker (catastrophic backtracking).

`(a+)+$` on a run of letters ending in `!` backtracks exponentially under Python's `re` (26 letters
took 18 s); templates now run on RE2, linear in the text, in the tester, at ingest and on the inbox
pages.
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gateway.domain_errors import ValidationFailed
from gateway.extensions import db
from gateway.sms.models.sms_template import SmsTemplate
from gateway.sms.templates import create_template, try_template
from tests.factories import UserFactory, ingest
from tests.panel.conftest import panel_client, post_form, sign_in

ROOT = Path(__file__).resolve().parents[2]
# Both groups ingest needs, around the classic exponential shape.
CATASTROPHIC = r"(?P<trx_id>(a+)+)$(?P<amount>[0-9]*)"
# 25 letters: about 4 s under re on this machine (twice that per extra two), microseconds under RE2.
SLOW_TEXT = "a" * 25 + "!"
QUICK = 1.5  # CPU seconds; far below what backtracking takes


def timed(call):
    """(result, CPU seconds of this thread) of a call: backtracking burns CPU, while the wait for a
    loaded machine's cores (other test passes, side by side) does not count. The test client runs
    the request in this thread."""
    started = time.thread_time()
    result = call()
    return result, time.thread_time() - started


def test_the_tester_service_is_linear_even_on_forty_letters():
    """Run in a child process with a deadline, so that before the fix the test fails instead of
    hanging.
    """
    code = (
        "from gateway.sms.templates import try_template\n"
        f"trial = try_template('bkash', {CATASTROPHIC!r}, {'a' * 40 + '!'!r})\n"
        "print('parsed', trial.parsed)\n"
    )
    try:
        finished = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the template tester was still backtracking after 20 s")
    assert finished.returncode == 0, finished.stderr
    assert "parsed None" in finished.stdout


def test_the_panel_tester_answers_a_catastrophic_pattern_at_once(app, brand):
    client = panel_client(app)
    assert sign_in(client, UserFactory(brand=brand, role="super_admin")).status_code == 302
    answer, seconds = timed(
        lambda: post_form(
            client,
            "/panel/sms-templates/test",
            {"provider": "bkash", "pattern": CATASTROPHIC, "sample": SLOW_TEXT},
        )
    )
    assert answer.status_code == 200
    assert seconds < QUICK


def test_ingest_and_the_inbox_page_run_a_saved_catastrophic_template_in_linear_time(
    app, brand, phone
):
    create_template(brand, "bkash", "Greedy", CATASTROPHIC)
    (result, sms), seconds = timed(lambda: ingest(phone, SLOW_TEXT, sender="ShopAlerts"))
    assert seconds < QUICK
    assert sms is not None and sms.status == "unparsed"
    client = panel_client(app)
    assert sign_in(client, UserFactory(brand=brand, role="super_admin")).status_code == 302
    for url in ("/panel/sms-inbox", f"/panel/sms-inbox/{sms.public_id}"):
        page, seconds = timed(lambda url=url: client.get(url))
        assert page.status_code == 200
        assert seconds < QUICK, url


def test_a_template_still_reads_its_named_groups_on_the_new_engine():
    trial = try_template(
        "bkash",
        r"Received Tk (?P<amount>[\d,.]+) from (?P<counterparty>\d{11})\. TrxID (?P<trx_id>\w+)",
        "Received Tk ৫০০.০০ from 01712345678. TrxID 9a7b6c5d4e at 10:00",
    )
    assert str(trial.parsed.amount) == "500.00"
    assert trial.parsed.trx_id == "9A7B6C5D4E"
    assert trial.parsed.counterparty == "01712345678"


@pytest.mark.parametrize(
    "pattern, says",
    [
        (r"(?P<amount>\d+)(?<=1)(?P<trx_id>\w+)", "look-arounds"),
        (r"(?P<amount>\d+)(?=x)(?P<trx_id>\w+)", "look-arounds"),
        (r"(?P<amount>(\d)\2)(?P<trx_id>\w+)", "back-references"),
        (r"(?P<amount>\d+)(?P<trx_id>\w+)(?P=amount)", "back-references"),
        (r"(?P<amount>(\d{1000}){1000})(?P<trx_id>\w+)", "too large"),
    ],
)
def test_a_pattern_the_safe_engine_refuses_is_a_form_error_at_save_time(brand, pattern, says):
    with pytest.raises(ValidationFailed) as refused:
        create_template(brand, "bkash", "Refused", pattern)
    assert refused.value.errors[0]["field"] == "pattern"
    assert says in refused.value.errors[0]["message"]
    assert db.session.execute(db.select(SmsTemplate)).first() is None


def test_the_panel_shows_the_refusal_on_the_pattern_field(app, brand):
    client = panel_client(app)
    assert sign_in(client, UserFactory(brand=brand, role="super_admin")).status_code == 302
    answer = post_form(
        client,
        "/panel/sms-templates",
        {
            "provider": "bkash",
            "name": "Look-behind",
            "pattern": r"(?P<amount>\d+)(?<=1)(?P<trx_id>\w+)",
        },
    )
    assert answer.status_code == 422
    assert "look-arounds" in answer.get_data(as_text=True)
