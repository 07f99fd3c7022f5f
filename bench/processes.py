"""The benchmarks' child processes: each leads a process group of its own, ended with its group on
exit.

A benchmark stopped by Ctrl-C, SIGTERM or an exception must not leave a worker (or the scheduler
it started) draining the shared Redis queues, nor a server holding a port, behind it.
"""

import atexit
import os
import signal
import subprocess

_started = []  # every Popen started here, stopped in reverse order at exit


def start(args, **popen_options):
    """Popen `args` as the leader of a new session (so of a new process group), stopped at exit."""
    process = subprocess.Popen(args, start_new_session=True, **popen_options)
    _started.append(process)
    return process


def adopt(process):
    """Stop at exit a process started elsewhere (the fault harness's Process.popen leads a
    group)."""
    _started.append(process)
    return process


def signal_group(process, signum):
    """Send `signum` to the whole process group `process` leads (to the process alone if it leads
    none).
    """
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # the group is gone, or never was (a plain child: redis-server)
        if process.poll() is None:
            process.send_signal(signum)


def stop(process, grace=10):
    """SIGTERM the group, wait up to `grace` s for its leader, then SIGKILL whatever is left of
    it."""
    if process.poll() is None:
        signal_group(process, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    signal_group(process, signal.SIGKILL)  # a child that outlived its leader, too
    process.wait(10)


def stop_all():
    """Stop every group started here, the newest first."""
    while _started:
        stop(_started.pop())


def exit_on_signals():
    """SIGTERM and SIGHUP end the benchmark as Ctrl-C does: `finally` blocks and the exit hook
    run."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, raise_exit)


def raise_exit(signum, frame):
    """A signal handler: leave through SystemExit, as the interpreter does for Ctrl-C's
    KeyboardInterrupt.
    """
    raise SystemExit(128 + signum)


atexit.register(stop_all)
