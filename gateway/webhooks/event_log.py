"""The events API's side of events: listing and reading them, replaying one, and pruning those past
the 30 days they are kept."""

from datetime import timedelta

from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..domain_errors import NotFound, invalid_state, not_found
from ..extensions import db
from .deliveries import request_redelivery
from .endpoints import endpoints_of, get_endpoint
from .events import Record, record_deliveries
from .models.event import Event
from .models.webhook import WebhookDelivery

KEPT = timedelta(days=30)  # at least: the prune job deletes older ones
BATCH = 1000  # events deleted per prune transaction


def events_query(brand, livemode, filters):
    """The brand's events of a mode, newest first, filtered by `type` and `from`/`to` (created)."""
    query = db.select(Event).where(Event.brand_id == brand.id, Event.livemode.is_(bool(livemode)))
    if filters.get("type"):
        query = query.where(Event.type == filters["type"])
    if filters.get("from"):
        query = query.where(Event.created_at >= filters["from"])
    if filters.get("to"):
        query = query.where(Event.created_at <= filters["to"])
    return query.order_by(Event.created_at.desc(), Event.id.desc())


def get_event(brand, livemode, public_id):
    """The brand's event of this mode (None: either, for the panel) by its `evt_…` id; NotFound
    for anything else."""
    event = None
    if isinstance(public_id, str) and public_id.startswith("evt_") and len(public_id) <= 40:
        query = db.select(Event).where(Event.public_id == public_id, Event.brand_id == brand.id)
        if livemode is not None:
            query = query.where(Event.livemode.is_(bool(livemode)))
        event = db.session.execute(query).scalar_one_or_none()
    if event is None:
        raise not_found("event")
    return event


def stored_event(brand, public_id):
    """The brand's event of either mode by id, or None (pruned, or an IPN's id): the panel's."""
    try:
        return get_event(brand, None, public_id)
    except NotFound:
        return None


def deliveries_of(event):
    """The event's delivery records (to its URL and to endpoints), oldest first."""
    return (
        db.session.execute(
            db.select(WebhookDelivery)
            .where(WebhookDelivery.event_id == event.public_id)
            .order_by(WebhookDelivery.id)
        )
        .scalars()
        .all()
    )


def redeliver_event(brand, livemode, public_id, endpoint_id=None):
    """Send the event again now: to one endpoint (`endpoint_id`), else to every enabled endpoint of
    the mode that chooses it now and to the URL it first went to. Returns the delivery records.

    A record that exists gets a hand attempt (deliveries.py:request_redelivery: extra, outside the
    automatic budget); an endpoint the event never went to gets a new record of the same body. An
    attempt already in flight is left to finish (409 when it is the one endpoint asked for).
    """
    event = get_event(brand, livemode, public_id)
    existing = deliveries_of(event)
    if endpoint_id is not None:
        endpoint = get_endpoint(brand, endpoint_id, livemode)
        if not endpoint.enabled:
            raise invalid_state("The webhook endpoint is disabled; enable it first.")
        targets, originals = [endpoint], []
    else:
        targets = [e for e in endpoints_of(brand, livemode) if e.enabled and e.wants(event.type)]
        originals = [d for d in existing if d.endpoint_id is None]
    by_endpoint = {d.endpoint_id: d for d in existing if d.endpoint_id is not None}
    again = [d for d in originals] + [by_endpoint[e.id] for e in targets if e.id in by_endpoint]
    fresh = [e for e in targets if e.id not in by_endpoint]
    if not again and not fresh:
        raise invalid_state("Nowhere to send it: no URL, and no enabled endpoint chooses it.")
    sent = [d for d in again if request_redelivery(d.id)]
    if endpoint_id is not None and again and not sent:
        db.session.rollback()
        raise invalid_state(
            "An attempt to this endpoint is in progress; retry when it has finished."
        )
    sent += record_deliveries(
        [
            Record(
                brand, event.type, e.url, event.payload, None, None, event.public_id, e, livemode
            )
            for e in fresh
        ]
    )
    commit_work()
    for delivery in sent:
        db.session.refresh(delivery)
    return sent


def prune_events(now=None):
    """Delete events older than KEPT, a batch per transaction; returns how many went.

    Their delivery records stay (the delivery log keeps its own 50 newest); they name the event by
    its id.
    """
    cutoff, gone = (now or utcnow()) - KEPT, 0
    while True:
        with unit_of_work():
            ids = (
                db.session.execute(
                    db.select(Event.id).where(Event.created_at < cutoff).limit(BATCH)
                )
                .scalars()
                .all()
            )
            if ids:
                db.session.execute(db.delete(Event).where(Event.id.in_(ids)))
        gone += len(ids)
        if len(ids) < BATCH:
            return gone
