"""A person who signs in to the merchant panel, with a role (gateway/accounts/roles.py) and optional
two-factor.
"""

import hashlib
import hmac

from flask import current_app
from flask_login import UserMixin
from sqlalchemy.orm import validates
from werkzeug.security import check_password_hash, generate_password_hash

from ...clock import utcnow
from ...db_types import UTCDateTime, row_id
from ...extensions import db
from ..roles import ADMIN_ROLES, LEGACY_ROLES, ROLES

__all__ = ["ROLES", "RecoveryCode", "User"]


class User(UserMixin, db.Model):
    __tablename__ = "users"

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False, index=True)
    email = db.Column(db.String(254), nullable=False, unique=True)
    name = db.Column(db.String(120))
    password_hash = db.Column(db.String(255), nullable=False)
    role = db.Column(db.String(20), nullable=False, default="staff")
    active = db.Column(db.Boolean, nullable=False, default=True)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    last_login_at = db.Column(UTCDateTime)
    # Part of every session id: bumping it (sign-out, deactivation, a role change) ends every
    # session.
    session_version = db.Column(db.Integer, nullable=False, default=0)
    # Two-factor sign-in: the TOTP secret sealed with a key derived from SECRET_KEY (never shown
    # again), when it was confirmed, and the last time step accepted (a code is never accepted
    # twice).
    totp_secret_sealed = db.Column(db.String(255))
    totp_enabled_at = db.Column(UTCDateTime)
    totp_last_step = db.Column(db.BigInteger)

    brand = db.relationship("Brand")

    @validates("role")
    def known_role(self, key, role):
        """A role of the table; `super_admin` (before revision 0007) becomes `owner`."""
        role = LEGACY_ROLES.get(role, role)
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        return role

    @property
    def is_active(self):
        return self.active

    @property
    def is_super_admin(self):
        """Owners and admins: the roles that manage keys, users and settings (kept for older
        callers).
        """
        return self.role in ADMIN_ROLES

    @property
    def two_factor_enabled(self):
        """Whether sign-in asks this user for a code after the password."""
        return self.totp_enabled_at is not None and self.totp_secret_sealed is not None

    def set_password(self, password):
        """Store a salted hash of the password, never the password."""
        self.password_hash = generate_password_hash(
            password, current_app.config["PASSWORD_HASH_METHOD"]
        )

    def check_password(self, password):
        """Whether the password matches the stored hash."""
        return check_password_hash(self.password_hash, password)

    def session_stamp(self):
        """A digest of the password hash and session version: either changing ends every older
        session.
        """
        material = f"{self.password_hash}:{self.session_version or 0}"
        return hashlib.sha256(material.encode()).hexdigest()[:32]

    def get_id(self):
        """What the session keeps: the id and the stamp, so a session from before a password change
        is refused.
        """
        return f"{self.id}:{self.session_stamp()}"

    @classmethod
    def from_session_id(cls, session_id):
        """The active user a session id names, if its stamp still matches the password; else
        None."""
        user_id, _, stamp = str(session_id).partition(":")
        user_id = row_id(user_id)
        user = db.session.get(cls, user_id) if user_id is not None else None
        if user is None or not user.active or not hmac.compare_digest(stamp, user.session_stamp()):
            return None
        return user


class RecoveryCode(db.Model):
    """One of a user's ten single-use recovery codes, stored as a hash; `used_at` is set once,
    guarded.
    """

    __tablename__ = "user_recovery_codes"

    id = db.Column(db.Integer, primary_key=True)
    user_id = db.Column(
        db.Integer, db.ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    code_hash = db.Column(db.String(64), nullable=False)
    used_at = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
