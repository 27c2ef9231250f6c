#!/usr/bin/env python3
"""A TCP port on 127.0.0.1 nobody listens on, never handed out twice: the one home of the port
picking that hack/testbed/lib.sh (testbed_free_port), the Python tests and the benchmarks use.

The kernel offers a closed probe port again, and callers pick several ports before anything binds
them (run-local once gave two servers one port). So ports already handed out are skipped: those of
this process, and with a ledger file (a test bed's $TESTBED_DIR/ports) those of every process
sharing it, read and extended under a lock.

    python3 hack/testbed/free_port.py [LEDGER]    # prints the port
"""

import fcntl
import socket
import sys

_given = set()  # ports this process handed out


def free_port(ledger=None):
    f = open(ledger, "a+") if ledger else None
    try:
        given = set(_given)
        if f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            given |= {int(p) for p in f.read().split()}
        held = []  # refused ports stay bound, so the kernel offers another
        while True:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            if port not in given:
                break
            held.append(s)
        for h in held + [s]:
            h.close()
        if f:
            f.write(f"{port}\n")
        _given.add(port)
        return port
    finally:
        if f:
            f.close()


if __name__ == "__main__":
    print(free_port(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None))
