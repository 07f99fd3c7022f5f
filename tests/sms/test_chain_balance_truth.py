"""One balance the next text must follow: the chain's stored balance, a broken text's `expected`
and its reason all come from the verified links, whatever wrong balances texts print.
"""

from decimal import Decimal

from gateway.extensions import db
from gateway.sms.balance_chain import link_of
from gateway.sms.models.balance_chain import BalanceChain
from tests.factories import forward, reload
from tests.sms.test_balance_chain import chain_of, credit


def stored(phone):
    """The chain row's balance as the database holds it."""
    chain = chain_of(phone)
    db.session.refresh(chain)
    return chain.balance


def test_a_wrong_balance_never_becomes_the_balance_the_next_text_must_follow(brand, phone):
    forward(phone, credit("500.00", "TRUE000001", "1500.00", 0))

    wrong = forward(phone, credit("500.00", "WRONG00001", "187500.00", 5))
    assert link_of(wrong).note == (
        "balance does not follow the previous text: expected 1500.00, got 187000.00"
    )
    assert link_of(wrong).expected == stored(phone) == Decimal("1500.00")

    # A text continuing the wrong balance is judged against the same 1500.00 the chain stores.
    after_wrong = forward(phone, credit("100.00", "WRONG00002", "187600.00", 6))
    assert link_of(after_wrong).note == (
        "balance does not follow the previous text: expected 1500.00, got 187500.00"
    )
    assert link_of(after_wrong).expected == stored(phone) == Decimal("1500.00")

    # The genuine next text follows what the chain stored.
    genuine = forward(phone, credit("200.00", "TRUE000002", "1700.00", 7))
    assert link_of(genuine).status == "verified"
    assert stored(phone) == Decimal("1700.00")
    assert reload(genuine).status == "unmatched"


def test_a_fork_and_a_gap_keep_the_stored_balance_on_the_verified_links(brand, phone):
    forward(phone, credit("500.00", "TRUE000001", "1500.00", 0))
    forward(phone, credit("100.00", "TRUE000002", "1600.00", 5))

    fork = forward(phone, credit("300.00", "FORK000003", "1800.00", 6))
    assert link_of(fork).note == (
        "balance 1500.00 is already continued by another text (a fork): expected 1600.00"
    )
    assert link_of(fork).expected == stored(phone) == Decimal("1600.00")

    # A gap: the text of 50.00 between 1600.00 and 1650.00 is missing.
    after_gap = forward(phone, credit("250.00", "TRUE000004", "1900.00", 9))
    assert link_of(after_gap).expected == stored(phone) == Decimal("1600.00")

    # The missing text arrives: the chain heals and stores the healed end.
    forward(phone, credit("50.00", "TRUE000003", "1650.00", 8))
    assert link_of(after_gap).status == "healed"
    assert stored(phone) == Decimal("1900.00")


def test_an_out_of_order_broken_text_does_not_move_the_stored_balance(brand, phone):
    forward(phone, credit("500.00", "TRUE000001", "1500.00", 0))
    forward(phone, credit("100.00", "TRUE000002", "1600.00", 10))

    # Printed before the last verified text, and wrong: expected the balance of its own time.
    late = forward(phone, credit("100.00", "LATE000001", "99999.00", 5))
    assert link_of(late).expected == Decimal("1500.00")
    assert stored(phone) == Decimal("1600.00")
    assert db.session.execute(db.select(BalanceChain.balance)).scalar_one() == Decimal("1600.00")
