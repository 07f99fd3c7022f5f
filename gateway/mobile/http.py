"""Request and response plumbing shared by the companion-app views."""
import marshmallow as ma
from flask import jsonify, request

from ..api.resource import check_json_body
from ..errors import ApiError, flatten_messages


def load(schema_cls, location="json"):
    """The validated body (or query string); 4xx in the envelope with the fields at fault."""
    if location == "json":
        check_json_body()
        payload = request.get_json(silent=True)
        payload = {} if payload is None else payload
    else:
        payload = request.args.to_dict()
    try:
        return schema_cls().load(payload)
    except ma.ValidationError as error:
        raise ApiError(422, "VALIDATION_ERROR", "The request has invalid fields.",
                       flatten_messages(error.messages)) from error


def ok(data, status=200):
    """The success envelope `{success: true, data}`."""
    return jsonify({"success": True, "data": data}), status
