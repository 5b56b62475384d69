#!/usr/bin/env python3
"""Opens N TLS connections to 127.0.0.1:PORT at once, sends each one's
ClientHello and closes it without waiting: the server's handshake jobs are
torn down mid-flight (some while paused in mbcrypto's batch). Bounded: N
connections, a 5 s timeout each.

Usage: abrupt_clients.py PORT N
"""
import socket
import ssl
import sys


def client_hello():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), 5)
        s.sendall(client_hello())
        socks.append(s)
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        s.close()  # RST: the server finds the peer gone


if __name__ == "__main__":
    main()
