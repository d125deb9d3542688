/**
 * The control socket protocol of gocryptfs (Documentation/format.md §11,
 * internal/ctlsocksrv): one JSON request per read,
 * `{"EncryptPath": "..."}` or `{"DecryptPath": "..."}`, answered by one
 * line of compact JSON `{"Result","ErrNo","ErrText","WarnText"}`. ErrNo is
 * 2 for ENOENT and -1 for everything else, as in gocryptfs; the texts are
 * gocryptfs's (Go's errno strings, "Ambiguous", "Empty input", ...).
 */
import { hasCode } from '../util/errors.js';
import { goJsonString } from './go-json-string.js';
import { sanitizePath } from './sanitize.js';

/**
 * What answers the requests: a forward Vault or a reverse view. A decrypted
 * path comes as bytes: a name need not be UTF-8, and the answer shows its
 * invalid bytes as Go does.
 */
export interface PathTranslator {
  encryptPath(plainPath: string): string | Promise<string>;
  decryptPathBytes(cipherPath: string): Uint8Array | Promise<Uint8Array>;
}

export interface CtlSockResponse {
  /** Text, or the bytes of a decrypted path. */
  Result: string | Uint8Array;
  ErrNo: number;
  ErrText: string;
  WarnText: string;
}

/** A request of this many bytes or more closes the connection (gocryptfs reads at most 4999). */
export const READ_BUF_SIZE = 5000;

/** Go's strerror texts for the errors path translation can meet. */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EBADMSG: 'bad message',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EINVAL: 'invalid argument',
  EIO: 'input/output error',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
};

function errorResponse(err: unknown, warnText = ''): CtlSockResponse {
  const code = (err as { code?: unknown })?.code;
  const text = typeof code === 'string' && ERRNO_TEXT[code] !== undefined ? ERRNO_TEXT[code]! : ((err as Error)?.message ?? String(err));
  return { Result: '', ErrNo: hasCode(err, 'ENOENT') ? 2 : -1, ErrText: text, WarnText: warnText };
}

/** Go's json.Marshal output of the response struct: compact, fields in order, strings as Go escapes them. */
export function encodeResponse(r: CtlSockResponse): string {
  const str = (v: string | Uint8Array): string => goJsonString(typeof v === 'string' ? Buffer.from(v, 'utf8') : v);
  return `{"Result":${str(r.Result)},"ErrNo":${r.ErrNo},"ErrText":${str(r.ErrText)},"WarnText":${str(r.WarnText)}}\n`;
}

/** The message Go's encoding/json gives for the common ways a request is not JSON. */
export function goJsonError(text: string): string {
  const s = text.replace(/^[ \t\r\n]+/, '');
  if (s === '') return 'unexpected end of JSON input';
  const c = s[0]!;
  const literal = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : null;
  if (literal) {
    for (let i = 1; i < literal.length; i++) {
      if (i >= s.length) return 'unexpected end of JSON input';
      if (s[i] !== literal[i]) return `invalid character ${goQuoteChar(s[i]!)} in literal ${literal} (expecting ${goQuoteChar(literal[i]!)})`;
    }
  }
  if (!/[{["\-0-9tfn]/.test(c)) return `invalid character ${goQuoteChar(c)} looking for beginning of value`;
  return 'invalid JSON';
}

function goQuoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  return `'${c}'`;
}

/** The fields of a request, matched case-insensitively like Go's json.Unmarshal; an error text when it is unusable. */
function parseRequest(text: string): { encrypt: string; decrypt: string } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { error: goJsonError(text) };
  }
  if (v === null) return { encrypt: '', decrypt: '' };
  if (typeof v !== 'object' || Array.isArray(v)) {
    const kind = Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'bool';
    return { error: `json: cannot unmarshal ${kind} into Go value of type ctlsock.RequestStruct` };
  }
  const out = { encrypt: '', decrypt: '' };
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const key = k.toLowerCase();
    const field = key === 'encryptpath' ? 'encrypt' : key === 'decryptpath' ? 'decrypt' : null;
    if (!field || val === null) continue;
    if (typeof val !== 'string') {
      const kind = Array.isArray(val) ? 'array' : typeof val === 'object' ? 'object' : typeof val === 'number' ? 'number' : 'bool';
      return { error: `json: cannot unmarshal ${kind} into Go struct field RequestStruct.${field === 'encrypt' ? 'EncryptPath' : 'DecryptPath'} of type string` };
    }
    out[field] = val;
  }
  return out;
}

/** The answer to one request (the bytes of one read). */
export async function answerRequest(data: Buffer, fs: PathTranslator): Promise<CtlSockResponse> {
  const req = parseRequest(data.toString('utf8'));
  if ('error' in req) return errorResponse(new Error(`JSON Unmarshal error: ${req.error}`));
  if (req.encrypt !== '' && req.decrypt !== '') return errorResponse(new Error('Ambiguous'));
  if (req.encrypt === '' && req.decrypt === '') return errorResponse(new Error('Empty input'));
  const input = req.encrypt !== '' ? req.encrypt : req.decrypt;
  const clean = sanitizePath(input);
  const warn = input !== clean ? `Non-canonical input path '${input}' has been interpreted as '${clean}'.` : '';
  if (clean === '') return errorResponse(new Error('Empty input after canonicalization'), warn);
  try {
    const result = req.encrypt !== '' ? await fs.encryptPath(clean) : await fs.decryptPathBytes(clean);
    return { Result: result, ErrNo: 0, ErrText: '', WarnText: warn };
  } catch (err) {
    return errorResponse(err, warn);
  }
}
