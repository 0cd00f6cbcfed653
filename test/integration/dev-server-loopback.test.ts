/**
 * The dev server (`npm start`, `npm test`) has no authorizer: whoever reaches its frontend is an admin there. It
 * binds 127.0.0.1, so only this machine reaches it: a connection to the same port on this machine's other
 * addresses is refused, while the loopback connection (the control) is accepted, so the refusal is not a dead port.
 */
import net from 'node:net';
import os from 'node:os';

const address = process.env.TEMPORAL_ADDRESS ?? '';
const port = Number(address.split(':').at(-1));
const external = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;

function connect(host: string): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

const onLoopback = address.startsWith('127.0.0.1:');
(onLoopback && external ? test : test.skip)(
  `the dev server's frontend answers on 127.0.0.1 and not on this machine's ${external ?? 'other'} address`,
  async () => {
    expect(await connect('127.0.0.1')).toBe('connected');
    expect(await connect(external!)).toBe('ECONNREFUSED');
  },
);
