"""What a payment's life announces, for other domains to act on inside the same transaction.

Payments never import the domains that react to a payment (that would be an import cycle): the
app factory connects every listener in one place, `gateway/__init__.py:connect_listeners`. A
listener is called as `listener(payment, **details)` (of the batch signal: `listener(completions)`),
runs in the caller's transaction and must not commit; an exception from it rolls the whole change
back.
"""

from blinker import Namespace

_signals = Namespace()

# Sent once by complete_payments (complete_payment: a list of one) after the status changes and
# their `payment.completed` events: (completions), the [(payment, transaction)] in order. A
# listener acts on the whole list, with one query for it where it needs one.
payments_completed = _signals.signal("payments-completed")
# Sent by cancel_payment after the status change: (payment).
payment_cancelled = _signals.signal("payment-cancelled")
# Sent whenever an open payment ends unpaid (cancelled, expired or failed), after its status change.
payment_closed = _signals.signal("payment-closed")
# Sent by create_refund before any write of the refund, the request having written nothing yet:
# (transaction, amount=..., reason=..., refunded_by=..., limit=..., asked_by=...). A listener that
# makes the refund elsewhere first (a wallet's API, gateway/wallets/refunds.py) commits its attempt
# on a connection of its own, calls outside any database transaction and returns the attempt's id
# once made; its refusal (a DomainError) or its silence (RefundUndecided) propagates and nothing of
# the refund is written.
refund_sending = _signals.signal("refund-sending")
# Sent by create_refund once the refund is written, before commit: (refund, transaction=...,
# undecided_id=...). `undecided_id` names the attempt made elsewhere (refund_sending, or a pending
# one confirmed since), which the listener records as this refund.
refund_recording = _signals.signal("refund-recording")
