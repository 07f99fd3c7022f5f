"""Panel users: sign-in checks, invitations with a one-time password, roles, deactivation,
passwords, sessions.
"""

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
from .models.user import User
from .roles import ROLES, assignable_roles, may_manage

MIN_PASSWORD_LENGTH = 8
MAX_EMAIL_LENGTH = 254


@cache
def dummy_hash(method):
    """A hash checked when the e-mail is unknown, so a wrong address takes as long as a wrong
    password.
    """
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
    commit_work()
    return user


def find_user_by_email(email):
    """The user with this e-mail (any brand, active or not), or None."""
    return db.session.execute(
        db.select(User).where(User.email == (email or "").strip().lower())
    ).scalar_one_or_none()


def checked_email(email):
    """A lower-cased e-mail address (the API's own rule for addresses), or ValidationFailed naming
    `email`.
    """
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


def checked_role(role, acting_user=None):
    """A role of the table that the acting user may give (an admin cannot make owners), else
    ValidationFailed.
    """
    allowed = ROLES if acting_user is None else assignable_roles(acting_user)
    if role not in allowed:
        raise field_error("role", f"Role must be one of {', '.join(allowed)}.")
    return role


def invite_user(brand, email, name=None, role="staff", acting_user=None):
    """Create a user with a temporary password; returns (user, password) — the password exists only
    here.

    `acting_user` (the panel's signed-in user) limits the roles that may be given; the CLI gives
    any.
    """
    checked_role(role, acting_user)
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


def other_active_owners(user):
    """A guard for UPDATEs: some other active owner of the user's brand exists (the last owner
    stays).
    """
    other = db.aliased(User)
    return (
        db.select(other.id)
        .where(
            other.brand_id == user.brand_id,
            other.id != user.id,
            other.role == "owner",
            other.active.is_(True),
        )
        .exists()
    )


def lock_owners(user):
    """Lock the brand's owner rows (PostgreSQL) so two owners cannot demote each other at the same
    time.
    """
    db.session.execute(
        db.select(User.id)
        .where(User.brand_id == user.brand_id, User.role == "owner")
        .with_for_update()
    ).all()


def check_may_manage(user, acting_user, about_yourself):
    """Refuse changes to yourself or, unless an owner acts, to an owner."""
    if user.id == acting_user.id:
        raise invalid_state(about_yourself)
    if not may_manage(acting_user, user):
        raise invalid_state("Only an owner can change an owner.")


def set_user_active(user, active, acting_user):
    """Deactivate (every session ends at once) or reactivate a user; never yourself, never the last
    owner.
    """
    check_may_manage(user, acting_user, "You cannot deactivate or reactivate yourself.")
    guards = [User.id == user.id, User.active.is_(not active)]
    if not active and user.role == "owner":
        lock_owners(user)
        guards.append(other_active_owners(user))
    changed = db.session.execute(
        db.update(User)
        .where(*guards)
        .values(active=active, session_version=User.session_version + 1)
        .execution_options(synchronize_session=False)
    ).rowcount
    if changed != 1 and not active and user.role == "owner" and user.active:
        db.session.rollback()
        raise invalid_state("The last active owner cannot be deactivated.")
    if changed != 1:
        db.session.rollback()
        raise invalid_state(f"This user is already {'active' if active else 'deactivated'}.")
    commit_work()
    db.session.refresh(user)
    return user


def change_role(user, role, acting_user):
    """Give a user another role (their sessions end); an admin cannot make or unmake owners, the
    last owner stays.
    """
    check_may_manage(user, acting_user, "You cannot change your own role.")
    checked_role(role, acting_user)
    if role == user.role:
        raise field_error("role", "The user already has this role.")
    guards = [User.id == user.id, User.role == user.role]
    if user.role == "owner":
        lock_owners(user)
        guards.append(other_active_owners(user))
    changed = db.session.execute(
        db.update(User)
        .where(*guards)
        .values(role=role, session_version=User.session_version + 1)
        .execution_options(synchronize_session=False)
    ).rowcount
    if changed != 1:
        db.session.rollback()
        raise invalid_state(
            "The last active owner must stay an owner."
            if user.role == "owner"
            else "The user's role changed meanwhile; reload the page."
        )
    commit_work()
    db.session.refresh(user)
    return user


def end_sessions(user):
    """End every session of the user (signing out): a copied session cookie stops working too."""
    db.session.execute(
        db.update(User)
        .where(User.id == user.id)
        .values(session_version=User.session_version + 1)
        .execution_options(synchronize_session=False)
    )
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
