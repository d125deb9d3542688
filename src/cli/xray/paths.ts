/**
 * `tscryptfs-xray -encrypt-paths|-decrypt-paths SOCKET`: paths from stdin
 * (one per line, or NUL-separated with -0) translated by a mount's control
 * socket, results on stdout with the same separator, as gocryptfs-xray
 * does. A failed line is reported on stderr ("error at input line N ...")
 * and makes the exit code 1; the other lines still go through.
 */
import { createConnection, type Socket } from 'node:net';
import { goQuote } from '../output.js';

const TIMEOUT_MS = 10_000;

/** Go's text for the errors connecting to a socket can give. */
const CONNECT_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ECONNREFUSED: 'connection refused',
  EACCES: 'permission denied',
  ENOTSOCK: 'socket operation on non-socket',
};

interface Response {
  Result?: string;
  ErrNo?: number;
  ErrText?: string;
  WarnText?: string;
}

/** One connection; `query` sends a request and waits for its line. */
class Client {
  private buf = '';
  private waiting: ((line: string | Error) => void) | null = null;

  private constructor(private readonly sock: Socket) {
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      this.buf += d;
      const nl = this.buf.indexOf('\n');
      if (nl >= 0 && this.waiting) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiting;
        this.waiting = null;
        w(line);
      }
    });
    const fail = (err: Error): void => {
      const w = this.waiting;
      this.waiting = null;
      w?.(err);
    };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error('EOF')));
  }

  static connect(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const sock = createConnection(path);
      sock.setTimeout(TIMEOUT_MS, () => sock.destroy(new Error(`read unix ->${path}: i/o timeout`)));
      sock.once('connect', () => resolve(new Client(sock)));
      sock.once('error', (err: NodeJS.ErrnoException) => {
        reject(new Error(`dial unix ${path}: connect: ${CONNECT_ERRORS[err.code ?? ''] ?? err.message}`));
      });
    });
  }

  query(req: { EncryptPath: string; DecryptPath: string }): Promise<Response> {
    return new Promise((resolve, reject) => {
      this.waiting = (line) => {
        if (line instanceof Error) return reject(line);
        try {
          resolve(JSON.parse(line) as Response);
        } catch (err) {
          reject(err as Error);
        }
      };
      this.sock.write(JSON.stringify(req));
    });
  }

  close(): void {
    this.sock.end();
  }
}

/** The input pieces: split at `sep`, the separator dropped, a last piece without it kept; nothing after the end. */
async function* pieces(input: AsyncIterable<Buffer | string>, sep: number): AsyncGenerator<Buffer> {
  let pending = Buffer.alloc(0);
  for await (const chunk of input) {
    pending = Buffer.concat([pending, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
    let i: number;
    while ((i = pending.indexOf(sep)) >= 0) {
      yield pending.subarray(0, i);
      pending = pending.subarray(i + 1);
    }
  }
  if (pending.length > 0) yield pending;
}

export interface Streams {
  stdin: AsyncIterable<Buffer | string>;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** Translates every input path; resolves to the exit code. */
export async function transformPaths(socketPath: string, which: 'EncryptPath' | 'DecryptPath', nulSeparated: boolean, io: Streams): Promise<number> {
  let client: Client;
  try {
    client = await Client.connect(socketPath);
  } catch (err) {
    io.stdout.write(`fatal: ${(err as Error).message}\n`);
    return 1;
  }
  const sep = nulSeparated ? 0 : 0x0a;
  const sepChar = String.fromCharCode(sep);
  let errors = 0;
  let line = 1;
  try {
    for await (const piece of pieces(io.stdin, sep)) {
      const input = piece.toString('utf8');
      const req = { EncryptPath: which === 'EncryptPath' ? input : '', DecryptPath: which === 'DecryptPath' ? input : '' };
      let resp: Response;
      try {
        resp = await client.query(req);
      } catch (err) {
        io.stderr.write(`error at input line ${line} ${goQuote(input)}: ${(err as Error).message}\n`);
        errors++;
        line++;
        continue;
      }
      if (resp.ErrNo !== undefined && resp.ErrNo !== 0) {
        io.stderr.write(`error at input line ${line} ${goQuote(input)}: errno ${resp.ErrNo}: ${resp.ErrText ?? ''}\n`);
        errors++;
      } else {
        if (resp.WarnText) io.stderr.write(`warning at input line ${line} ${goQuote(input)}: ${resp.WarnText}\n`);
        io.stdout.write(`${resp.Result ?? ''}${sepChar}`);
      }
      line++;
    }
  } finally {
    client.close();
  }
  return errors === 0 ? 0 : 1;
}
