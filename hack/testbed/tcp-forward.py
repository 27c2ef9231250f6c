#!/usr/bin/env python3
"""A TCP forwarder from LISTEN_HOST:LISTEN_PORT to TARGET_HOST:TARGET_PORT, bytes as they are.

    tcp-forward.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT

The test bed's apiserver listens on 127.0.0.1 only, which a pod cannot reach (its loopback is
its own). hack/testbed/node.sh runs this on the pod bridge's gateway address and points the
`kubernetes` Service's endpoint at it, so in-cluster clients (the services' pods, the
JobSet controller) reach the apiserver through the ClusterIP as in any cluster. TLS passes
through untouched: the apiserver's certificate names the ClusterIP. One process, one event loop;
exits on SIGTERM.
"""
import asyncio
import signal
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


async def main(listen_host, listen_port, target_host, target_port):
    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    server = await asyncio.start_server(handle, listen_host, listen_port, reuse_address=True)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    print(f"forwarding {listen_host}:{listen_port} to {target_host}:{target_port}", flush=True)
    async with server:
        await stop


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
