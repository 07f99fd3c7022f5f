"""Every table, imported in one place so that db.metadata (create_all, Alembic) and the mappers know
them all.
"""

from .accounts.models import api_key, audit, brand, idempotency, rate_limit, user  # noqa: F401
from .compat.models import compat  # noqa: F401
from .devices.models import device, notification  # noqa: F401
from .invoices.models import invoice  # noqa: F401
from .links.models import link  # noqa: F401
from .mail.models import mail  # noqa: F401
from .notifications.models import notification as merchant_notification  # noqa: F401
from .payments.models import currency, customer, payment, payment_method, payment_proof  # noqa: F401
from .sms.models import balance_chain, inbound_sms, outbound_sms, sms_template  # noqa: F401
from .wallets import models as wallets  # noqa: F401
from .webhooks.models import endpoint, event, webhook  # noqa: F401
