"""The layout is the architecture: front doors import domains, domains never import front doors, no
new cycles.
"""

import ast
from itertools import combinations
from pathlib import Path

GATEWAY = Path(__file__).resolve().parent.parent / "gateway"
FRONT_DOORS = {"api", "checkout", "panel", "mobile", "cli", "compat"}
DOMAINS = {
    "payments",
    "sms",
    "webhooks",
    "devices",
    "accounts",
    "jobs",
    "mail",
    "invoices",
    "notifications",
    "links",
    "reports",
}


def module_name(path):
    """The dotted module name of a file under gateway/."""
    parts = path.relative_to(GATEWAY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name):
    """Whether a dotted name under gateway is a module or package on disk."""
    path = GATEWAY.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imported_modules(source, name, is_package):
    """Every gateway module that source (the module `name`) imports, at module level or inside a
    function.
    """
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # `from .. import jobs` imports the module gateway.jobs
                found.add(
                    f"{target}.{alias.name}" if is_module(f"{target}.{alias.name}") else target
                )
    return {module for module in found if module == "gateway" or module.startswith("gateway.")}


def component(module):
    """The package a module belongs to: gateway.sms.matching -> sms; gateway.clock -> clock."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def import_edges():
    """(importer, imported) module pairs over every file of gateway/."""
    edges = set()
    for path in GATEWAY.rglob("*.py"):
        name = module_name(path)
        for imported in imported_modules(path.read_text(), name, path.name == "__init__.py"):
            edges.add((name, imported))
    return edges


def front_door_imports(edges):
    """Imports from a domain into a front door, as 'importer -> imported'."""
    return sorted(
        f"{a} -> {b}" for a, b in edges if component(a) in DOMAINS and component(b) in FRONT_DOORS
    )


def domain_cycles(edges):
    """Pairs of domains that import each other, each with one import of either direction."""
    between = {}
    for a, b in edges:
        pair = (component(a), component(b))
        if pair[0] in DOMAINS and pair[1] in DOMAINS and pair[0] != pair[1]:
            between.setdefault(pair, f"{a} -> {b}")
    return {
        tuple(sorted((x, y))): (between[(x, y)], between[(y, x)])
        for x, y in combinations(sorted(DOMAINS), 2)
        if (x, y) in between and (y, x) in between
    }


def test_no_domain_imports_a_front_door():
    assert front_door_imports(import_edges()) == []


def test_no_two_domains_import_each_other():
    """Function-level imports count too; a domain reacts to another's news through signals
    instead."""
    assert domain_cycles(import_edges()) == {}


def test_a_function_level_import_of_a_front_door_from_a_domain_is_caught():
    source = "def f():\n    from ..api.paging import paginate\n"
    edges = {("gateway.sms.inbox", m) for m in imported_modules(source, "gateway.sms.inbox", False)}
    assert front_door_imports(edges) == ["gateway.sms.inbox -> gateway.api.paging"]


def test_a_cycle_between_two_domains_is_caught():
    edges = {
        ("gateway.sms.matching", "gateway.payments.lifecycle"),
        ("gateway.payments.refunds", "gateway.sms.claims"),
    }
    assert domain_cycles(edges) == {
        ("payments", "sms"): (
            "gateway.payments.refunds -> gateway.sms.claims",
            "gateway.sms.matching -> gateway.payments.lifecycle",
        )
    }


def test_no_production_code_calls_the_app_through_a_test_client():
    calls = [
        f"{path.relative_to(GATEWAY.parent)}:{node.lineno}"
        for path in GATEWAY.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in ("test_client", "test_cli_runner")
    ]
    assert calls == []


def test_every_cli_command_is_in_the_one_list_that_registers_them():
    import click

    from gateway import cli

    defined = {
        value
        for module in (
            cli.checkout,
            cli.compat,
            cli.core,
            cli.forwarders,
            cli.jobs,
            cli.mobile,
            cli.ops,
        )
        for value in vars(module).values()
        if isinstance(value, click.Command)
    }
    assert defined == set(cli.COMMANDS)
    assert sorted(cli.gateway_cli().commands) == sorted(command.name for command in cli.COMMANDS)


# Units of work (gateway/answer_commit.py): a front door opens one, the services inside end with
# commit_work() (which only flushes there) and the unit commits once. These functions commit
# themselves, each for the reason given; any other function that commits fails the test below.
OWN_COMMITS = {
    "answer_commit.commit_work": "the one commit of a unit of work, or of a service outside one",
    "extensions.commit_without_expiring": "commit_work(keep_loaded=True): rows stay loaded",
    "accounts.rate_limit_store.count_hit": "own connection: a hit counts whatever the request does",
    "accounts.rate_limit_store.reset": "own connection: the limiter's store",
    "accounts.rate_limit_store.clear": "own connection: the limiter's store",
    "accounts.rate_limit_store.prune_rate_limit_counters": "the pruning job, own connection",
    "api.auth.touch_last_used": "a key's last use is written when checked, whatever follows",
    "api.idempotency.reserve": "the key's reservation commits before the work it guards starts",
    "api.idempotency.release_reservation": "a failed request frees its key for the retry",
    "api.idempotency.commit_with_answer": "a keyed request's one commit: its work with its answer",
    "api.idempotency.prune_idempotency_records": "the pruning job: one delete, one commit",
    "compat.keys.find_compat_key": "a key's last use is written when checked, whatever follows",
    "devices.pairing.count_wrong_guess": "a wrong guess counts though its refusal rolls back",
    "devices.tokens.refused_reuse": "a reused token's device stays unpaired though refused",
    "devices.forwarders.signing_key": "a re-sealed signing key commits whatever follows",
    "outbox.attempts.make_attempt": "lease committed before the slow send, outcome after",
    "outbox.sweep.sweep_outbox": "returned leases commit before the sweep's wake-ups",
    "sms.balance_chain.lock_chains": "texts commit before their chains lock: short locks",
    "sms.balance_chain.create_chain": "a new chain row commits alone: racing texts find it",
    "sms.balance_chain.link_texts": "the chaining commits once, before credits are released",
    "sms.balance_chain.settle_unsettled": "the settle-chains job commits what it settles",
    "sms.claims.stranded_credit_ids": "ends its read: each stranded credit matches apart",
    "sms.ingest.hold_unchecked": "a held credit commits before the failed batch answers",
    "sms.ingest.device_key": "a re-sealed device key commits whatever follows",
    "sms.ingest.insert": "texts are stored before matching: a failed match loses none",
    "sms.matching.submit_claim": "the claim commits before matching: a racing SMS finds it",
    "sms.matching.hold_for_review": "each guarded matching step commits alone",
    "sms.matching.flag_rival_claims": "each guarded matching step commits alone",
    "sms.matching.bind_held_sms": "each guarded matching step commits alone",
    "sms.matching.release_verified_credit": "each guarded matching step commits alone",
    "sms.matching.flag_lost_claim": "each guarded matching step commits alone",
    "sms.matching.flag_lost_claims": "the sweep's flags commit together, before wake-ups",
    "sms.matching.expire_overdue_claim": "each guarded matching step commits alone",
    "sms.matching.bind_late_sms": "each guarded matching step commits alone",
    "sms.outbound.lease_outbound_sms": "the lease commits before the device sends",
    "sms.outbound.report_outbound_sms": "the device's report commits its message's outcome",
    "webhooks.delivery.claim_delivery": "the claim commits before the HTTP call (async on PG)",
    "webhooks.delivery.commit_claim": "the claim commits before the HTTP call (async on PG)",
    "webhooks.delivery.record_attempt": "the attempt and the next state, after the call",
}


def call_name(call):
    """The name a call is made by: `f(...)` and `x.f(...)` are both calls of f."""
    function = call.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


def commits(call):
    """Whether a call commits: a session's commit(), an engine's begin(),
    commit_without_expiring()."""
    function = call.func
    if call_name(call) == "commit_without_expiring":
        return True
    if not isinstance(function, ast.Attribute):
        return False
    receiver = ast.unparse(function.value)
    return (function.attr == "commit" and receiver.endswith("session")) or (
        function.attr == "begin" and receiver.endswith("engine")
    )


def opens_a_unit(node):
    """Whether a `with` statement opens `unit_of_work()`."""
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(item.context_expr, ast.Call) and call_name(item.context_expr) == "unit_of_work"
        for item in node.items
    )


def calls_in(source):
    """(call node, innermost function around it or None, whether inside `with unit_of_work()`)."""
    found = []

    def visit(node, function, in_unit):
        for child in ast.iter_child_nodes(node):
            inner, unit = function, in_unit or opens_a_unit(child)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner, unit = child.name, False
            if isinstance(child, ast.Call):
                found.append((child, function, in_unit))
            visit(child, inner, unit)

    visit(ast.parse(source), None, False)
    return found


def gateway_sources():
    """{dotted module under gateway (without the `gateway.`): source} for every file."""
    return {
        module_name(path).removeprefix("gateway."): path.read_text()
        for path in GATEWAY.rglob("*.py")
    }


def own_commits(sources):
    """`module.function` of every function that commits itself."""
    return {
        f"{module}.{function}"
        for module, source in sources.items()
        for call, function, _ in calls_in(source)
        if commits(call)
    }


def audits_outside_units(sources):
    """`module:line` of each record_audit(...) neither inside `with unit_of_work():` nor in a
    function that is only ever called (by name, anywhere in gateway/) inside one."""
    every = [
        (module, call, function, in_unit)
        for module, source in sources.items()
        for call, function, in_unit in calls_in(source)
    ]

    def only_called_in_units(function):
        sites = [in_unit for _, call, _, in_unit in every if call_name(call) == function]
        return bool(sites) and all(sites)

    return sorted(
        f"{module}:{call.lineno}"
        for module, call, function, in_unit in every
        if call_name(call) == "record_audit"
        and not in_unit
        and not (function and only_called_in_units(function))
    )


def test_only_the_listed_functions_commit_themselves():
    """A new commit inside a service splits its front door's unit of work: end with
    commit_work()."""
    assert own_commits(gateway_sources()) == set(OWN_COMMITS)


def test_every_audit_row_commits_with_the_action_it_records():
    assert audits_outside_units(gateway_sources()) == []


def test_a_commit_and_an_audit_outside_a_unit_are_caught():
    sources = {
        "panel.example": (
            "def action():\n"
            "    record_audit(user, 'a')\n"  # line 2: no unit
            "    with unit_of_work():\n"
            "        helper()\n"
            "        record_audit(user, 'b')\n"
            "def helper():\n"
            "    record_audit(user, 'c')\n"  # only called inside a unit: fine
            "def shared():\n"
            "    record_audit(user, 'd')\n"  # line 9: also called outside one
            "def caller():\n"
            "    shared()\n"
            "    with unit_of_work():\n"
            "        shared()\n"
            "    db.session.commit()\n"
        )
    }
    assert audits_outside_units(sources) == ["panel.example:2", "panel.example:9"]
    assert own_commits(sources) == {"panel.example.caller"}
