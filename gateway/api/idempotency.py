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
    record = reserve(key, fingerprint)
    if record is None:
        return replay(key, fingerprint)
    g.idempotency_record_id = record.id
    return None


def reserve(key, fingerprint):
    """Insert the in-progress record; None when the key is already taken."""
    brand_id = g.brand.id
    stale = db.session.execute(
        db.select(IdempotencyRecord).where(IdempotencyRecord.brand_id == brand_id,
                                           IdempotencyRecord.key == key,
                                           IdempotencyRecord.created_at < utcnow() - RETENTION)
    ).scalar_one_or_none()
    if stale is not None:
        db.session.delete(stale)
        # Flushed on its own: a unit of work inserts before it deletes, which would hit the unique key.
        db.session.flush()
    record = IdempotencyRecord(brand_id=brand_id, key=key, request_hash=fingerprint)
    db.session.add(record)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return record


def replay(key, fingerprint):
    """The stored answer of the first request with this key, or why there is none."""
    record = db.session.execute(
        db.select(IdempotencyRecord).where(IdempotencyRecord.brand_id == g.brand.id,
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
    """Keep the first answer for replay; forget the key when the request failed on our side."""
    record_id = g.pop("idempotency_record_id", None)
    if record_id is None:
        return response
    db.session.rollback()
    record = db.session.get(IdempotencyRecord, record_id)
    if record is None:
        return response
    if response.status_code >= 500:
        db.session.delete(record)
    else:
        record.response_status = response.status_code
        record.response_body = response.get_data(as_text=True)
    db.session.commit()
    return response


def prune_idempotency_records():
    """Delete records older than the 24-hour replay window; returns how many went."""
    result = db.session.execute(
        db.delete(IdempotencyRecord).where(IdempotencyRecord.created_at < utcnow() - RETENTION)
    )
    db.session.commit()
    return result.rowcount


