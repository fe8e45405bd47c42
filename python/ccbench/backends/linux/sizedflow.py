"""A finite TCP transfer that ends only when the receiver has every byte, with its
flow completion time. Used for flows with a ``size``: ``iperf3 -n`` stops when the
bytes are *written* and tears the test down, so data still in flight can be lost.

    python sizedflow.py server PORT
    python sizedflow.py client HOST PORT CLIENT_PORT CCA SIZE MSS

The server reads until the client's FIN and then closes; the client connects, sends
SIZE bytes, shuts down its side and waits for the server's close, so the time from its
``connect()`` (the first SYN) to that close (``fct_ns``, printed as JSON) covers the
handshake, as the simulator's FCT does (``setup_ns`` is the handshake's share, and
``syn_retrans`` the SYNs it resent: ``tcpi_total_retrans`` right after the handshake),
and the delivery of the last byte plus the FIN exchange. A connection that cannot be
set up reports ``setup_failed``. Run as a script: it imports only the standard library.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time

CHUNK = 1 << 16
#: ``struct tcp_info`` (include/uapi/linux/tcp.h): 8 bytes of u8 fields, then u32s;
#: ``tcpi_total_retrans`` is the 24th u32 (SYN retransmissions count in it).
TCP_INFO_TOTAL_RETRANS_OFFSET = 8 + 23 * 4


def server(port: int) -> dict[str, int | bool | str]:
    with socket.create_server(("0.0.0.0", port)) as lsock:
        conn, _ = lsock.accept()
        received = 0
        with conn:
            while True:
                data = conn.recv(CHUNK)
                if not data:
                    break
                received += len(data)
    return {"received_bytes": received}


def client(host: str, port: int, cport: int, cca: str, size: int, mss: int) -> dict[str, int | bool | str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cca.encode())
    if mss > 0:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    sock.bind(("0.0.0.0", cport))
    t0 = time.monotonic_ns()
    try:
        sock.connect((host, port))
    except OSError as e:
        sock.close()
        return {"setup_failed": True, "error": str(e), "connect_monotonic_ns": t0}
    setup = time.monotonic_ns() - t0
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_TOTAL_RETRANS_OFFSET + 4)
    (syn_retrans,) = struct.unpack_from("I", info, TCP_INFO_TOTAL_RETRANS_OFFSET)
    block = b"\0" * CHUNK
    left = size
    while left > 0:
        left -= sock.send(block[: min(CHUNK, left)])
    sock.shutdown(socket.SHUT_WR)
    while sock.recv(CHUNK):  # the server closes once it has read everything
        pass
    fct = time.monotonic_ns() - t0
    sock.close()
    # CLOCK_MONOTONIC is shared by every namespace: the runner places the start (the first
    # SYN, as the simulator's start_ns) on its clock
    return {"sent_bytes": size, "fct_ns": fct, "setup_ns": setup, "syn_retrans": syn_retrans,
            "connect_monotonic_ns": t0}  # fmt: skip


def main(argv: list[str]) -> int:
    out: dict[str, int | bool | str]
    if argv[:1] == ["server"] and len(argv) == 2:
        out = server(int(argv[1]))
    elif argv[:1] == ["client"] and len(argv) == 7:
        host, port, cport, cca, size, mss = argv[1:]
        out = client(host, int(port), int(cport), cca, int(size), int(mss))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
