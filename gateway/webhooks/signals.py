"""What the webhooks domain announces, for other parts to act on (connected in gateway/__init__.py).

Webhooks never import who listens: the app factory's `connect_listeners` wires them.
"""

from blinker import Namespace

_signals = Namespace()

# Sent by emit_events (emit_event: a list of one) for every event, in its transaction, after the
# payments are re-read: (event, emissions=[Emission(brand, payment, transaction, refund, …)]), the
# subjects in order. The plugin dialects write their IPNs here, one query for the list.
events_emitted = _signals.signal("events-emitted")
# Sent by post_webhook for each attempt: (claim); each listener returns extra headers (a dict) or
# {}.
delivery_headers = _signals.signal("delivery-headers")
