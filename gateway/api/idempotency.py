"""Idempotency-Key handling: reserve before the view runs, store its answer, replay repeats."""
import hashlib
from datetime import timedelta

from flask import g, request
from sqlalchemy.exc import IntegrityError

from ..clock import utcnow
from ..errors import ApiError
from ..extensions import db
from ..models import IdempotencyRecord

RETENTION = timedelta(hours=24)
# A record still in progress after this long belongs to a request that died; the key is free again.
LEASE = timedelta(seconds=60)
MAX_KEY_LENGTH = 255


def request_fingerprint():
    """A digest of what makes two requests the same: method, path and body."""
    digest = hashlib.sha256()
    digest.update(request.method.encode() + b" " + request.path.encode() + b"\n")
    digest.update(request.get_data(cache=True))
    return digest.hexdigest()


def replay_or_reserve():
    """Answer a repeat from the store, or reserve the key for this first request."""
    key = request.headers.get("Idempotency-Key")
    if request.method != "POST" or key is None:
        return None
    if not key or len(key) > MAX_KEY_LENGTH or "\x00" in key:
        raise ApiError(422, "VALIDATION_ERROR", "Idempotency-Key must be 1 to 255 characters.",
                       [{"field": "Idempotency-Key", "code": "invalid",
                         "message": "Idempotency-Key must be 1 to 255 characters."}])
    fingerprint = request_fingerprint()
    reservation = reserve(key, fingerprint)
    if reservation is None:
        return replay(key, fingerprint)
    g.idempotency_reservation = reservation
    return None


def reserve(key, fingerprint):
    """Insert the in-progress record; (id, created_at) of it, or None when the key is already taken.

    A record past the 24-hour window, or still in progress after its lease, is released first.
    The release names the old created_at, so of two requests reclaiming the same record only one
    deletes it; the other then meets the unique key and is answered from the store.
    """
    brand_id = g.brand_id
    now = utcnow()
    existing = db.session.execute(
        db.select(IdempotencyRecord.id, IdempotencyRecord.created_at, IdempotencyRecord.response_status)
        .where(IdempotencyRecord.brand_id == brand_id, IdempotencyRecord.key == key)
    ).one_or_none()
    if existing is not None:
        release_if_stale(existing, now)
    record = IdempotencyRecord(brand_id=brand_id, key=key, request_hash=fingerprint, created_at=now)
    db.session.add(record)
    try:
        db.session.flush()
        record_id = record.id
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return record_id, now


def release_if_stale(seen, now):
    """Delete the record `seen` (id, created_at, response_status) if expired or abandoned; rows deleted.

    The DELETE repeats what was seen in its WHERE: when another request has meanwhile reclaimed
    the key (a new created_at) or the first request has finished (a status), nothing is deleted.
    """
    if seen.created_at < now - RETENTION:
        guard = IdempotencyRecord.created_at < now - RETENTION
    elif seen.response_status is None and seen.created_at < now - LEASE:
        guard = IdempotencyRecord.response_status.is_(None)
    else:
        return 0
    result = db.session.execute(
        db.delete(IdempotencyRecord)
        .where(IdempotencyRecord.id == seen.id, IdempotencyRecord.created_at == seen.created_at, guard)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount


def replay(key, fingerprint):
    """The stored answer of the first request with this key, or why there is none."""
    record = db.session.execute(
        db.select(IdempotencyRecord).where(IdempotencyRecord.brand_id == g.brand_id,
                                           IdempotencyRecord.key == key)
    ).scalar_one_or_none()
    if record is None:
        # The first request failed on our side and released the key between our insert and this read.
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS",
                       "A request with this Idempotency-Key is still being processed.")
    if record.request_hash != fingerprint:
        raise ApiError(422, "IDEMPOTENCY_KEY_REUSED",
                       "This Idempotency-Key was used with a different request.")
    if record.response_status is None:
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS",
                       "A request with this Idempotency-Key is still being processed.")
    response = current_response(record.response_body, record.response_status)
    response.headers["Idempotent-Replayed"] = "true"
    return response


def current_response(body, status):
    """A JSON response from a stored body."""
    from flask import current_app

    return current_app.response_class(body, status=status, mimetype="application/json")


def store_response(response):
    """Keep the first answer for replay; release the key when the request failed (4xx or 5xx).

    A refused request changed nothing, so its key stays free for a corrected body. Only the
    reservation this request made is touched: one taken over after its lease is left alone.
    """
    reservation = g.pop("idempotency_reservation", None)
    if reservation is None:
        return response
    record_id, reserved_at = reservation
    db.session.rollback()
    mine = (IdempotencyRecord.id == record_id, IdempotencyRecord.created_at == reserved_at,
            IdempotencyRecord.response_status.is_(None))
    if response.status_code >= 400:
        statement = db.delete(IdempotencyRecord).where(*mine)
    else:
        statement = db.update(IdempotencyRecord).where(*mine).values(
            response_status=response.status_code, response_body=response.get_data(as_text=True))
    db.session.execute(statement.execution_options(synchronize_session=False))
    db.session.commit()
    return response


def prune_idempotency_records():
    """Delete records older than the 24-hour replay window; returns how many went."""
    result = db.session.execute(
        db.delete(IdempotencyRecord).where(IdempotencyRecord.created_at < utcnow() - RETENTION)
    )
    db.session.commit()
    return result.rowcount


