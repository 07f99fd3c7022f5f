"""Idempotency-Key handling: hold the key before the view runs, commit its answer with its work,
replay repeats.

The view's work and the stored answer commit in one transaction (answer_commit.commit_work defers
the service's commit to store_response), so after any crash a retry either replays the answer or
finds nothing was made. A repeat while the first request runs is 409 in progress
(docs/spec/CONTRACT.md); how "runs" is known depends on the engine:

- PostgreSQL: the request holds its key with a transaction-level advisory lock, taken in the same
  statement that looks for a stored answer, and writes its record only with the answer: one commit
  in all. A repeat that cannot take the lock is 409; the lock ends with the transaction, so a
  request that dies or loses its connection frees its key at once, and no lease is needed.
- SQLite: a lock of another connection is invisible, so the key is reserved by committing an
  in-progress record first. A request that fails frees its key, on a fresh connection when its own
  was lost; a reservation whose request died is taken over after IDEMPOTENCY_LEASE_SECONDS. The
  request it was taken from, should it still be alive, finds its reservation gone when it stores its
  answer and rolls its work back, so a takeover never makes a second object. A commit there is a
  call within the process, not a round trip.

A refusal or failure is not stored: it made nothing, so the key is freed. The one error that made
something is a refund the wallet left undecided (503 REFUND_PENDING, its pending attempt kept
despite the error, answer_commit.keep_despite_error): that answer is stored with its work, and a
repeat answers from the attempt as it stands (undecided_refunds.py).
"""

import hashlib
import logging
from datetime import timedelta
from typing import NamedTuple

from flask import current_app, g, request
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from ..accounts.idempotency import RETENTION
from ..accounts.models.idempotency import IdempotencyRecord
from ..answer_commit import defer_commit_to_answer, end_deferral, work_kept
from ..clock import utcnow
from ..errors import ApiError, error_response, internal_error_response
from ..extensions import db
from ..livemode import current_livemode
from . import undecided_refunds

log = logging.getLogger(__name__)

MAX_KEY_LENGTH = 255
IN_PROGRESS = "A request with this Idempotency-Key is still being processed."


def lease():
    """How long an in-progress record is left to its request before a retry may take the key
    over."""
    return timedelta(seconds=float(current_app.config.get("IDEMPOTENCY_LEASE_SECONDS", 5)))


def request_fingerprint():
    """A digest of what makes two requests the same: method, path and body, and the key's mode.

    A test key's request is never the same as a live key's: reusing a live request's key in test
    mode (or the reverse) is IDEMPOTENCY_KEY_REUSED, never a replay of the other mode's answer. A
    live request's digest is what it was before test mode, so stored answers still replay.
    """
    digest = hashlib.sha256()
    digest.update(request.method.encode() + b" " + request.path.encode() + b"\n")
    if not current_livemode():
        digest.update(b"livemode=false\n")
    digest.update(request.get_data(cache=True))
    return digest.hexdigest()


def replay_or_reserve():
    """Answer a repeat from the store, or reserve the key for this first request."""
    if request.method != "POST":  # only a POST is replayed: no other request reads the header
        return None
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_LENGTH or "\x00" in key:
        raise ApiError(
            422,
            "VALIDATION_ERROR",
            "Idempotency-Key must be 1 to 255 characters.",
            [
                {
                    "field": "Idempotency-Key",
                    "code": "invalid",
                    "message": "Idempotency-Key must be 1 to 255 characters.",
                }
            ],
        )
    fingerprint = request_fingerprint()
    if db.engine.dialect.name == "postgresql":
        reservation = lock_key(key, fingerprint)
        if not isinstance(reservation, KeyLock):
            return reservation  # the stored answer of a repeat
    else:
        reservation = reserve(key, fingerprint)
        if reservation is None:
            answer = replay(key, fingerprint)
            if answer is not None:
                return answer
            # The record of a refund not made, deleted: reserved afresh with its deletion.
            reservation = reserve(key, fingerprint)
            if reservation is None:
                raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)
    g.idempotency_reservation = reservation
    defer_commit_to_answer()
    return None


class KeyLock(NamedTuple):
    """A key this PostgreSQL transaction holds: its record is written with the answer."""

    key: str
    fingerprint: str


# The lock and the look for a stored answer in one round trip. The read's snapshot may predate the
# lock: when a first request commits in between, the answer's INSERT meets its record and the
# repeat is answered from the store after all (store_locked).
LOCK_AND_READ = text(
    "SELECT pg_try_advisory_xact_lock(:lock) AS locked, r.id, r.created_at, r.response_status"
    " FROM (SELECT 1) AS one LEFT JOIN idempotency_records AS r"
    " ON r.brand_id = :brand_id AND r.key = :key"
).columns(
    locked=db.Boolean,
    id=db.Integer,
    created_at=IdempotencyRecord.created_at.type,
    response_status=db.Integer,
)


def lock_number(brand_id, key):
    """The advisory lock's 64-bit number for a brand's key."""
    digest = hashlib.sha256(f"idempotency:{brand_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lock_key(key, fingerprint):
    """PostgreSQL: hold the key for this transaction (a KeyLock), or the answer of a repeat.

    A record left in progress by a request of the SQLite design (a deployment changing engines) or
    past the 24-hour window is released as reserve() would.
    """
    brand_id = g.brand_id
    row = db.session.execute(
        LOCK_AND_READ, {"lock": lock_number(brand_id, key), "brand_id": brand_id, "key": key}
    ).one()
    if not row.locked:
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)
    if row.id is not None and not release_if_stale(row, utcnow()):
        answer = replay(key, fingerprint)
        if answer is not None:
            return answer  # else the record of a refund not made, deleted in this transaction
    return KeyLock(key, fingerprint)


def confirm_unanswered():
    """Before work the database cannot take back (a refund sent to a wallet): 409 in progress when a
    first request with this key has committed its answer since this one looked.

    PostgreSQL only: the look and the lock are one statement, whose snapshot may predate the lock,
    so a first request committing in between is not seen. For work within the database the
    answer's INSERT meets that record and everything rolls back (store_locked); a wallet would
    already have been paid twice. This read, after the lock, sees every commit before it. On
    SQLite the committed reservation already made the repeat wait or replay.
    """
    held = g.get("idempotency_reservation")
    if not isinstance(held, KeyLock):
        return
    answered = db.session.execute(
        db.select(IdempotencyRecord.id).where(
            IdempotencyRecord.brand_id == g.brand_id, IdempotencyRecord.key == held.key
        )
    ).first()
    if answered is not None:
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)


def reserve(key, fingerprint):
    """Insert the in-progress record; (id, created_at) of it, or None when the key is already taken.

    A record past the 24-hour window, or still in progress after its lease, is released first.
    The release names the old created_at, so of two requests reclaiming the same record only one
    deletes it; the other then meets the unique key and is answered from the store.
    """
    brand_id = g.brand_id
    now = utcnow()
    existing = db.session.execute(
        db.select(
            IdempotencyRecord.id, IdempotencyRecord.created_at, IdempotencyRecord.response_status
        ).where(IdempotencyRecord.brand_id == brand_id, IdempotencyRecord.key == key)
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
    """Delete the record `seen` (id, created_at, response_status) if expired or abandoned; rows
    deleted.

    The DELETE repeats what was seen in its WHERE: when another request has meanwhile reclaimed
    the key (a new created_at) or the first request has finished (a status), nothing is deleted.
    """
    if seen.created_at < now - RETENTION:
        guard = IdempotencyRecord.created_at < now - RETENTION
    elif seen.response_status is None and seen.created_at < now - lease():
        guard = IdempotencyRecord.response_status.is_(None)
    else:
        return 0
    result = db.session.execute(
        db.delete(IdempotencyRecord)
        .where(
            IdempotencyRecord.id == seen.id, IdempotencyRecord.created_at == seen.created_at, guard
        )
        .execution_options(synchronize_session=False)
    )
    return result.rowcount


def replay(key, fingerprint):
    """The stored answer of the first request with this key, or why there is none; None when the
    record was of a wallet refund since settled not made (deleted: the key makes it afresh)."""
    record = db.session.execute(
        db.select(IdempotencyRecord).where(
            IdempotencyRecord.brand_id == g.brand_id, IdempotencyRecord.key == key
        )
    ).scalar_one_or_none()
    if record is None:
        # The first request failed on our side and released the key between our insert and this
        # read.
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)
    if record.request_hash != fingerprint:
        raise ApiError(
            422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request."
        )
    if record.response_status is None:
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)
    response = None
    if record.wallet_refund_id is not None:
        if undecided_refunds.not_made(record):
            release_not_made(record)
            return None
        response = undecided_refunds.made_answer(record)
    if response is None:
        response = current_response(record.response_body, record.response_status)
    response.headers["Idempotent-Replayed"] = "true"
    return response


def release_not_made(record):
    """Delete the record of a refund the wallet did not make; guarded, so of two repeats one does
    (the other is 409 in progress)."""
    deleted = db.session.execute(
        db.delete(IdempotencyRecord)
        .where(
            IdempotencyRecord.id == record.id,
            IdempotencyRecord.wallet_refund_id == record.wallet_refund_id,
        )
        .execution_options(synchronize_session=False)
    ).rowcount
    if deleted != 1:
        raise ApiError(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)


def current_response(body, status):
    """A JSON response from a stored body."""
    return current_app.response_class(body, status=status, mimetype="application/json")


def store_response(response):
    """Commit the view's work with its answer for replay; on a refusal (4xx) or failure (5xx),
    release the key, unless the work was kept despite the error (REFUND_PENDING).

    A refused request changed nothing, so its key stays free for a corrected body. Only the
    reservation this request made is touched: when a retry took it over after the lease, this
    request's work is rolled back (the retry makes it instead) and the answer is 409 in progress.
    """
    reservation = g.pop("idempotency_reservation", None)
    kept = work_kept()
    end_deferral()
    if reservation is None:
        return response
    if isinstance(reservation, KeyLock):
        return store_locked(reservation, response, kept)
    record_id, reserved_at = reservation
    mine = (
        IdempotencyRecord.id == record_id,
        IdempotencyRecord.created_at == reserved_at,
        IdempotencyRecord.response_status.is_(None),
    )
    try:
        if response.status_code >= 400 and not kept:
            release_reservation(mine)
            return response
        return commit_with_answer(mine, response, kept)
    except SQLAlchemyError:
        answer = answer_unstored(response)
        release_on_fresh_connection(mine)
        return answer


def store_locked(held, response, kept=False):
    """PostgreSQL: commit the view's work with its record and answer; on a refusal or failure
    (unless its work is kept) roll back, which frees the key with the lock."""
    try:
        if response.status_code >= 400 and not kept:
            db.session.rollback()
            return response
        db.session.add(
            IdempotencyRecord(
                brand_id=g.brand_id,
                key=held.key,
                request_hash=held.fingerprint,
                created_at=utcnow(),
                response_status=response.status_code,
                response_body=response.get_data(as_text=True),
                wallet_refund_id=undecided_refunds.waited_on(),
            )
        )
        db.session.commit()
        return response
    except IntegrityError:
        # A first request committed between this one's read and its lock: its answer stands.
        rollback_quietly()
        try:
            return replay(held.key, held.fingerprint)
        except ApiError as refusal:
            return error_response(refusal.status, refusal.code, refusal.message)
    except SQLAlchemyError:
        return answer_unstored(response)


def answer_unstored(response):
    """The answer when the work and its answer could not be stored (connection lost or commit
    refused): the retry replays the answer if the commit landed, else finds the key free and
    nothing made. Either way, no stack trace out: a refusal as it was, a success as the 500."""
    log.exception("idempotent answer not stored in request %s", getattr(g, "request_id", "?"))
    rollback_quietly()
    return response if response.status_code >= 400 else internal_error_response()


def release_on_fresh_connection(mine):
    """Free a failed request's key at once, so that its retry need not wait out the lease.

    `mine` matches only a record still in progress: when the lost commit landed after all, its
    answer is stored and kept for the retry to replay. Should this fail too, the lease frees it.
    """
    try:
        release_reservation(mine)
    except SQLAlchemyError:
        log.warning("key of request %s left to its lease", getattr(g, "request_id", "?"))
        rollback_quietly()


def release_reservation(mine):
    """Discard whatever the failed request wrote and free its key."""
    db.session.rollback()
    db.session.execute(
        db.delete(IdempotencyRecord).where(*mine).execution_options(synchronize_session=False)
    )
    db.session.commit()


def commit_with_answer(mine, response, kept=False):
    """Store the answer in the request's own transaction and commit the two together."""
    stored = db.session.execute(
        db.update(IdempotencyRecord)
        .where(*mine)
        .values(
            response_status=response.status_code,
            response_body=response.get_data(as_text=True),
            wallet_refund_id=undecided_refunds.waited_on(),
        )
        .execution_options(synchronize_session=False)
    ).rowcount
    if stored != 1 and not kept:
        # Taken over after the lease: the retry owns the key and makes the object; this work must
        # not commit.
        db.session.rollback()
        return error_response(409, "IDEMPOTENCY_IN_PROGRESS", IN_PROGRESS)
    # A kept attempt commits even then: the wallet may have refunded, and the retry that took the
    # key over finds it pending (409 WALLET_REFUND_PENDING) instead of refunding again.
    db.session.commit()
    return response


def rollback_quietly():
    """Roll back after a database failure; a connection already gone is dropped by the pool."""
    try:
        db.session.rollback()
    except SQLAlchemyError:  # pragma: no cover - the rollback of a dead connection
        log.warning("rollback failed after a lost database connection")
