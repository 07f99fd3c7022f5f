"""What the webhooks domain announces, for other parts to act on (connected in gateway/__init__.py).

Webhooks never import who listens: the app factory's `connect_listeners` wires them.
"""

from blinker import Namespace

_signals = Namespace()

# Sent by emit_event for every event, in its transaction, before the payment is re-read:
# (event, brand=…, payment=…, transaction=…, refund=…). The plugin dialects write their IPNs here.
event_emitted = _signals.signal("event-emitted")
# Sent by post_webhook for each attempt: (claim); each listener returns extra headers (a dict) or
# {}.
delivery_headers = _signals.signal("delivery-headers")
