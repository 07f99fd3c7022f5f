"""Errors the domains raise, named for what went wrong and carrying a machine code; no HTTP status
here.

The front doors render them: `errors.http_status` is the one mapping to an HTTP status (the API's
envelope), the checkout's pages and the panel's flashes show `message` and branch on the type.
"""


class DomainError(Exception):
    """A refusal by a domain rule: a machine code, a message, and for input errors the fields at
    fault.
    """

    code = "ERROR"

    def __init__(self, message, errors=None, code=None):
        super().__init__(message)
        self.message = message
        self.errors = errors
        self.headers = {}
        if code is not None:
            self.code = code


class NotFound(DomainError):
    """Nothing of that kind the caller may see, e.g. code PAYMENT_NOT_FOUND."""

    def __init__(self, thing, message=None, code=None):
        super().__init__(
            message or f"No such {thing.replace('_', ' ')}.",
            code=code or f"{thing.upper()}_NOT_FOUND",
        )
        self.thing = thing


class InvalidState(DomainError):
    """The object's current state does not allow the action (INVALID_STATE)."""

    code = "INVALID_STATE"


class AlreadyExists(DomainError):
    """A unique name, e-mail or label is taken (USER_EXISTS, NAME_TAKEN…)."""


class ValidationFailed(DomainError):
    """Input a rule refuses, with the fields at fault (VALIDATION_ERROR unless more specific)."""

    code = "VALIDATION_ERROR"

    @classmethod
    def field(cls, field, message, field_code="invalid"):
        """The refusal of one field."""
        return cls(message, [{"field": field, "code": field_code, "message": message}])


class RefundExceedsRemaining(ValidationFailed):
    """A refund larger than what remains refundable on the transaction."""

    code = "REFUND_EXCEEDS_REMAINING"


class Gone(DomainError):
    """The thing exists but is no longer available (a disabled, expired or used-up payment link)."""


class NotPermitted(DomainError):
    """The signed-in user's role may not do this (e.g. staff overriding a hand match): 403."""

    code = "NOT_PERMITTED"

    def __init__(self, message, field=None):
        errors = [{"field": field, "code": "not_permitted", "message": message}] if field else None
        super().__init__(message, errors)


class Unavailable(DomainError):
    """A service we depend on (a wallet's API) could not be reached; nothing was decided: 503."""


class RefundUndecided(Unavailable):
    """A refund sent on (a wallet's API) whose answer never came: it may have been made. Nothing of
    the refund is recorded; its attempt (`pending_id`) stays pending until a later check settles it
    (REFUND_PENDING, 503)."""

    code = "REFUND_PENDING"

    def __init__(self, message, pending_id=None):
        super().__init__(message)
        self.pending_id = pending_id


class NotAuthenticated(DomainError):
    """A credential that is missing, expired, revoked or reused (device tokens)."""


def not_found(thing):
    """NotFound for a resource the caller cannot see, e.g. PAYMENT_NOT_FOUND."""
    return NotFound(thing)


def invalid_state(message):
    """InvalidState with this message."""
    return InvalidState(message)


def field_error(field, message, code="invalid"):
    """ValidationFailed naming one field at fault."""
    return ValidationFailed.field(field, message, code)
