/**
 * The control socket (-ctlsock PATH): a Unix stream socket that answers
 * path translation requests (protocol.ts) for the life of the mount.
 * It is created with mode 0600 (umask 0177 while binding, so there is no
 * moment in which others could connect), refuses to replace an existing
 * file, and is removed when closed.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { promises as fsp } from 'node:fs';
import type { Logger } from '../util/logger.js';
import { answerRequest, encodeResponse, READ_BUF_SIZE, type PathTranslator } from './protocol.js';

export interface CtlSock {
  readonly path: string;
  close(): Promise<void>;
}

function serveConnection(conn: Socket, fs: PathTranslator, log: Logger): void {
  // One request per read, answered in order.
  let queue = Promise.resolve();
  conn.on('data', (chunk: Buffer) => {
    if (chunk.length >= READ_BUF_SIZE) {
      log.warn(`ctlsock: request too big (max = ${READ_BUF_SIZE - 1} bytes)`);
      conn.destroy();
      return;
    }
    queue = queue.then(async () => {
      const res = await answerRequest(chunk, fs);
      if (!conn.destroyed) conn.write(encodeResponse(res));
    });
  });
  conn.on('error', (err) => log.warn(`ctlsock: ${err.message}`));
}

export async function startCtlSock(path: string, fs: PathTranslator, log: Logger): Promise<CtlSock> {
  const conns = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: false }, (conn) => {
    conns.add(conn);
    conn.on('close', () => conns.delete(conn));
    serveConnection(conn, fs, log);
  });
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(oldMask);
  }
  await fsp.chmod(path, 0o600);
  server.on('error', (err) => log.warn(`ctlsock: ${err.message}`));
  return {
    path,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of conns) c.destroy(); // a client that stays connected must not hold up the unmount
      await closed;
      await fsp.rm(path, { force: true });
    },
  };
}
