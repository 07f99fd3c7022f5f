"""The layout is the architecture: who may import whom, dotted job paths included, and no import
cycle (docs/architecture.md, "Boundaries").
"""

import ast
import re
from functools import cache
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
    "outbox",
    "testmode",
    "wallets",
}
# Shared by every package; each imports nothing of gateway/ but the others of this list.
KERNEL = {
    "answer_commit",
    "clock",
    "cookie_session",
    "db_types",
    "destinations",
    "domain_errors",
    "extensions",
    "i18n",
    "livemode",
    "money",
    "numerals",
    "pdfs",
    "request_limits",
    "sealing",
    "security_headers",
    "states",
}
# Shared by the front doors only (no domain imports them), each with what it may import besides
# the kernel.
FRONT_DOOR_SHARED = {
    "schemas": DOMAINS,  # the wire formats read and render the domains' objects
    "rate_limits": {"accounts"},  # every limit counts in accounts' shared store
    "errors": set(),  # the one renderer of the domains' errors knows no domain
    "request_log": {"errors"},
}
# The application: gateway/__init__.py builds it, db_models.py lists every table for Alembic,
# serving.py readies a serving process; they import every package to wire them together.
APPLICATION = {"", "db_models", "serving"}
# The modules that import the application, each with its reason; nothing else may.
APPLICATION_IMPORTS = {"gateway.jobs": "a plain `rq worker` builds the app it runs jobs under"}
JOB_PATH = re.compile(r"gateway(\.[A-Za-z_][A-Za-z0-9_]*)+")


def module_name(path):
    """The dotted module name of a file under gateway/."""
    parts = path.relative_to(GATEWAY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name):
    """The file of a dotted module name under gateway, or None when no module has that name."""
    path = GATEWAY.parent.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def is_module(name):
    """Whether a dotted name under gateway is a module or package on disk."""
    return module_path(name) is not None


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
    """The package a module belongs to: gateway.sms.matching -> sms; gateway.clock -> clock;
    gateway (the application factory) -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@cache
def import_edges():
    """(importer, imported) module pairs over every file of gateway/."""
    edges = set()
    for path in GATEWAY.rglob("*.py"):
        name = module_name(path)
        for imported in imported_modules(path.read_text(), name, path.name == "__init__.py"):
            edges.add((name, imported))
    return frozenset(edges)


def job_paths(source):
    """(dotted path, module, function name) of each string in source naming a function of a
    gateway module, as the jobs are enqueued and listed (`"gateway.sms.matching.heal_matching"`).

    A string whose module does not exist (an old path kept for jobs queued before a move) names
    nothing here.
    """
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if not JOB_PATH.fullmatch(node.value):
            continue
        module, _, function = node.value.rpartition(".")
        if module != "gateway" and is_module(module):
            found.add((node.value, module, function))
    return sorted(found)


@cache
def job_path_edges():
    """(module holding the string, module it names) for every job path in gateway/."""
    return frozenset(
        (module_name(path), module)
        for path in GATEWAY.rglob("*.py")
        for _, module, _ in job_paths(path.read_text())
    )


def defines(source, name):
    """Whether a module's source defines `name` at its top level (a function, a class, a name)."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name) == name for alias in node.names):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def may_import(importer, imported):
    """Whether package `importer` may import package `imported` (both as `component` names)."""
    if importer == imported or imported in KERNEL or importer in APPLICATION:
        return True
    if imported in APPLICATION:
        return False  # only the modules of APPLICATION_IMPORTS, checked apart
    if importer in KERNEL:
        return False
    if importer in DOMAINS:
        return imported in DOMAINS
    if importer in FRONT_DOOR_SHARED:
        return imported in FRONT_DOOR_SHARED[importer]
    if importer in FRONT_DOORS:
        return imported in DOMAINS | FRONT_DOORS | set(FRONT_DOOR_SHARED)
    return False  # a package of no kind: test_every_package_has_a_place says where to list it


def forbidden_imports(edges):
    """Imports against the layers, as 'importer -> imported'."""
    return sorted(
        f"{a} -> {b}"
        for a, b in edges
        if not may_import(component(a), component(b))
        and not (component(b) in APPLICATION and a in APPLICATION_IMPORTS)
    )


def front_door_imports(edges):
    """Imports from a domain into a front door, as 'importer -> imported'."""
    return sorted(
        f"{a} -> {b}" for a, b in edges if component(a) in DOMAINS and component(b) in FRONT_DOORS
    )


def cycles(edges):
    """Each group of nodes that import one another round a circle (strongly connected components
    of more than one node), sorted."""
    graph = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
    return sorted(found)


def module_cycles(edges):
    """Circles of modules. A package's `__init__` importing its own modules does not count (a
    blueprint registering its views, the jobs package choosing its runner: the package is one
    thing), nor an import of the application (APPLICATION_IMPORTS)."""
    return cycles(
        {(a, b) for a, b in edges if not b.startswith(a + ".") and component(b) not in APPLICATION}
    )


def package_cycles(edges):
    """Circles of packages (gateway/sms, gateway/schemas, gateway/errors.py...)."""
    return cycles(
        {
            (component(a), component(b))
            for a, b in edges
            if component(a) not in APPLICATION and component(b) not in APPLICATION
        }
    )


def test_every_package_has_a_place():
    """A new package or top-level module is a front door, a domain, the kernel, shared by the
    front doors, or the application: say which above."""
    placed = FRONT_DOORS | DOMAINS | KERNEL | set(FRONT_DOOR_SHARED) | APPLICATION
    on_disk = {component(module_name(path)) for path in GATEWAY.rglob("*.py")}
    assert on_disk - placed == set()
    kinds = [FRONT_DOORS, DOMAINS, KERNEL, set(FRONT_DOOR_SHARED), APPLICATION]
    assert sum(len(kind) for kind in kinds) == len(placed), "a package is listed twice"


def test_no_domain_imports_a_front_door():
    assert front_door_imports(import_edges() | job_path_edges()) == []


def test_every_import_keeps_to_the_layers():
    """The kernel imports only the kernel; a domain imports the kernel and other domains; what
    the front doors share imports what FRONT_DOOR_SHARED says; nothing imports the application
    but APPLICATION_IMPORTS."""
    assert forbidden_imports(import_edges()) == []


def test_every_job_path_names_a_function_a_package_may_import():
    """A job enqueued by dotted path is an import made late: it keeps to the same layers (a cycle
    is its reason to be a string, so cycles do not count) and names a function that exists."""
    missing = [
        path
        for file in GATEWAY.rglob("*.py")
        for path, module, function in job_paths(file.read_text())
        if not defines(module_path(module).read_text(), function)
        and not is_module(f"{module}.{function}")
    ]
    assert missing == []
    assert forbidden_imports(job_path_edges()) == []


def test_no_import_cycle_between_modules():
    assert module_cycles(import_edges()) == []


def test_no_import_cycle_between_packages():
    """Function-level imports count too; a domain reacts to another's news through signals
    instead."""
    assert package_cycles(import_edges()) == []


def test_a_function_level_import_of_a_front_door_from_a_domain_is_caught():
    source = "def f():\n    from ..api.paging import paginate\n"
    edges = {("gateway.sms.inbox", m) for m in imported_modules(source, "gateway.sms.inbox", False)}
    assert front_door_imports(edges) == ["gateway.sms.inbox -> gateway.api.paging"]
    assert forbidden_imports(edges) == ["gateway.sms.inbox -> gateway.api.paging"]


def test_imports_against_the_layers_are_caught():
    edges = {
        ("gateway.errors", "gateway.links.errors"),  # the renderer knowing a domain
        ("gateway.sms.ingest", "gateway.schemas.mobile"),  # a domain using a front door's format
        ("gateway.states", "gateway.payments.models.payment"),  # the kernel knowing a domain
        ("gateway.mail.settings", "gateway.sealing"),  # fine: the kernel
        ("gateway.schemas.payment", "gateway.payments.lifecycle"),  # fine: a format of a domain
        ("gateway.payments.lifecycle", "gateway"),  # only APPLICATION_IMPORTS import the app
        ("gateway.jobs", "gateway"),  # listed
    }
    assert forbidden_imports(edges) == [
        "gateway.errors -> gateway.links.errors",
        "gateway.payments.lifecycle -> gateway",
        "gateway.sms.ingest -> gateway.schemas.mobile",
        "gateway.states -> gateway.payments.models.payment",
    ]


def test_a_job_path_is_read_as_an_import():
    source = (
        'PERIODIC = (("prune", "gateway.accounts.idempotency.prune_idempotency_records", 60),)\n'
        'OLD = {"gateway.services.outbox.sweep_outbox": "gateway.outbox.sweep.sweep_outbox"}\n'
        'log = logging.getLogger("gateway.request_id")\n'
    )
    assert job_paths(source) == [
        (
            "gateway.accounts.idempotency.prune_idempotency_records",
            "gateway.accounts.idempotency",
            "prune_idempotency_records",
        ),
        ("gateway.outbox.sweep.sweep_outbox", "gateway.outbox.sweep", "sweep_outbox"),
    ]
    edges = {("gateway.jobs", "gateway.api.idempotency")}  # a job of a front door's
    assert forbidden_imports(edges) == ["gateway.jobs -> gateway.api.idempotency"]


def test_cycles_of_modules_and_packages_are_caught():
    edges = {
        ("gateway.cli.core", "gateway.cli.checkout"),  # inside a function: counts too
        ("gateway.cli.checkout", "gateway.cli.core"),
        ("gateway.invoices.lifecycle", "gateway.invoices.sending"),
        ("gateway.invoices.sending", "gateway.invoices.pdf"),
        ("gateway.invoices.pdf", "gateway.invoices.lifecycle"),
        ("gateway.panel", "gateway.panel.payments"),  # a package's __init__ and its own module
        ("gateway.panel.payments", "gateway.panel"),
        ("gateway.jobs", "gateway"),  # the application, listed
        ("gateway", "gateway.jobs"),
        ("gateway.sms.matching", "gateway.payments.lifecycle"),
        ("gateway.payments.refunds", "gateway.webhooks.events"),
        ("gateway.webhooks.events", "gateway.sms.claims"),
    }
    assert module_cycles(edges) == [
        ["gateway.cli.checkout", "gateway.cli.core"],
        ["gateway.invoices.lifecycle", "gateway.invoices.pdf", "gateway.invoices.sending"],
    ]
    assert package_cycles(edges) == [["payments", "sms", "webhooks"]]


# The modules that use a cipher or a key derivation, each for its reason: every other secret is
# sealed and every key derived through gateway/sealing.py.
CIPHER_MODULES = {
    "sealing": "keys derived from SECRET_KEY, one per purpose; secrets sealed at rest under them",
    "devices.crypto": "the companion app's SMS payloads, under the device's own key",
    "wallets.nagad_wire": "Nagad's merchant API: requests RSA-sealed for Nagad and signed by us",
}


CIPHER_PACKAGE = "cryptography.hazmat"


def cipher_users(sources):
    """Modules (without `gateway.`) importing from cryptography.hazmat, sorted."""
    return sorted(
        module
        for module, source in sources.items()
        if any(
            isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("cryptography.hazmat")
            for node in ast.walk(ast.parse(source))
        )
    )


def test_keys_are_derived_and_secrets_sealed_in_one_module():
    assert cipher_users(gateway_sources()) == sorted(CIPHER_MODULES)


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
            cli.currencies,
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
    "accounts.rate_limit_store.give_back_hit": "own connection: as count_hit, the hit it undoes",
    "accounts.rate_limit_store.reset": "own connection: the limiter's store",
    "accounts.rate_limit_store.clear": "own connection: the limiter's store",
    "accounts.rate_limit_store.prune_rate_limit_counters": "the pruning job, own connection",
    "api.auth.touch_last_used": "a key's last use is written when checked, whatever follows",
    "api.idempotency.reserve": "SQLite: the key's reservation commits before the work it guards",
    "api.idempotency.store_locked": "PostgreSQL: a keyed request's one commit, work and answer",
    "api.idempotency.release_reservation": "a failed request frees its key for the retry",
    "api.idempotency.commit_with_answer": "a keyed request's one commit: its work with its answer",
    "accounts.idempotency.prune_idempotency_records": "the pruning job: one delete, one commit",
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
    "sms.ingest.device_key": "a re-sealed device key commits whatever follows",
    "sms.ingest.insert": "texts are stored before matching: a failed match loses none",
    "sms.matching.submit_claim": "the claim commits before matching: a racing SMS finds it",
    "sms.bank_matching.submit_bank_claim": "a bank claim commits before matching, as submit_claim",
    "sms.outbound.lease_outbound_sms": "the lease commits before the device sends",
    "sms.outbound.report_outbound_sms": "the device's report commits its message's outcome",
    "webhooks.delivery.claim_delivery": "the claim commits before the HTTP call (async on PG)",
    "webhooks.delivery.commit_claim": "the claim commits before the HTTP call (async on PG)",
    "webhooks.delivery.record_attempt": "the attempt and the next state, after the call",
    "wallets.tokens.store_token_in_database": "own connection: a wallet token is shared at once",
    "wallets.tokens.claim_renewal": "own connection: one process renews a wallet's token",
    "wallets.tokens.release_in_database": "own connection: the token renewal lock freed",
    "wallets.refunds.reserve_attempt": "own connection: a wallet refund's attempt, pending, "
    "before the wallet is called",
    "wallets.refunds.send_through_wallet": "own connection: a refund the wallet refused closes its "
    "attempt",
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
