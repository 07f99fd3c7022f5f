"""One outbox for everything sent later: webhooks, e-mail, notifications, outbound SMS."""
