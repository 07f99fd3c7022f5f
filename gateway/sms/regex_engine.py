"""The engine that runs merchants' SMS templates: RE2, whose time is linear in the text, never re's
backtracking.

A template is typed by a merchant and runs on every text a phone forwards, on the inbox pages and in
the tester; with `re`, `(a+)+$` on 26 letters and a `!` took 18 s of a worker. RE2 cannot backtrack:
it refuses look-arounds and back-references at save time instead, and bounds its memory.
"""

import re
from functools import lru_cache

import re2

# RE2's own ceiling on a compiled program and its DFA cache; a pattern needing more is refused.
MAX_PROGRAM_MEMORY = 8 << 20
UNSUPPORTED = (
    "SMS template uses something the safe regex engine (RE2) does not run: look-arounds "
    "such as (?=…) or (?<=…), back-references such as \\1 or (?P=name), or a repetition over 1000"
)


def template_options():
    """Case-insensitive like the built-in parsers, quiet (errors become form errors, not log
    lines)."""
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.max_mem = MAX_PROGRAM_MEMORY
    return options


@lru_cache(maxsize=256)
def compile_template_regex(pattern):
    """A pattern compiled by RE2 (cached: ingest runs the same few on every text), or ValueError
    saying why not.

    It must also be valid for Python's `re` (only compiled, never run): that parser catches what RE2
    lets through, such as a group name given twice.
    """
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise ValueError(f"SMS template is not a valid regular expression: {error}") from None
    try:
        return re2.compile(pattern, template_options())
    except re2.error as error:
        reason = error.args[0] if error.args else ""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        if "too large" in str(reason) or "invalid repetition" in str(reason):
            raise ValueError(
                "SMS template is too large for the safe regex engine; use fewer or smaller "
                f"repetitions ({reason})."
            ) from None
        if "perl operator" in str(reason) or "escape sequence" in str(reason):
            raise ValueError(f"{UNSUPPORTED} ({reason}).") from None
        raise ValueError(f"SMS template is not a valid regular expression: {reason}") from None
