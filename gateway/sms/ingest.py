"""Ingesting a phone's texts: parse, store each text once, chain it, then match it to a claim.

Whatever app forwarded them, texts take one path (`ingest_texts`); the companion protocol's only
step of its own is decrypting its batch first (`ingest_batch`).

What POST /api/mobile/v1/sms commits, in order (each commit exists so that a crash after it loses
nothing and a retry of the batch finishes the work):

1. `device_key` — only when the device's key is still sealed under an old SECRET_KEY: the re-sealed
   key, alone (any later step may fail; the key must not be re-sealed again and again).
2. `insert` — the batch's new texts and the device's last_sms_at, in one commit. This is the
   phone's idempotency record: a retried batch finds its texts by content hash (`duplicate`), and a
   text is never lost to a later step's failure. Racing batches fall back to one insert per text.
3. The balance chains (balance_chain.link_texts): one commit for the whole batch's links, after
   each touched chain row is locked (lock_chains commits first so that the locks are short; a
   chain created for the first time commits alone so that a racing batch finds it). A strict
   brand's credit that does not follow is held for review in that same commit; credits the batch
   heals are then released, one unit of work each. When chaining fails, `hold_unchecked` commits
   each credit held unchecked and the batch fails (500) so that the phone sends it again.
4. Only on a retry (`rechain_resent`): a resent text whose chain step never ran is chained now.
5. Matching (`matching.match_new_credits`): the credits that pay the one live claim of their TrxID
   commit together, each SMS with its payment's completion (transaction, webhook outbox) — one
   commit for the batch's common case, kept because it measured 3-4x less CPU than one commit per
   credit (docs/performance.md). Every other claimed credit, and all of them when a guard finds a
   row moved meanwhile, commits in a unit of work of its own: the SMS with the completion and the
   rivals' review reasons, or with the hold for review or for late money.
6. Only on a retry (`match_resent`): the stored copies of resent texts still unmatched, one unit of
   work each (self-healing a batch whose matching died after step 2).

A batch whose database connection dies is sent again at once (LOST_CONNECTION_RESENDS): steps 2-6
are idempotent, so the resend finishes what the first try committed.
"""

import logging
from dataclasses import dataclass
from datetime import datetime

import marshmallow as ma
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..db_types import UNSTORABLE_MESSAGE, unstorable
from ..devices.crypto import PayloadError, decrypt_payload, seal_device_key, unseal_device_key
from ..devices.models.device import Device
from ..extensions import db
from ..payments.models.payment_method import BANK
from ..states import SMS_UNMATCHED
from .balance_chain import UNCHECKED, link_of, link_text, link_texts, movement
from .bank_matching import match_bank_credits
from .companion_items import SmsMessageSchema
from .held_credits import hold_unverified_credit, release_verified_credit
from .matching import match_new_credits, match_stranded_credits
from .models.inbound_sms import InboundSms
from .records import enabled_templates, message_receiver, message_text, read_text, sms_values

MESSAGE = SmsMessageSchema()
logger = logging.getLogger(__name__)
# A batch whose database connection died under it is sent again at once, on a fresh connection, as
# the phone would send it: once, so that a database that keeps failing leaves it to the phone.
LOST_CONNECTION_RESENDS = 1


class ChainStepFailed(RuntimeError):
    """A resent text's chain step failed again: the batch fails so that the phone sends it again."""


@dataclass(frozen=True)
class ForwardedText:
    """One SMS in plain text as a phone forwarded it, whatever app carried it."""

    local_id: str | None
    sender: str
    body: str
    received_at: datetime | None
    receiver: str = ""  # the wallet number it arrived on, when the app says
    # False only for a text the gateway simulated for a test payment (testmode/simulate.py); no
    # phone, forwarder or request body can set it.
    livemode: bool = True


def ingest_batch(device, items):
    """The companion app's batch: each item decrypted with the device's key, then ingest_texts."""
    key = device_key(device)
    return ingest_texts(device, [open_message(key, item) for item in items])


def ingest_texts(device, texts):
    """Per-text results {local_id, status: accepted|duplicate|rejected, server_ref} for one batch of
    ForwardedText, sent again at once (LOST_CONNECTION_RESENDS) when its database connection dies.

    An item the forwarding protocol already refused stands in the batch as its rejection (a result
    dict), so that results keep the batch's order.
    """
    ours = set()  # the public ids given to new texts by tries whose connection died
    for resend in range(LOST_CONNECTION_RESENDS + 1):
        results = []
        try:
            ingest_once(device, texts, results)
        except DBAPIError as error:
            if not error.connection_invalidated or resend == LOST_CONNECTION_RESENDS:
                raise
            # Each step commits on its own: the resend finds what was stored before the loss
            # (`duplicate`) and chains and matches it, as the phone's own resend would.
            db.session.rollback()
            logger.warning("database connection lost in an SMS batch; sent again at once")
            ours |= {result["server_ref"] for result in results if result["status"] == "accepted"}
            continue
        for result in results:
            if result["status"] == "duplicate" and result["server_ref"] in ours:
                result["status"] = "accepted"  # stored by this batch, in the try that died
        return results


def ingest_once(device, texts, results):
    """One try at a batch: fills `results` with each text's result as it goes."""
    templates = enabled_templates(device.brand_id)
    pending, receivers, readings = [], {}, {}
    for text in texts:
        result, values, receiver, parsed = read_forwarded(device, templates, text)
        results.append(result)
        if values is not None:
            pending.append((result, values))
            receivers[values["public_id"]] = receiver
            readings[values["public_id"]] = parsed
    sent = [
        (result, values["provider"], values["provider_trx_id"])
        for result, values in pending
        if values["provider_trx_id"]
    ]
    stored = store(device, pending)
    chain_stored(device, stored, readings, receivers)
    unchained = rechain_resent(device, pending, templates, receivers)
    match_stored(stored)
    match_resent(device.brand_id, sent)
    if unchained:
        # The batch fails (the 500 envelope) so that the phone sends it again: acknowledged, the
        # text would stay held with nobody retrying its chain step, and hold every later credit.
        raise ChainStepFailed(
            "balance chain failed again for SMS " + ", ".join(unchained) + "; the phone retries"
        )


def chain_stored(device, stored, readings, receivers=None):
    """Link the batch's new texts into their balance chains, in printed order (docs/sms-trust.md).

    Runs before matching, so a strict brand's credit that does not follow is already held for
    review. `readings` maps a text's public id to its parse (read once, when the text was read);
    `receivers` to the wallet number it arrived on, when the phone said.
    """
    receivers = receivers or {}
    # A credit that printed no balance comes too: its chain step holds it (strict) or flags it.
    wallet = [
        v
        for v in stored
        if v["status"] != "duplicate" and (v["balance"] is not None or v["incoming"])
    ]
    rows = stored_rows([values["id"] for values in wallet])
    texts = []
    for values in wallet:
        parsed = readings[values["public_id"]]
        sms = rows[values["id"]]
        move = movement(parsed, sms, device.brand.timezone)
        if move is not None:
            receiver = receivers.get(values["public_id"]) or ""
            # Printed minutes tie often: the phone's arrival order breaks the tie (ids follow
            # hashes).
            order = (move.printed_at, values["received_at"], values["id"])
            texts.append((order, sms, parsed, receiver))
    if not texts:
        return
    texts.sort(key=lambda text: text[0])
    try:
        link_texts([text[1:] for text in texts], device.brand)
    except Exception:
        # Fail safe: the credits are held (an unchecked credit must not pay by itself), then the
        # batch fails so that the phone sends it again; rechain_resent chains them on that retry.
        db.session.rollback()
        logger.exception(
            "balance chain failed for SMS %s", ", ".join(text[1].public_id for text in texts)
        )
        for _, sms, _, _ in texts:
            hold_unchecked(sms, device.brand)
        raise


def stored_rows(ids):
    """The batch's stored rows by id, loaded in one query."""
    if not ids:
        return {}
    rows = db.session.execute(db.select(InboundSms).where(InboundSms.id.in_(ids))).scalars()
    return {sms.id: sms for sms in rows}


def hold_unchecked(sms, brand):
    """A strict brand's credit whose chain step failed waits for review rather than paying
    unchecked.
    """
    db.session.refresh(sms)
    if brand.sms_chain_mode == "strict" and sms.status == SMS_UNMATCHED:
        with unit_of_work():
            hold_unverified_credit(sms, UNCHECKED)


def rechain_resent(device, pending, templates, receivers):
    """Chain a text sent again (the phone's retry) whose chain step never ran, and pay it if it
    follows.

    A request that dies between storing a text and chaining it leaves a gap that would hold every
    later credit of the chain for review: the retry fills it, and healing releases those credits.
    Returns the public ids of the texts whose chain step failed again: each is held unchecked, and
    the caller fails the batch so that the phone sends it once more. A step whose connection died
    is held and raised instead: ingest_batch sends the batch again on a fresh connection.
    """
    unchained = []
    for result, values in pending:
        ref = result.get("server_ref")
        if (
            result["status"] != "duplicate"
            or values["balance"] is None
            or ref == values["public_id"]
        ):
            continue  # new, not a wallet text, or a second text with a stored TrxID (never chained)
        sms = db.session.execute(
            db.select(InboundSms).where(
                InboundSms.brand_id == device.brand_id, InboundSms.public_id == ref
            )
        ).scalar_one_or_none()
        if sms is None:
            continue
        link = link_of(sms)
        try:
            link = link or link_text(
                sms,
                read_text(sms.sender, sms.body, templates),
                device.brand,
                receivers.get(values["public_id"]) or "",
            )
        except Exception as error:  # noqa: BLE001 - still unchecked: held, and the batch fails
            db.session.rollback()
            logger.exception("balance chain failed again for SMS %s", sms.public_id)
            # Held before matching runs: a text whose first request died before holding it is
            # still `unmatched`, and match_resent must not pay it unchecked.
            hold_unchecked(sms, device.brand)
            if isinstance(error, DBAPIError) and error.connection_invalidated:
                raise  # the connection died, not the step: ingest_batch sends the batch again
            unchained.append(sms.public_id)
            continue
        db.session.refresh(sms)
        if (
            link is not None
            and link.status != "broken"
            and (sms.review_reason or "").startswith(UNCHECKED)
        ):
            with unit_of_work():
                release_verified_credit(sms)
    return unchained


def batch_answer(results):
    """What the phone is told about a batch: each text's result, and how many were accepted,
    duplicate or rejected.
    """
    counts = {
        status: sum(1 for r in results if r["status"] == status)
        for status in ("accepted", "duplicate", "rejected")
    }
    return {"results": results, **counts}


def match_resent(brand_id, sent):
    """A text forwarded again (the phone's retry after a failed batch) settles its stored copy if
    still unmatched.

    `sent` holds (result, provider, TrxID) of the batch's parsed texts; only those answered
    `duplicate` are looked at, so a batch of new texts costs nothing more.
    """
    slots = {
        (provider, trx_id) for result, provider, trx_id in sent if result["status"] == "duplicate"
    }
    if slots:
        match_stranded_credits(brand_id, slots)


def device_key(device):
    """The device's SMS key; one still sealed under a SECRET_KEY fallback is re-sealed under
    SECRET_KEY now.
    """
    key, current = unseal_device_key(device.aes_key_sealed, device.uuid)
    if not current:
        # Guarded on the old value: of two batches re-sealing at once, one writes; either seal opens
        # the same key.
        sealed = device.aes_key_sealed
        db.session.execute(
            db.update(Device)
            .where(Device.id == device.id, Device.aes_key_sealed == sealed)
            .values(aes_key_sealed=seal_device_key(key, device.uuid))
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
        db.session.refresh(device)
    return key


def match_stored(stored):
    """Match the batch's new credits: those whose TrxID someone claimed, then bank alerts (no TrxID)
    against the live bank claims of their amount (bank_matching.py)."""
    match_new_credits(
        [
            (values["id"], values["provider"], values["provider_trx_id"])
            for values in stored
            if values["status"] == SMS_UNMATCHED
        ]
    )
    match_bank_credits(
        [
            values["id"]
            for values in stored
            if values["status"] == SMS_UNMATCHED
            and values["provider"] == BANK
            and values.get("incoming")
            and not values["provider_trx_id"]
        ]
    )


def rejected(item, reason):
    """The result of a message that was not stored, and why."""
    local_id = item.get("local_id") if isinstance(item, dict) else None
    return {
        "local_id": None if local_id is None else str(local_id)[:64],
        "status": "rejected",
        "server_ref": None,
        "reason": reason,
    }


def open_message(key, item):
    """Validate and decrypt one companion-app item: a ForwardedText, or its rejection."""
    try:
        message = MESSAGE.load(item if isinstance(item, dict) else {})
    except ma.ValidationError as error:
        fields = (
            ", ".join(sorted(error.messages)) if isinstance(error.messages, dict) else "message"
        )
        return rejected(item, f"invalid fields: {fields}")
    try:
        plaintext = decrypt_payload(key, message["encrypted_payload"])
    except PayloadError as error:
        return rejected(item, str(error))
    body = message_text(plaintext)
    if unstorable(body):
        # The schema saw only the ciphertext; a NUL or lone surrogate (JSON-escaped too) fits no
        # column, and failing the batch on it would make the phone resend its good texts forever.
        return rejected(item, f"invalid fields: encrypted_payload ({UNSTORABLE_MESSAGE})")
    if not body.strip():
        return rejected(item, "The decrypted text is empty.")
    return ForwardedText(
        message["local_id"],
        message["sender"],
        body,
        message["received_at"],
        message_receiver(plaintext),
    )


def read_forwarded(device, templates, text):
    """Parse one forwarded text: (result, row values, receiving number, parse), or (rejection,
    None, None, None)."""
    if not isinstance(text, ForwardedText):
        return text, None, None, None
    if not text.body.strip():
        return rejected({"local_id": text.local_id}, "The text is empty."), None, None, None
    parsed = read_text(text.sender, text.body, templates)
    values = sms_values(
        device, text.sender, text.body, text.received_at, text.local_id, parsed, text.livemode
    )
    return (
        {"local_id": text.local_id, "status": "accepted", "server_ref": values["public_id"]},
        values,
        text.receiver,
        parsed,
    )


def store(device, pending):
    """Insert the batch's new texts in one transaction; on a race with another batch, one by one."""
    fresh = screen(device.brand_id, pending)
    if not fresh:
        return []
    # One lock order for every batch (by content hash), so two overlapping batches cannot deadlock.
    fresh.sort(key=lambda pair: pair[1]["content_hash"])
    try:
        insert(device, [values for _, values in fresh])
        return [values for _, values in fresh]
    except (IntegrityError, OperationalError):
        db.session.rollback()
    stored = []
    for result, values in fresh:
        for _ in range(2):  # a second look sees what the concurrent batch stored
            if not screen(device.brand_id, [(result, values)]):
                if result["server_ref"] == values["public_id"]:
                    # Our own row: the INSERT's commit landed though its answer was lost (the
                    # connection died). Answered `duplicate`, it would never be chained.
                    result["status"] = (
                        "duplicate" if values["status"] == "duplicate" else "accepted"
                    )
                    values["id"] = stored_id(device.brand_id, values["public_id"])
                    stored.append(values)
                break
            try:
                insert(device, [values])
            except IntegrityError:
                db.session.rollback()
                continue
            stored.append(values)
            break
    return stored


def stored_id(brand_id, public_id):
    """The id of a text this batch stored."""
    return db.session.execute(
        db.select(InboundSms.id).where(
            InboundSms.brand_id == brand_id, InboundSms.public_id == public_id
        )
    ).scalar_one()


def insert(device, rows):
    """Write rows and the device's last_sms_at in one commit; rows get their ids."""
    db.session.execute(
        db.update(Device)
        .where(Device.id == device.id)
        .values(last_sms_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    # Ids are paired by public id: without asking for parameter order, both engines insert the
    # whole batch in one INSERT … RETURNING instead of one statement per row.
    ids = dict(
        db.session.execute(
            db.insert(InboundSms).returning(InboundSms.public_id, InboundSms.id), rows
        ).all()
    )
    db.session.commit()
    for values in rows:
        values["id"] = ids[values["public_id"]]


def screen(brand_id, pending):
    """Drop texts already stored (result `duplicate`); a second text with a stored TrxID is kept as
    `duplicate`.
    """
    hashes = {values["content_hash"] for _, values in pending}
    known = dict(
        db.session.execute(
            db.select(InboundSms.content_hash, InboundSms.public_id).where(
                InboundSms.brand_id == brand_id, InboundSms.content_hash.in_(hashes)
            )
        ).all()
    )
    trx_ids = {values["provider_trx_id"] for _, values in pending if values["provider_trx_id"]}
    known_trx = (
        {
            (provider, trx): ref
            for provider, trx, ref in db.session.execute(
                db.select(
                    InboundSms.provider, InboundSms.provider_trx_id, InboundSms.public_id
                ).where(InboundSms.brand_id == brand_id, InboundSms.provider_trx_id.in_(trx_ids))
            ).all()
        }
        if trx_ids
        else {}
    )
    fresh = []
    for result, values in pending:
        if values["content_hash"] in known:
            result.update(status="duplicate", server_ref=known[values["content_hash"]])
            continue
        slot = (values["provider"], values["provider_trx_id"])
        if values["provider_trx_id"] and slot in known_trx:
            values.update(
                status="duplicate",
                provider_trx_id=None,
                review_reason=f"TrxID {slot[1]} already received in SMS {known_trx[slot]}",
            )
            result.update(status="duplicate")
        elif values["provider_trx_id"]:
            known_trx[slot] = values["public_id"]
        known[values["content_hash"]] = values["public_id"]
        fresh.append((result, values))
    return fresh
