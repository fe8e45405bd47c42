"""A userspace delay line: frames arriving on one interface leave another a fixed
delay later, in order. Used for a path's RTT when the kernel has no netem.

    python delayline.py SRC_DEV DST_DEV DELAY_NS DST_MAC SRC_MAC

(run as a script, not with ``-m``: importing the ``ccbench`` package would take seconds on
a loaded machine; this file imports only the standard library).

It runs inside its own namespace (``ccbl-<id>-l<i>``), which has no addresses and no
forwarding, so the kernel drops every frame there and the only way through is this
program. It carries only the ACK direction of one sender's path (about 4 000 small
frames a second at 100 Mbit/s), so a Python loop keeps up; its precision is that of
the scheduler, typically tens of microseconds, worse on a loaded machine
(``docs/linux-backend.md`` gives measured figures). Frames are passed on byte for byte
with new Ethernet addresses; the sender of the frames computes checksums in software
(``tx off`` on the router's interface toward the delay line).

Deviation: the simulator splits the RTT between the access links and the bottleneck
in both directions; here all added delay is on the ACK path. A TCP sender sees the
same RTT; the data direction's queueing is unchanged.
"""

from __future__ import annotations

import collections
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4


def run(src_dev: str, dst_dev: str, delay_ns: int, dst_mac: bytes, src_mac: bytes) -> None:
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.bind((src_dev, ETH_P_ALL))
    rx.setblocking(False)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    tx.bind((dst_dev, ETH_P_IP))
    header = dst_mac + src_mac
    print("ready", flush=True)  # the runner waits for this line before it measures the path
    line: collections.deque[tuple[int, bytes]] = collections.deque()
    clock = time.monotonic_ns
    while True:
        now = clock()
        while line and line[0][0] <= now:
            tx.send(line.popleft()[1])
        # select() takes a timeout in microseconds (poll/epoll round to milliseconds)
        timeout = None if not line else max(0.0, (line[0][0] - clock()) / 1e9)
        readable, _, _ = select.select([rx], [], [], timeout)
        if readable:
            while True:
                try:
                    frame, addr = rx.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING or frame[12:14] != b"\x08\x00":
                    continue
                line.append((clock() + delay_ns, header + frame[12:]))


def _mac(text: str) -> bytes:
    return bytes(int(x, 16) for x in text.split(":"))


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    src_dev, dst_dev, delay, dst_mac, src_mac = argv
    try:
        run(src_dev, dst_dev, int(delay), _mac(dst_mac), _mac(src_mac))
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
