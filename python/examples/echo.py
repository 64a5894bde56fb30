"""Echo RPCs between two simulated Homa NICs from Python.

A server thread on card 1 answers every request with its own bytes (replying
straight from the received message's buffer); the client on card 0 sends
requests of several sizes and checks each response byte for byte.

    python python/examples/echo.py [--count N]
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import homa_nic


def serve(server: homa_nic.Endpoint, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            request = server.recv_request(timeout=0.1)
        except homa_nic.Timeout:
            continue
        with request.message as message:
            server.reply(request.id, message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="RPCs to send")
    args = parser.parse_args()

    network = homa_nic.Network(cards=2, name="echo-example")
    client_card, server_card = network.open(0), network.open(1)
    server = homa_nic.Endpoint(server_card, 99)
    client = homa_nic.Endpoint(client_card, 1000)
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(server, stop))
    thread.start()
    sizes = [1, 100, 1_400, 10_000, homa_nic.MAX_MESSAGE_BYTES]
    try:
        for i in range(args.count):
            payload = os.urandom(sizes[i % len(sizes)])
            start_cycle, start = network.cycle, time.monotonic()
            rpc = client.send_request(server.address, payload)
            response = client.recv_response(rpc, timeout=30)
            assert bytes(response.message) == payload, "response differs"
            cycles = network.cycle - start_cycle
            print(
                f"rpc {rpc:>3}: {len(payload):>6} bytes echoed, "
                f"{cycles} cycles = {cycles * 4 / 1000:.2f} us simulated "
                f"({(time.monotonic() - start) * 1000:.0f} ms wall)"
            )
    finally:
        stop.set()
        thread.join()
    print(f"{args.count} RPCs echoed from {server.address}")


if __name__ == "__main__":
    main()
