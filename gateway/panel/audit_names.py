"""What each audit-log action is called in the panel's languages (the log keeps the machine name)."""

from flask_babel import lazy_gettext as _l

ACTION_NAMES = {
    "api_key.generate": _l("API key created"),
    "api_key.revoke": _l("API key revoked"),
    "customer.delete": _l("Customer deleted"),
    "customer.update": _l("Customer edited"),
    "device.pairing_code": _l("Pairing code made"),
    "device.revoke": _l("Phone revoked"),
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
    "payment_method.add": _l("Receiving number added"),
    "payment_method.enable": _l("Receiving number switched on"),
    "payment_method.disable": _l("Receiving number switched off"),
    "settings.update": _l("Settings changed"),
    "sign_in": _l("Signed in"),
    "sign_in.failed": _l("Sign-in refused"),
    "sign_out": _l("Signed out"),
    "sms.ignore": _l("Text set aside"),
    "sms.match": _l("Text matched by hand"),
    "sms_template.create": _l("SMS template added"),
    "sms_template.delete": _l("SMS template deleted"),
    "sms_template.enable": _l("SMS template switched on"),
    "sms_template.disable": _l("SMS template switched off"),
    "user.invite": _l("User invited"),
    "user.deactivate": _l("User deactivated"),
    "user.reactivate": _l("User reactivated"),
    "webhook.test": _l("Test webhook sent"),
    "webhook.url_update": _l("Webhook address changed"),
    "webhook_delivery.redeliver": _l("Webhook sent again"),
    "webhook_secret.rotate": _l("Webhook secret replaced"),
    "webhook_secret.view": _l("Webhook secret shown"),
}


def audit_action(action):
    """An audit action as people read it, in the page's language; an unknown one as it was recorded."""
    return ACTION_NAMES.get(action, action)
