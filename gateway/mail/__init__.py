"""E-mail: each brand's SMTP settings, and an outbox of messages sent by a background job."""
