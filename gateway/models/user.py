"""A person who signs in to the merchant panel; super-administrators may also authorise key operations."""
from flask_login import UserMixin
from werkzeug.security import check_password_hash, generate_password_hash

from ..clock import utcnow
from ..extensions import db
from .types import UTCDateTime

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
        self.password_hash = generate_password_hash(password)

    def check_password(self, password):
        """Whether the password matches the stored hash."""
        return check_password_hash(self.password_hash, password)
