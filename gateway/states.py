"""The one state machine: each domain object's statuses, the moves allowed between them, the one
status writer.

Every status change in the code is `write_status` (a guarded UPDATE: the from-states are in its
WHERE, so of two racing writers one wins) or, for the few statements built once for speed, a
statement made by `guarded_update`. A move the tables below do not list raises `IllegalTransition`
before any SQL runs. The payment table is docs/spec/CONTRACT.md's with the amendments of
docs/payment-states.md.

It names tables, not models, and imports no domain: payments, sms and webhooks all write statuses
through it, and a module inside one of them would make the others import that domain.
"""

from .extensions import db


class IllegalTransition(ValueError):
    """A status move the state machine does not list: a programming error, never a user's."""


class Machine:
    """One object's statuses and the moves allowed from each."""

    def __init__(self, name, table_name, moves):
        self.name = name
        self.table_name = table_name
        self.moves = {status: frozenset(targets) for status, targets in moves.items()}
        self.statuses = tuple(moves)
        unknown = {t for targets in self.moves.values() for t in targets} - set(self.statuses)
        if unknown:
            raise IllegalTransition(f"{name}: moves to unknown statuses {sorted(unknown)}")

    @property
    def table(self):
        """The table whose `status` column this machine writes."""
        return db.metadata.tables[self.table_name]

    def allows(self, from_state, to_state):
        """Whether the table lists the move from_state → to_state."""
        return to_state in self.moves.get(from_state, ())

    def check(self, from_states, to_states):
        """Raise IllegalTransition unless every from → to pair is listed."""
        for from_state in from_states:
            for to_state in to_states:
                if not self.allows(from_state, to_state):
                    raise IllegalTransition(
                        f"{self.name}: {from_state} → {to_state} is not an allowed move"
                    )

    def pairs(self):
        """Every listed (from, to) move."""
        return [(f, t) for f, targets in self.moves.items() for t in sorted(targets)]


# The status words of payments, transactions, refunds, payment links, invoices and inbound SMS,
# named once: the code compares and writes these names, never the bare words (the tables below list
# the moves).
PAYMENT_CREATED = "created"
PAYMENT_PROCESSING = "processing"
PAYMENT_COMPLETED = "completed"
PAYMENT_PARTIALLY_REFUNDED = "partially_refunded"
PAYMENT_REFUNDED = "refunded"
PAYMENT_CANCELLED = "cancelled"
PAYMENT_EXPIRED = "expired"
PAYMENT_FAILED = "failed"
TRANSACTION_COMPLETED = "completed"
TRANSACTION_PARTIALLY_REFUNDED = "partially_refunded"
TRANSACTION_REFUNDED = "refunded"
REFUND_COMPLETED = "completed"
LINK_ACTIVE = "active"
LINK_DISABLED = "disabled"
LINK_DELETED = "deleted"  # kept for its payments and its slug, never shown again
INVOICE_DRAFT = "draft"
INVOICE_SENT = "sent"
INVOICE_OVERDUE = "overdue"
INVOICE_PAID = "paid"
INVOICE_VOID = "void"
# An inbound SMS's status words (INBOUND_SMS below); the phone's answer words (accepted, duplicate,
# rejected) are the mobile API's, not these.
SMS_MATCHED = "matched"
SMS_UNMATCHED = "unmatched"
SMS_IGNORED = "ignored"
SMS_DUPLICATE = "duplicate"
SMS_REVIEW = "review"
SMS_UNPARSED = "unparsed"
SMS_RETURNED = "returned"


PAYMENT = Machine(
    "payment",
    "payments",
    {
        "created": ("processing", "completed", "cancelled", "expired"),
        # processing → created: the customer correcting a claim on the waiting page
        # (docs/payment-states.md).
        "processing": ("created", "completed", "cancelled", "expired", "failed"),
        "completed": ("partially_refunded", "refunded"),
        "partially_refunded": (
            "partially_refunded",
            "refunded",
        ),  # another partial refund keeps it partial
        "refunded": (),
        # → completed: money that arrived late, completed by the merchant (docs/payment-states.md).
        "cancelled": ("completed",),
        "expired": ("completed",),
        "failed": (),
    },
)
# A completed payment's transaction follows it through refunds.
TRANSACTION = Machine(
    "transaction",
    "transactions",
    {
        "completed": ("partially_refunded", "refunded"),
        "partially_refunded": ("partially_refunded", "refunded"),
        "refunded": (),
    },
)
# A refund is recorded completed (the money went back before the merchant recorded it) and never
# moves.
REFUND = Machine("refund", "refunds", {"completed": ()})
INBOUND_SMS = Machine(
    "inbound SMS",
    "inbound_sms",
    {
        "unmatched": ("matched", "review", "ignored"),
        "unparsed": ("matched", "ignored"),  # only by hand: the merchant matches or sets it aside
        # Approved (or a late payment completed), released by a cancel or reject, or its late money
        # returned.
        "review": ("matched", "unmatched", "returned"),
        "matched": (),
        "ignored": (),
        "duplicate": (),
        "returned": (),
    },
)
# The outbox's one vocabulary (gateway/outbox/), shared by webhooks, e-mail, notifications and
# outbound SMS: a row waits `pending` (an attempt holds it while its lease is set), then is `sent`,
# or `failed` once its retry schedule is used up. A hand retry puts a row back as `pending`. Each
# front door shows its documented words (the schemas map them: docs/spec/CONTRACT.md,
# docs/spec/COMPAT.md).
OUTBOX_PENDING, OUTBOX_SENT, OUTBOX_FAILED = "pending", "sent", "failed"
OUTBOX_STATUSES = (OUTBOX_PENDING, OUTBOX_SENT, OUTBOX_FAILED)
OUTBOX_MOVES = {
    # pending → pending: a lease taken, returned, or an attempt failed with a retry scheduled.
    OUTBOX_PENDING: (OUTBOX_PENDING, OUTBOX_SENT, OUTBOX_FAILED),
    OUTBOX_SENT: (OUTBOX_PENDING,),  # a webhook redelivered by hand
    OUTBOX_FAILED: (OUTBOX_PENDING,),  # retried by hand
}
DELIVERY = Machine("webhook delivery", "webhook_deliveries", OUTBOX_MOVES)
OUTBOUND_SMS = Machine("outbound SMS", "outbound_sms", OUTBOX_MOVES)
OUTBOUND_MAIL = Machine("outbound e-mail", "outbound_mail", OUTBOX_MOVES)
NOTIFICATION_DELIVERY = Machine("notification delivery", "notification_deliveries", OUTBOX_MOVES)
INVOICE = Machine(
    "invoice",
    "invoices",
    {
        "draft": ("sent", "void"),
        "sent": ("sent", "paid", "void", "overdue"),  # sent again keeps it sent
        "overdue": ("overdue", "paid", "void"),  # a reminder sent again keeps it overdue
        "paid": (),
        "void": (),
    },
)
MACHINES = (
    PAYMENT,
    TRANSACTION,
    REFUND,
    DELIVERY,
    INBOUND_SMS,
    OUTBOUND_SMS,
    OUTBOUND_MAIL,
    NOTIFICATION_DELIVERY,
    INVOICE,
)


def write_status(machine, where, from_states, to_state, status_value=None, **values):
    """Move the rows matching `where` from one of `from_states` to `to_state` with one guarded
    UPDATE; rows moved.

    One row named in `where`: 1 when this writer won, 0 when another got there first. `to_state` may
    be a tuple of targets when `status_value` (a SQL expression, e.g. a CASE) picks among them per
    row. Runs in the caller's transaction; never commits.
    """
    targets = (to_state,) if isinstance(to_state, str) else tuple(to_state)
    machine.check(from_states, targets)
    table = machine.table
    return db.session.execute(
        db.update(table)
        .where(*where, table.c.status.in_(tuple(from_states)))
        .values(status=to_state if status_value is None else status_value, **values)
    ).rowcount


def guarded_update(machine, table, from_states, to_states):
    """A Core UPDATE of `table` guarded on `from_states`, checked once against the table (for
    statements built once).
    """
    machine.check(from_states, to_states)
    return db.update(table).where(table.c.status.in_(tuple(from_states)))


# --- "In review": one definition for services, SQL and templates ---


def payment_in_review(payment):
    """Whether the payment waits for the merchant: processing, held with a review reason."""
    return payment.status == PAYMENT_PROCESSING and bool(payment.review_reason)


def payment_in_review_sql():
    """SQL: the payment is processing and held with a review reason (payment_in_review)."""
    payments = PAYMENT.table.c
    return db.and_(payments.status == PAYMENT_PROCESSING, payments.review_reason.is_not(None))


def not_held_for_review_sql():
    """SQL: the payment carries no review reason (a processing one is then a live, unheld claim)."""
    return PAYMENT.table.c.review_reason.is_(None)


def register_template_helpers(app):
    """Templates ask `payment is in_review`, the same rule as the services."""
    app.jinja_env.tests["in_review"] = payment_in_review
