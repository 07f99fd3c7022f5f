"""What each audit-log action, and each detail it records, is called in the panel's languages (the
log keeps the machine names)."""

from ..i18n import lazy_gettext as _l

ACTION_NAMES = {
    "api_key.generate": _l("API key created"),
    "api_key.revoke": _l("API key revoked"),
    "compat_key.generate": _l("Compatibility key created"),
    "compat_key.revoke": _l("Compatibility key revoked"),
    "customer.delete": _l("Customer deleted"),
    "customer.update": _l("Customer edited"),
    "device.forwarder_add": _l("Phone added"),
    "device.pairing_code": _l("Pairing code made"),
    "device.revoke": _l("Phone revoked"),
    "notification_settings.update": _l("Notification settings changed"),
    "invoice.create": _l("Invoice created"),
    "invoice.update": _l("Invoice edited"),
    "invoice.send": _l("Invoice sent"),
    "invoice.void": _l("Invoice voided"),
    "invoice.prefix": _l("Invoice number prefix changed"),
    "mail_settings.update": _l("E-mail settings changed"),
    "outbound_sms.queue": _l("Text queued"),
    "outbound_sms.retry": _l("Text retried"),
    "password.change": _l("Password changed"),
    "payment.approve": _l("Payment approved"),
    "payment.cancel": _l("Payment cancelled"),
    "payment.refund": _l("Payment refunded"),
    "payment.reject": _l("Payment rejected"),
    "payment.complete_late": _l("Completed after late money arrived"),
    "payment.return_late": _l("Late money returned to the customer"),
    "payment_link.create": _l("Payment link created"),
    "payment_link.update": _l("Payment link changed"),
    "payment_link.disable": _l("Payment link turned off"),
    "payment_link.enable": _l("Payment link turned on"),
    "payment_method.add": _l("Receiving number added"),
    "payment_method.enable": _l("Receiving number switched on"),
    "payment_method.disable": _l("Receiving number switched off"),
    "settings.update": _l("Settings changed"),
    "settings.security": _l("Security settings changed"),
    "sign_in": _l("Signed in"),
    "sign_in.failed": _l("Sign-in refused"),
    "sign_in.two_factor_failed": _l("Two-factor code refused"),
    "sign_out": _l("Signed out"),
    "sms.balance_start": _l("Starting balance set"),
    "sms.chain_mode": _l("Balance check mode changed"),
    "sms.ignore": _l("Text set aside"),
    "sms.match": _l("Text matched by hand"),
    "sms_template.create": _l("SMS template added"),
    "test_data.delete": _l("All test data deleted"),
    "sms_template.delete": _l("SMS template deleted"),
    "sms_template.enable": _l("SMS template switched on"),
    "sms_template.disable": _l("SMS template switched off"),
    "two_factor.enable": _l("Two-factor sign-in turned on"),
    "two_factor.disable": _l("Two-factor sign-in turned off"),
    "two_factor.recovery_codes": _l("New recovery codes made"),
    "user.invite": _l("User invited"),
    "user.role": _l("User's role changed"),
    "user.deactivate": _l("User deactivated"),
    "user.reactivate": _l("User reactivated"),
    "webhook.test": _l("Test webhook sent"),
    "webhook.url_update": _l("Webhook address changed"),
    "webhook_delivery.redeliver": _l("Webhook sent again"),
    "webhook_secret.rotate": _l("Webhook secret replaced"),
    "webhook_secret.view": _l("Webhook secret shown"),
}


def audit_action(action):
    """An audit action as people read it, in the page's language; an unknown one as it was
    recorded."""
    return ACTION_NAMES.get(action, action)


DETAIL_NAMES = {
    "changed": _l("Changed"),
    "channels": _l("Channels"),
    "currency": _l("Currency"),
    "device_id": _l("Phone"),
    "dialect": _l("Plugin"),
    "display_prefix": _l("Key"),
    "event": _l("Event"),
    "expires_at": _l("Expires"),
    "label": _l("Label"),
    "language": _l("Language"),
    "mode": _l("Mode"),
    "name": _l("Name"),
    "number": _l("Number"),
    "pattern": _l("Pattern"),
    "prefix": _l("Prefix"),
    "provider": _l("Provider"),
    "reason": _l("Reason"),
    "review_reason": _l("Review reason"),
    "role": _l("Role"),
    "scopes": _l("Scopes"),
    "second_factor": _l("Second factor"),
    "slug": _l("Link address"),
    "status": _l("Status"),
    "to": _l("To"),
    "total": _l("Total"),
    "trx_id": _l("TrxID"),
    "url": _l("Address"),
    "webhook_url": _l("Webhook address"),
}


def audit_detail(key):
    """A detail's name as people read it, in the page's language; an unknown one made readable."""
    return DETAIL_NAMES.get(key) or str(key).replace("_", " ").capitalize()
