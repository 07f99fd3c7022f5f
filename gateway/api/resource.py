"""The blueprint every API resource is built on: auth, body checks, idempotency, rate limit."""

import json

from flask import current_app, request
from flask_smorest import Blueprint

from ..answer_commit import read_outside_a_transaction
from ..db_types import unstorable
from ..errors import ApiError, not_found
from . import idempotency
from .auth import authenticate, require_super_admin

BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def resource_blueprint(
    name, description, extra_scopes=(), super_admin=False, idempotent=True, thing=None
):
    """A flask-smorest Blueprint whose every request is authenticated and checked.

    `idempotent=False` ignores Idempotency-Key, for answers that must never be stored (key secrets).
    `thing` names the resource in its 404 code (`payment` gives PAYMENT_NOT_FOUND); the default is
    the name without its plural "s".
    """
    blp = Blueprint(name, __name__ + "." + name, description=description)
    blp.thing = thing or name.replace("-", "_").removesuffix("s")
    blp.read_with_key = {}  # endpoint: (companion subquery, view args -> its bind parameters)
    blp.brand_with_key = set()  # endpoints whose key is read with its brand

    @blp.before_request
    def guard():
        companion, params = companion_of(blp)
        if companion is not None and request.method == "GET":
            read_outside_a_transaction()  # the key with its companion is all the request reads
        # Counts it against the key's rate limit.
        authenticate(extra_scopes, companion, params, request.endpoint in blp.brand_with_key)
        if super_admin:
            require_super_admin()
        check_path_arguments()
        check_json_body()
        return idempotency.replay_or_reserve() if idempotent else None

    if idempotent:
        blp.after_request(idempotency.store_response)
    return blp


def read_with_key(blp, view, companion, params):
    """Have `view` of `blp` find its row on its API key's row: `companion` (a subquery with a
    `brand_id` column) is outer-joined on the key's brand and read in the key's own round trip, with
    the bind parameters `params(view_args)`. The view reads its columns from `g.api_key`.
    """
    blp.read_with_key[f"{blp.name}.{view.__name__}"] = (companion, params)


def brand_with_key(blp, view):
    """Have `view` of `blp`, which works on its brand (caller_brand), find the brand in its API
    key's round trip."""
    blp.brand_with_key.add(f"{blp.name}.{view.__name__}")


def companion_of(blp):
    """(companion, params) the current request reads with its key, or (None, None)."""
    companion = blp.read_with_key.get(request.endpoint)
    if companion is None or unstorable(request.view_args):
        return None, None  # a NUL id is the guard's 404, after the key (check_path_arguments)
    return companion[0], companion[1](request.view_args or {})


def check_path_arguments():
    """No id holds a NUL character, and PostgreSQL cannot even compare one: the resource's 404
    before a query.
    """
    if unstorable(request.view_args):
        raise not_found(current_app.blueprints[request.blueprint].thing)


def check_json_body():
    """A body, when sent, must be UTF-8 JSON that parses (415 and 400 otherwise).

    RFC 8259 makes JSON UTF-8 and gives application/json no charset parameter, so a declared
    charset is ignored and the bytes are decoded as UTF-8 only: a UTF-16 or Latin-1 body, or a
    byte order mark, is INVALID_JSON, exactly as the argument parser would read it.
    """
    if request.method not in BODY_METHODS:
        return
    raw = request.get_data(cache=True)
    if not raw.strip():
        return
    if not request.is_json:
        raise ApiError(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            "Send the body as JSON with `Content-Type: application/json`.",
        )
    try:
        json.loads(raw.decode("utf-8"))
    except (
        ValueError,
        RecursionError,
    ):  # undecodable bytes, bad syntax, absurd nesting or integer length
        raise ApiError(400, "INVALID_JSON", "The request body is not valid UTF-8 JSON.") from None
