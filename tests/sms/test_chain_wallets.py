"""Several phones: a text two forwarders carry is stored and counted once, and a wallet's chain is
the wallet's, not the phone's (a named number across phones, or the brand's shared wallets)."""

import json
from decimal import Decimal

import pytest

from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.sms.balance_chain import link_of, set_chain_mode, set_starting_balance
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from gateway.sms.models.balance_chain import BalanceChain, BalanceLink
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import PaymentFactory, paired_device, reload, sms_message
from tests.sms.test_balance_chain import HOUR, credit, race, send_money


@pytest.fixture
def phones(brand):
    """Two paired devices of the brand: (device, aes_key) each."""
    first, _, first_key = paired_device(brand, name="Counter phone")
    spare, _, spare_key = paired_device(brand, name="Spare phone")
    return (first, first_key), (spare, spare_key)


def send(phone, text, receiver=None, sender="bKash"):
    """One text through the companion API's ingestion, with the number it arrived on when given;
    (result, stored row)."""
    device, aes_key = phone
    payload = json.dumps({"body": text, "receiver": receiver}) if receiver else text
    [result] = ingest_batch(
        db.session.get(Device, device.id), [sms_message(aes_key, payload, sender=sender)]
    )
    sms = db.session.execute(
        db.select(InboundSms).where(InboundSms.public_id == result["server_ref"])
    ).scalar_one()
    return result, sms


def statuses():
    return list(
        db.session.execute(db.select(BalanceLink.status).order_by(BalanceLink.id)).scalars()
    )


def chains():
    return db.session.execute(
        db.select(BalanceChain.wallet, BalanceChain.balance).order_by(BalanceChain.id)
    ).all()


def test_the_same_text_through_two_forwarders_is_stored_chained_and_counted_once(brand, phones):
    counter, spare = phones
    payment = submit_claim(PaymentFactory(brand=brand, amount=Decimal("500.00")), "bkash", "AAAA01")
    text = credit("500.00", "AAAA01", "1500.00", 0)

    first, sms = send(counter, text)
    again, copy = send(spare, text)

    assert (first["status"], again["status"]) == ("accepted", "duplicate")
    assert again["server_ref"] == first["server_ref"] and copy.id == sms.id
    assert db.session.execute(db.select(db.func.count(InboundSms.id))).scalar_one() == 1
    assert statuses() == ["start"]
    assert (reload(payment).status, reload(sms).payment_id) == ("completed", payment.id)


def test_the_same_text_through_two_forwarders_at_once_is_stored_once(app, brand, phones):
    counter, spare = phones
    text = credit("500.00", "AAAA01", "1500.00", 0)
    messages = [(phone[0].id, sms_message(phone[1], text)) for phone in (counter, spare)]

    def ingest(device_id, message):
        return lambda: ingest_batch(db.session.get(Device, device_id), [message])

    results = race(app, [ingest(*pair) for pair in messages])

    assert sorted(result[0]["status"] for result in results) == ["accepted", "duplicate"]
    assert db.session.execute(db.select(db.func.count(InboundSms.id))).scalar_one() == 1
    assert statuses() == ["start"]


def test_two_phones_carrying_one_named_wallet_keep_one_chain(brand, phones):
    counter, spare = phones
    number = "01711000001"
    payment = submit_claim(PaymentFactory(brand=brand, amount=Decimal("100.00")), "bkash", "DDDD04")

    # Each text reaches only one of the phones, alternately: no false break between them.
    send(counter, credit("500.00", "AAAA01", "1500.00", 0), number)
    send(spare, credit("200.00", "BBBB02", "1700.00", 5), "+880 1711-000001")
    send(counter, send_money("510.00", "5.00", "1185.00", "CCCC03", 7), number)
    _, last = send(spare, credit("100.00", "DDDD04", "1285.00", 9), number)

    assert statuses() == ["start", "verified", "verified", "verified"]
    assert chains() == [(f"number:{number}", Decimal("1285.00"))]
    assert (reload(last).status, reload(payment).status) == ("matched", "completed")


def test_two_named_wallets_of_one_provider_on_two_phones_never_cross(brand, phones):
    counter, spare = phones
    # Both phones carry both wallets (dual SIM, a spare): texts interleave across phones, wallets.
    send(counter, credit("500.00", "AAAA01", "1500.00", 0), "01711000001")
    send(spare, credit("50.00", "XXXX01", "80.00", 1), "01811000002")
    send(spare, credit("200.00", "AAAA02", "1700.00", 5), "01711000001")
    send(counter, credit("20.00", "XXXX02", "100.00", 6), "01811000002")
    _, forged = send(counter, credit("300.00", "XXXX03", "1800.00", 8), "01811000002")

    assert statuses() == ["start", "start", "verified", "verified", "broken"]
    # Each chain stores the balance its next text must follow: the forged text's never is.
    assert chains() == [
        ("number:01711000001", Decimal("1700.00")),
        ("number:01811000002", Decimal("100.00")),
    ]
    # A text claiming the other wallet's balance does not follow its own wallet.
    assert link_of(forged).note == (
        "balance does not follow the previous text: expected 100.00, got 1500.00"
    )
    assert reload(forged).status == "review"


def test_phones_that_name_no_number_keep_their_own_wallets_apart_by_default(brand, phones):
    counter, spare = phones
    send(counter, credit("500.00", "AAAA01", "1500.00", 0))
    send(spare, credit("50.00", "XXXX01", "80.00", 1))
    send(counter, credit("200.00", "AAAA02", "1700.00", 5))
    send(spare, credit("20.00", "XXXX02", "100.00", 6))

    assert statuses() == ["start", "start", "verified", "verified"]
    assert chains() == [
        (f"phone:{counter[0].id}", Decimal("1700.00")),
        (f"phone:{spare[0].id}", Decimal("100.00")),
    ]


def test_phones_sharing_their_wallets_keep_one_chain_for_texts_that_name_no_number(brand, phones):
    set_chain_mode(brand, "strict", shared_wallets=True)
    db.session.commit()
    counter, spare = phones
    texts = [
        credit("500.00", "AAAA01", "1500.00", 0),
        credit("200.00", "BBBB02", "1700.00", 5),
        credit("100.00", "CCCC03", "1800.00", 7),
        credit("50.00", "DDDD04", "1850.00", 9),
    ]
    # The spare phone carries every text too, out of order and late: each is stored once.
    for index, text in enumerate(texts):
        send((counter, spare)[index % 2], text)
    for text in reversed(texts):
        assert send(spare, text)[0]["status"] == "duplicate"

    assert statuses() == ["start", "verified", "verified", "verified"]
    assert chains() == [("shared", Decimal("1850.00"))]
    held = db.session.execute(
        db.select(db.func.count(InboundSms.id)).where(InboundSms.status == "review")
    ).scalar_one()
    assert held == 0


def test_a_starting_balance_set_on_a_shared_wallet_applies_to_every_phone(brand, phones):
    set_chain_mode(brand, "strict", shared_wallets=True)
    db.session.commit()
    counter, spare = phones
    chain = set_starting_balance(brand, counter[0], "bkash", Decimal("5000.00"))
    db.session.commit()

    assert (chain.wallet, chain.device_id) == ("shared", None)
    assert set_starting_balance(brand, spare[0], "bkash", Decimal("5000.00")).id == chain.id


def test_a_text_naming_its_number_joins_that_number_whatever_the_brand_shares(brand, phones):
    set_chain_mode(brand, "strict", shared_wallets=True)
    db.session.commit()
    counter, spare = phones
    send(counter, credit("500.00", "AAAA01", "1500.00", 0), "01711000001")
    send(spare, credit("50.00", "XXXX01", "80.00", 1))

    assert chains() == [("number:01711000001", Decimal("1500.00")), ("shared", Decimal("80.00"))]


def test_two_companion_apps_posting_one_wallets_texts_over_http_keep_one_chain(client, brand):
    """The companion API as the phones call it: a spare phone posts every text again, and the
    counter phone misses one the spare carries."""
    apps = []
    for name in ("Counter phone", "Spare phone"):
        device, tokens, aes_key = paired_device(brand, name=name)
        apps.append(({"Authorization": f"Bearer {tokens['access_token']}"}, aes_key))
    payment = submit_claim(PaymentFactory(brand=brand, amount=Decimal("300.00")), "bkash", "CCCC03")
    texts = [
        credit("500.00", "AAAA01", "1500.00", 0),
        credit("200.00", "BBBB02", "1700.00", 5),
        credit("300.00", "CCCC03", "2000.00", 9),
    ]

    def post(app, text):
        headers, aes_key = app
        payload = json.dumps({"body": text, "receiver": "01711000001"})
        answer = client.post(
            "/api/mobile/v1/sms",
            json={"messages": [sms_message(aes_key, payload)]},
            headers=headers,
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
        return answer.get_json()["data"]["results"][0]["status"]

    counter, spare = apps
    answers = [post(counter, texts[0]), post(spare, texts[1]), post(counter, texts[2])]
    answers += [post(spare, text) for text in texts]

    assert answers == ["accepted"] * 3 + ["duplicate"] * 3
    assert statuses() == ["start", "verified", "verified"]
    assert reload(payment).status == "completed"


def test_a_credit_two_apps_wrap_differently_counts_once_and_leaves_the_chain_whole(brand, phones):
    set_chain_mode(brand, "strict", shared_wallets=True)  # two apps on one phone: one wallet
    db.session.commit()
    counter, spare = phones
    payment = submit_claim(PaymentFactory(brand=brand, amount=Decimal("200.00")), "bkash", "BBBB02")
    send(counter, credit("500.00", "AAAA01", "1500.00", 0))
    text = credit("200.00", "BBBB02", "1700.00", 5)
    # A forwarder that wraps the body (sender line, SIM and device lines), as a real one does.
    wrapped = f"bKash\n{text}\nSIM2_\nSubId：2\n{HOUR:%Y-%m-%d %H}:05:29\nShop Redmi"

    _, plain = send(counter, text)
    answer, copy = send(spare, wrapped)
    _, after = send(spare, credit("100.00", "CCCC03", "1800.00", 9))

    assert answer["status"] == "duplicate" and copy.id != plain.id
    assert (reload(copy).status, reload(copy).provider_trx_id) == ("duplicate", None)
    assert statuses() == ["start", "verified", "verified"]
    assert (reload(payment).status, reload(plain).payment_id) == ("completed", payment.id)
    assert link_of(after).status == "verified"


@pytest.mark.parametrize("round_", range(2))
def test_two_phones_posting_one_wallets_texts_at_once_keep_its_chain_in_order(
    app, brand, phones, round_
):
    counter, spare = phones
    number = "01711000001"
    send(counter, credit("500.00", "AAAA01", "1500.00", 0), number)
    later = [
        (counter, credit("200.00", "BBBB02", "1700.00", 10)),
        (spare, credit("300.00", "CCCC03", "2000.00", 20)),
    ]

    def ingest(phone, text):
        message = sms_message(phone[1], json.dumps({"body": text, "receiver": number}))
        return lambda: ingest_batch(db.session.get(Device, phone[0].id), [message])

    results = race(app, [ingest(*pair) for pair in later])

    assert [result[0]["status"] for result in results] == ["accepted", "accepted"]
    db.session.expire_all()
    links = db.session.execute(db.select(BalanceLink).order_by(BalanceLink.printed_at)).scalars()
    assert [link.status for link in links] in (
        ["start", "verified", "verified"],
        ["start", "verified", "healed"],
    )
    assert chains() == [(f"number:{number}", Decimal("2000.00"))]


def test_a_batch_mixing_a_credit_without_a_balance_keeps_the_others_chained(brand, phones):
    from tests.sms.test_chain_no_balance import BKASH_NO_BALANCE

    device, aes_key = phones[0]
    texts = [
        credit("500.00", "AAAA01", "1500.00", 0),
        BKASH_NO_BALANCE,
        credit("200.00", "BBBB02", "1700.00", 9),
    ]
    results = ingest_batch(
        db.session.get(Device, device.id), [sms_message(aes_key, text) for text in texts]
    )

    assert [result["status"] for result in results] == ["accepted"] * 3
    links = db.session.execute(db.select(BalanceLink).order_by(BalanceLink.printed_at)).scalars()
    assert [link.status for link in links] == ["start", "no_balance", "verified"]
    held = db.session.execute(
        db.select(InboundSms.review_reason).where(InboundSms.status == "review")
    ).scalars()
    assert list(held) == ["no balance printed"]
