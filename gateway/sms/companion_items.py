"""One SMS of the companion app's batch (POST /api/mobile/v1/sms) as it arrives: each item is read
and checked on its own, so that a bad one is rejected alone (sms/ingest.py)."""

from datetime import datetime, timezone

import marshmallow as ma
from marshmallow import fields, validate

from ..db_types import UNSTORABLE_MESSAGE, unstorable

MAX_PAYLOAD = 16 * 1024
# The moments a phone's stamp may hold: any a phone's clock can show, wrong or not (one reset to
# 1970 still forwards real payments, so its texts are kept), and none that no brand's zone can print
# (the balance chain's times): year 1 or 9999 overflows the conversion and would fail the batch.
EARLIEST_RECEIVED = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST_RECEIVED = datetime(9000, 1, 1, tzinfo=timezone.utc)


class ReceivedAt(fields.Field):
    """When the phone received an SMS: ISO 8601 (naive means UTC) or epoch milliseconds, from
    EARLIEST_RECEIVED up to LATEST_RECEIVED.

    The companion app, both forwarders and heartbeats read their times through this one field.
    """

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                moment = datetime.fromtimestamp(value / 1000, tz=timezone.utc)
            else:
                parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
                moment = (
                    parsed.replace(tzinfo=timezone.utc)
                    if parsed.tzinfo is None
                    else parsed.astimezone(timezone.utc)
                )
        except (TypeError, ValueError, OverflowError, OSError) as error:
            raise ma.ValidationError("Send the time as ISO 8601 or epoch milliseconds.") from error
        if not EARLIEST_RECEIVED <= moment < LATEST_RECEIVED:
            raise ma.ValidationError(
                "The time is before 1970 or after 8999: check the phone's date and time."
            )
        return moment


class LocalId(fields.Field):
    """The app's own id of a message: a string or an integer, kept as a string."""

    def _deserialize(self, value, attr, data, **kwargs):
        if (
            isinstance(value, bool)
            or not isinstance(value, (str, int))
            or not 0 < len(str(value)) <= 64
        ):
            raise ma.ValidationError(
                "local_id must be a string or integer of at most 64 characters."
            )
        return str(value)


class SmsMessageSchema(ma.Schema):
    """One forwarded SMS of a batch; unknown fields are ignored, as in every request."""

    class Meta:
        unknown = ma.EXCLUDE
        ordered = True

    local_id = LocalId(required=True)
    sender = fields.String(required=True, validate=validate.Length(min=1, max=64))
    encrypted_payload = fields.String(
        required=True, validate=validate.Length(min=1, max=MAX_PAYLOAD)
    )
    received_at = ReceivedAt(load_default=None)

    @ma.pre_load
    def refuse_unstorable_values(self, data, **kwargs):
        """A NUL or a lone surrogate in a field rejects the item, before it reaches a column."""
        if isinstance(data, dict):
            bad = sorted(name for name in self.load_fields if unstorable(data.get(name)))
            if bad:
                raise ma.ValidationError({name: [UNSTORABLE_MESSAGE] for name in bad})
        return data
