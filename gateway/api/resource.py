"""The blueprint every API resource is built on: auth, body checks, idempotency, rate limit."""
from flask import request
from flask_smorest import Blueprint

from ..errors import ApiError
from . import idempotency
from .auth import authenticate, require_super_admin
from .rate_limit import check_api_rate_limit

BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def resource_blueprint(name, description, extra_scopes=(), super_admin=False, idempotent=True):
    """A flask-smorest Blueprint whose every request is authenticated and checked.

    `idempotent=False` ignores Idempotency-Key, for answers that must never be stored (key secrets).
    """
    blp = Blueprint(name, __name__ + "." + name, description=description)

    @blp.before_request
    def guard():
        check_api_rate_limit()
        authenticate(extra_scopes)
        if super_admin:
            require_super_admin()
        check_path_arguments()
        check_json_body()
        return idempotency.replay_or_reserve() if idempotent else None

    if idempotent:
        blp.after_request(idempotency.store_response)
    return blp


def check_path_arguments():
    """No id holds a NUL character, and PostgreSQL cannot even compare one: answer 404 before a query."""
    if any("\x00" in str(value) for value in (request.view_args or {}).values()):
        raise ApiError(404, "NOT_FOUND", "No such resource.")


def check_json_body():
    """A body, when sent, must be JSON that parses (415 and 400 otherwise)."""
    if request.method not in BODY_METHODS:
        return
    raw = request.get_data(cache=True)
    if not raw.strip():
        return
    if not request.is_json:
        raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the body as JSON with `Content-Type: application/json`.")
    if request.get_json(silent=True) is None:
        raise ApiError(400, "INVALID_JSON", "The request body is not valid JSON.")
