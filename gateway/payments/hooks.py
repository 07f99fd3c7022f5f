"""Other domains' work that must happen in the same transaction as a payment's change of state.

A domain that keeps rows about payments (payment links) registers here instead of being imported by
the lifecycle, so payments never import it back.
"""

# fn(payment, transaction), run after the payment.completed event is written, before the commit.
ON_COMPLETED = []
# fn(payment), run when an open payment is cancelled, expires or is failed, before the commit.
ON_CLOSED = []


def register(hooks, fn):
    """Add `fn` to a hook list once (create_app may run many times in one process)."""
    if fn not in hooks:
        hooks.append(fn)


def run(hooks, *args):
    """Call every registered function of a hook list."""
    for fn in hooks:
        fn(*args)
