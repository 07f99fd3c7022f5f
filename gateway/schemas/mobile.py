"""Request shapes of the companion app's protocol (/api/mobile/v1); its answers are in
mobile_answers.py.
"""

import marshmallow as ma
from marshmallow import fields, validate

from ..db_types import MAX_ROW_ID
from ..devices.models.device import SIMULATOR_PLATFORM
from ..sms.companion_items import ReceivedAt
from .common import BaseSchema

MAX_BATCH = 200


class PairDeviceSchema(BaseSchema):
    """Body of POST /devices."""

    pairing_code = fields.String(
        required=True,
        validate=validate.Regexp(r"^\d{6}$", error="The pairing code has six digits."),
    )
    device_id = fields.String(required=True, validate=validate.Length(min=1, max=128))
    device_name = fields.String(required=True, validate=validate.Length(min=1, max=120))
    app_version = fields.String(load_default=None, validate=validate.Length(max=32))
    # The simulator's name is reserved: a phone under it would be no phone of the brand (hidden from
    # Devices, so never revoked there) while its texts still complete payments.
    platform = fields.String(
        load_default=None,
        validate=[
            validate.Length(max=20),
            validate.NoneOf([SIMULATOR_PLATFORM], error="This platform name is reserved."),
        ],
    )
    # Pinned at pairing: every refresh must then present it, so a refresh token alone (stolen from a
    # backup, say) never rotates. OwnPay Console sends none here and its device_id at each refresh:
    # without one, the device_id is what is pinned.
    fingerprint = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=128),
        metadata={
            "description": "A stable identifier of this install; each refresh presents it. "
            "Without one, device_id is pinned as the fingerprint."
        },
    )

    @ma.pre_load
    def trim(self, data, **kwargs):
        """Codes typed by hand arrive with spaces."""
        if isinstance(data, dict) and isinstance(data.get("pairing_code"), str):
            data = {**data, "pairing_code": data["pairing_code"].replace(" ", "").strip()}
        return data


class TokenRefreshSchema(BaseSchema):
    """Body of POST /devices/token-refreshes."""

    refresh_token = fields.String(required=True, validate=validate.Length(min=1, max=2048))
    fingerprint = fields.String(
        load_default=None,
        validate=validate.Length(max=128),
        metadata={
            "description": "The fingerprint pinned at pairing (the one sent then, else the "
            "device_id): a refresh without it is refused, 401 FINGERPRINT_MISMATCH."
        },
    )


class SmsBatchSchema(BaseSchema):
    """Body of POST /sms: each message is checked on its own, so one bad item is rejected alone."""

    messages = fields.List(
        fields.Raw(
            metadata={
                "type": "object",
                "description": "{local_id, sender, encrypted_payload, received_at?}; a message "
                "that is not one is rejected alone, in its result.",
            }
        ),
        required=True,
        validate=validate.Length(
            min=1, max=MAX_BATCH, error=f"Send between 1 and {MAX_BATCH} messages per call."
        ),
    )


class HeartbeatSchema(BaseSchema):
    """Body of POST /devices/heartbeats: all optional, what the phone knows about itself."""

    # All optional: an app that sends none of them (an older one) still keeps the phone online.
    battery_level = fields.Integer(
        validate=validate.Range(min=0, max=100),
        metadata={"description": "Battery charge in percent; shown on the panel's devices page."},
    )
    is_charging = fields.Boolean(metadata={"description": "Whether the phone is charging."})
    network = fields.String(validate=validate.Length(max=40))
    signal_strength = fields.Integer(validate=validate.Range(min=-200, max=100))
    app_version = fields.String(
        validate=validate.Length(max=32),
        metadata={"description": "The companion app's version; replaces the one given at pairing."},
    )
    pending_sms = fields.Integer(validate=validate.Range(min=0, max=1_000_000))
    last_sms_at = ReceivedAt()


class AcknowledgeSchema(BaseSchema):
    """Body of POST /notifications/acknowledgements."""

    ids = fields.List(
        # A notification's id: PostgreSQL cannot compare one past its integer column (a 500).
        fields.Integer(strict=True, validate=validate.Range(min=1, max=MAX_ROW_ID)),
        required=True,
        validate=validate.Length(min=1, max=500),
    )


class OutboundLeaseArgs(BaseSchema):
    """Query of GET /sms/queues: how many messages to lease at most."""

    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=50))


class OutboundResultSchema(BaseSchema):
    """Body of POST /sms/queues/{id}/results."""

    status = fields.String(required=True, validate=validate.OneOf(("sent", "failed")))
    error = fields.String(load_default=None, validate=validate.Length(max=500))
