"""A person who signs in to the merchant panel; super-administrators may also authorise key operations."""

import hashlib
import hmac

from flask import current_app
from flask_login import UserMixin
from werkzeug.security import check_password_hash, generate_password_hash

from ...clock import utcnow
from ...db_types import UTCDateTime, row_id
from ...extensions import db

ROLES = ("super_admin", "staff")


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

    brand = db.relationship("Brand")

    @property
    def is_active(self):
        return self.active

    @property
    def is_super_admin(self):
        return self.role == "super_admin"

    def set_password(self, password):
        """Store a salted hash of the password, never the password."""
        self.password_hash = generate_password_hash(
            password, current_app.config["PASSWORD_HASH_METHOD"]
        )

    def check_password(self, password):
        """Whether the password matches the stored hash."""
        return check_password_hash(self.password_hash, password)

    def session_stamp(self):
        """A digest of the password hash: it changes with the password, ending every older session."""
        return hashlib.sha256(self.password_hash.encode()).hexdigest()[:32]

    def get_id(self):
        """What the session keeps: the id and the stamp, so a session from before a password change is refused."""
        return f"{self.id}:{self.session_stamp()}"

    @classmethod
    def from_session_id(cls, session_id):
        """The active user a session id names, if its stamp still matches the password; else None."""
        user_id, _, stamp = str(session_id).partition(":")
        user_id = row_id(user_id)
        user = db.session.get(cls, user_id) if user_id is not None else None
        if user is None or not user.active or not hmac.compare_digest(stamp, user.session_stamp()):
            return None
        return user
