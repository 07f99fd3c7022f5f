"""What a payment's life announces, for other domains to act on inside the same transaction.

Payments never import the domains that react to a payment (that would be an import cycle): the
app factory connects every listener in one place, `gateway/__init__.py:connect_listeners`. A
listener is called as `listener(payment, **details)`, runs in the caller's transaction and must not
commit; an exception from it rolls the whole change back.
"""

from blinker import Namespace

_signals = Namespace()

# Sent by complete_payment after the status change and its `payment.completed` event: (payment,
# transaction=…).
payment_completed = _signals.signal("payment-completed")
# Sent by cancel_payment after the status change: (payment).
payment_cancelled = _signals.signal("payment-cancelled")
# Sent whenever an open payment ends unpaid (cancelled, expired or failed), after its status change.
payment_closed = _signals.signal("payment-closed")
