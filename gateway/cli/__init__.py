"""The `flask gateway` command line: a front door like the API, the checkout and the panel.

Every command is listed here; no module registers a command as a side effect of being imported.
"""

from flask.cli import AppGroup

from . import checkout, compat, core, currencies, forwarders, jobs, mobile, ops

COMMANDS = (
    core.bootstrap,
    core.create_admin,
    core.create_key,
    core.revoke_key_command,
    core.reset_two_factor_command,
    compat.create_compat_key,
    compat.list_compat_keys_command,
    compat.revoke_compat_key_command,
    checkout.add_method_command,
    checkout.update_method_command,
    checkout.list_methods_command,
    currencies.set_currency_command,
    mobile.pair_code,
    mobile.simulate_sms,
    forwarders.add_forwarder,
    forwarders.list_forwarders_command,
    forwarders.revoke_forwarder_command,
    jobs.worker,
    jobs.sweep,
    jobs.rotate_webhook_secret_command,
    ops.backup,
    ops.doctor,
)


def gateway_cli():
    """The `flask gateway` group with every command above (Flask gives each one the app context)."""
    group = AppGroup("gateway", help="Operate the payment gateway.")
    for command in COMMANDS:
        group.add_command(command)
    return group
