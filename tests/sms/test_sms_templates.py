"""A brand's SMS templates without HTTP: saving checks the pattern, the tester reads a sample as
ingest would.
"""

from decimal import Decimal

import pytest

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.sms.ingest import ingest_batch
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.sms_template import SmsTemplate
from gateway.sms.templates import (
    create_template,
    delete_template,
    get_template,
    list_templates,
    set_template_enabled,
    try_template,
)
from tests.factories import bkash_text, paired_device, sms_message

PATTERN = (
    r"Tk (?P<amount>[\d,.]+) reached your wallet from (?P<counterparty>\d+)\. Ref (?P<trx_id>\w+)"
)
SAMPLE = "Dear customer, Tk 1,250.50 reached your wallet from 01712345678. Ref QX77PL12 thanks"


@pytest.mark.parametrize(
    "mode, status, reason",
    # The pattern reads no balance: strict mode holds the credit (docs/sms-trust.md), lenient lets
    # it wait for its claim, flagged.
    [("lenient", "unmatched", None), ("strict", "review", "no balance printed")],
)
def test_a_saved_template_reads_the_next_text_of_its_format_as_a_credit(
    brand, mode, status, reason
):
    brand.sms_chain_mode = mode
    db.session.commit()
    create_template(brand, "bkash", "bKash wallet notice", PATTERN)
    device, _, aes_key = paired_device(brand)
    ingest_batch(device, [sms_message(aes_key, SAMPLE, sender="bKash")])
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert (sms.status, sms.amount, sms.provider_trx_id, sms.review_reason) == (
        status,
        Decimal("1250.50"),
        "QX77PL12",
        reason,
    )


@pytest.mark.parametrize(
    "pattern, says",
    [
        ("(?P<amount>[0-9]+", "not a valid regular expression"),
        (r"Tk (?P<amount>\d+)", "needs the named group(s) trx_id"),
        (r"(?P<amount>\d+) (?P<trx_id>\w+) (?P<shop>\w+)", "unknown group(s) shop"),
        ("   ", "non-empty"),
    ],
)
def test_a_pattern_ingest_could_not_use_is_refused_on_the_pattern_field(brand, pattern, says):
    with pytest.raises(DomainError) as refused:
        create_template(brand, "bkash", "Broken", pattern)
    assert refused.value.errors[0]["field"] == "pattern" and says in refused.value.message
    assert list_templates(brand) == []


def test_names_are_unique_per_brand_and_providers_are_the_wallets(brand, other_brand):
    create_template(brand, "bkash", "Notice", PATTERN)
    create_template(other_brand, "bkash", "Notice", PATTERN)
    with pytest.raises(DomainError) as taken:
        create_template(brand, "nagad", "Notice", PATTERN)
    assert (http_status(taken.value), taken.value.errors[0]["field"]) == (409, "name")
    with pytest.raises(DomainError) as unknown:
        create_template(brand, "paypal", "Other", PATTERN)
    assert unknown.value.errors[0]["field"] == "provider"


def test_a_switched_off_template_is_skipped_and_another_brands_is_not_found(brand, other_brand):
    template = create_template(brand, "bkash", "Notice", PATTERN)
    assert set_template_enabled(template, False) is True
    assert set_template_enabled(template, False) is False
    device, _, aes_key = paired_device(brand)
    ingest_batch(device, [sms_message(aes_key, SAMPLE, sender="bKash")])
    assert db.session.execute(db.select(InboundSms.status)).scalar_one() == "unparsed"
    theirs = create_template(other_brand, "bkash", "Theirs", PATTERN)
    with pytest.raises(DomainError):
        get_template(brand, theirs.id)
    delete_template(template)
    assert db.session.execute(db.select(SmsTemplate.name)).scalars().all() == ["Theirs"]


def test_the_tester_reads_the_fields_and_says_the_providers_sender_is_trusted():
    trial = try_template("bkash", PATTERN, SAMPLE)
    assert trial.used and trial.trusted
    assert (trial.parsed.amount, trial.parsed.trx_key, trial.parsed.counterparty) == (
        Decimal("1250.50"),
        "QX77PL12",
        "01712345678",
    )


def test_the_tester_warns_that_a_personal_number_cannot_send_a_payment():
    trial = try_template("bkash", PATTERN, SAMPLE, sender="+8801712345678")
    assert trial.parsed is not None and not trial.trusted


def test_the_tester_says_when_the_pattern_does_not_match():
    assert try_template("nagad", PATTERN, "Your OTP is 123456").parsed is None


def test_the_tester_says_when_the_built_in_parsers_already_read_the_text():
    trial = try_template(
        "bkash", r"received Tk (?P<amount>[\d,.]+).*TrxID (?P<trx_id>\w+)", bkash_text()
    )
    assert not trial.used and trial.builtin.kind == "receive"


@pytest.mark.parametrize("sample", ["", "   ", "x" * 2001])
def test_the_tester_needs_a_sample(sample):
    with pytest.raises(DomainError) as refused:
        try_template("bkash", PATTERN, sample)
    assert refused.value.errors[0]["field"] == "sample"
