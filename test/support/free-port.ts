import { createServer, type AddressInfo } from 'node:net';

/**
 * A port the kernel says is free now, for servers that cannot listen on port 0 and report the port they got
 * (redis-server, Prometheus, a gateway started with PORT). A random pick in a range can land on a port another
 * suite running in parallel holds, and a readiness probe would then talk to the wrong server.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `count` distinct ports the kernel says are free now (all held open together, so none is given twice). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  await Promise.all(
    servers.map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
