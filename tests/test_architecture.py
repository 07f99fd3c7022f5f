"""The layout is the architecture: front doors import domains, domains never import front doors, no new cycles."""

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
    """Every gateway module that source (the module `name`) imports, at module level or inside a function."""
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
    """Function-level imports count too; a domain reacts to another's news through signals instead."""
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
        for module in (cli.checkout, cli.compat, cli.core, cli.jobs, cli.mobile, cli.ops)
        for value in vars(module).values()
        if isinstance(value, click.Command)
    }
    assert defined == set(cli.COMMANDS)
    assert sorted(cli.gateway_cli().commands) == sorted(command.name for command in cli.COMMANDS)
