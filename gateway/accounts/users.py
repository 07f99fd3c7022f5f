"""Panel users: sign-in checks, invitations with a one-time password, deactivation, password changes."""

import secrets
from functools import cache

from flask import current_app
from marshmallow import ValidationError, validate
from sqlalchemy.exc import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import AlreadyExists, field_error, invalid_state, not_found
from ..extensions import db
from .models.user import ROLES, User

MIN_PASSWORD_LENGTH = 8
MAX_EMAIL_LENGTH = 254


@cache
def dummy_hash(method):
    """A hash checked when the e-mail is unknown, so a wrong address takes as long as a wrong password."""
    return generate_password_hash(secrets.token_urlsafe(16), method)


def authenticate(email, password):
    """The active user with this e-mail and password, else None (same work either way)."""
    user = db.session.execute(
        db.select(User).where(User.email == (email or "").strip().lower())
    ).scalar_one_or_none()
    if user is None:
        check_password_hash(dummy_hash(current_app.config["PASSWORD_HASH_METHOD"]), password or "")
        return None
    if not user.check_password(password or "") or not user.active:
        return None
    user.last_login_at = utcnow()
    db.session.commit()
    return user


def find_user_by_email(email):
    """The user with this e-mail (any brand, active or not), or None."""
    return db.session.execute(
        db.select(User).where(User.email == (email or "").strip().lower())
    ).scalar_one_or_none()


def checked_email(email):
    """A lower-cased e-mail address (the API's own rule for addresses), or ValidationFailed naming `email`."""
    email = (email or "").strip().lower()
    try:
        validate.Email()(email)
    except ValidationError:
        raise field_error("email", "Enter a valid e-mail address.") from None
    if len(email) > MAX_EMAIL_LENGTH:
        raise field_error("email", f"An e-mail address has at most {MAX_EMAIL_LENGTH} characters.")
    return email


def checked_password(password, field="new_password"):
    """The password when long enough, else ValidationFailed naming the field."""
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise field_error(field, f"Use at least {MIN_PASSWORD_LENGTH} characters.")
    return password


def invite_user(brand, email, name=None, role="staff"):
    """Create a user with a temporary password; returns (user, password) — the password exists only here."""
    if role not in ROLES:
        raise field_error("role", f"Role must be one of {', '.join(ROLES)}.")
    user = User(
        brand_id=brand.id, email=checked_email(email), name=(name or "").strip() or None, role=role
    )
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    db.session.add(user)
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            "A user with this e-mail already exists.",
            [
                {
                    "field": "email",
                    "code": "taken",
                    "message": "A user with this e-mail already exists.",
                }
            ],
            code="USER_EXISTS",
        )
    return user, password


def get_user(brand, user_id):
    """A user of this brand by id; NotFound for anyone else's, or for an id no row can have."""
    user_id = row_id(user_id)
    if user_id is None:
        raise not_found("user")
    user = db.session.execute(
        db.select(User).where(User.id == user_id, User.brand_id == brand.id)
    ).scalar_one_or_none()
    if user is None:
        raise not_found("user")
    return user


def list_users(brand):
    """The brand's users, active first, then by e-mail."""
    return (
        db.session.execute(
            db.select(User)
            .where(User.brand_id == brand.id)
            .order_by(User.active.desc(), User.email)
        )
        .scalars()
        .all()
    )


def set_user_active(user, active, acting_user):
    """Deactivate (signed out on their next request) or reactivate a user; never yourself."""
    if user.id == acting_user.id:
        raise invalid_state("You cannot deactivate or reactivate yourself.")
    changed = db.session.execute(
        db.update(User)
        .where(User.id == user.id, User.active.is_(not active))
        .values(active=active)
        .execution_options(synchronize_session=False)
    ).rowcount
    if changed != 1:
        db.session.rollback()
        raise invalid_state(f"This user is already {'active' if active else 'deactivated'}.")
    commit_work()
    db.session.refresh(user)
    return user


def change_password(user, current_password, new_password):
    """Replace a user's password after checking the current one."""
    if not user.check_password(current_password or ""):
        raise field_error("current_password", "The current password is not correct.")
    if new_password == current_password:
        raise field_error("new_password", "Choose a password different from the current one.")
    user.set_password(checked_password(new_password))
    commit_work()
    return user
