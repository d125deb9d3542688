/**
 * gocryptfs.conf as a value: parsing with Go's encoding/json leniency
 * (case-insensitive keys, unknown keys ignored) and serialising the way
 * gocryptfs writes it (Documentation/format.md §3.2: tab indentation, fixed
 * field order).
 */
import { configError } from '../util/errors.js';
import { validateFlags } from './feature-flags.js';
import { validateScryptParams, type ScryptParams } from './scrypt.js';

export { CONF_NAME } from './conf-name.js';
export const CONF_VERSION = 2;

export interface ConfFile {
  Creator?: string;
  /** Wrapped master key (standard base64 in the file). */
  EncryptedKey: Uint8Array;
  ScryptObject: ScryptParams;
  Version: number;
  FeatureFlags: string[];
  /** Kept verbatim; we cannot unlock FIDO2 configs (no token support). */
  FIDO2?: Record<string, unknown>;
  /** 0 when absent. */
  LongNameMax: number;
}

type Json = Record<string, unknown>;

/** Go's encoding/json matches keys case-insensitively; so do we. */
function field(obj: Json, name: string): unknown {
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

function asObject(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw configError('ECONFIGPARSE', `${what} is not a JSON object`);
  }
  return v as Json;
}

function asInt(v: unknown, what: string, optional = false): number {
  if (v === undefined && optional) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw configError('ECONFIGPARSE', `${what} must be an integer`);
  }
  return v;
}

function asBase64(v: unknown, what: string): Uint8Array {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) {
    throw configError('ECONFIGPARSE', `${what} is not valid base64`);
  }
  return Buffer.from(v, 'base64');
}

/** Parses the bytes of a gocryptfs.conf; throws ECONFIGPARSE on any malformed field. */
export function parseConf(text: string): ConfFile {
  if (text.trim() === '') throw configError('ECONFIGPARSE', 'config file is empty');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw configError('ECONFIGPARSE', `config file is not valid JSON: ${(err as Error).message}`);
  }
  const obj = asObject(raw, 'config');
  const creator = field(obj, 'Creator');
  if (creator !== undefined && typeof creator !== 'string') throw configError('ECONFIGPARSE', 'Creator must be a string');
  // A missing ScryptObject reads as zero parameters, as Go's json.Unmarshal leaves them: validateConf then refuses them (gocryptfs: exit 27).
  const scryptField = field(obj, 'ScryptObject');
  const scrypt: Json = scryptField === undefined ? { Salt: '', N: 0, R: 0, P: 0, KeyLen: 0 } : asObject(scryptField, 'ScryptObject');
  const flags = field(obj, 'FeatureFlags');
  if (flags !== null && flags !== undefined && (!Array.isArray(flags) || flags.some((f) => typeof f !== 'string'))) {
    throw configError('ECONFIGPARSE', 'FeatureFlags must be an array of strings');
  }
  const fido2 = field(obj, 'FIDO2');
  const conf: ConfFile = {
    EncryptedKey: asBase64(field(obj, 'EncryptedKey'), 'EncryptedKey'),
    ScryptObject: {
      Salt: asBase64(field(scrypt, 'Salt'), 'ScryptObject.Salt'),
      N: asInt(field(scrypt, 'N'), 'ScryptObject.N'),
      R: asInt(field(scrypt, 'R'), 'ScryptObject.R'),
      P: asInt(field(scrypt, 'P'), 'ScryptObject.P'),
      KeyLen: asInt(field(scrypt, 'KeyLen'), 'ScryptObject.KeyLen'),
    },
    Version: asInt(field(obj, 'Version'), 'Version'),
    FeatureFlags: (flags as string[] | null | undefined) ?? [],
    LongNameMax: asInt(field(obj, 'LongNameMax'), 'LongNameMax', true),
  };
  if (typeof creator === 'string') conf.Creator = creator;
  if (fido2 !== undefined && fido2 !== null) conf.FIDO2 = asObject(fido2, 'FIDO2');
  if (flags === null || flags === undefined) {
    throw configError('ECONFIGINVALID', 'FeatureFlags is missing (ancient config format, not supported)');
  }
  return conf;
}

/** gocryptfs's load-time validation (format.md §3.4): version, scrypt limits, flags. */
export function validateConf(conf: ConfFile): void {
  if (conf.Version !== CONF_VERSION) {
    throw configError('ECONFIGINVALID', `unsupported on-disk format version ${conf.Version} (expected ${CONF_VERSION})`);
  }
  validateScryptParams(conf.ScryptObject);
  validateFlags(conf.FeatureFlags, conf.LongNameMax);
  if (conf.FeatureFlags.includes('FIDO2') && conf.FIDO2 === undefined) {
    throw configError('ECONFIGINVALID', 'FIDO2 flag set but the FIDO2 object is missing');
  }
}

/** Serialises like Go's json.MarshalIndent(conf, "", "\t") plus a newline. */
export function serializeConf(conf: ConfFile): string {
  const out: Record<string, unknown> = {};
  if (conf.Creator !== undefined) out.Creator = conf.Creator;
  out.EncryptedKey = Buffer.from(conf.EncryptedKey).toString('base64');
  out.ScryptObject = {
    Salt: Buffer.from(conf.ScryptObject.Salt).toString('base64'),
    N: conf.ScryptObject.N,
    R: conf.ScryptObject.R,
    P: conf.ScryptObject.P,
    KeyLen: conf.ScryptObject.KeyLen,
  };
  out.Version = conf.Version;
  out.FeatureFlags = conf.FeatureFlags;
  if (conf.FIDO2 !== undefined) out.FIDO2 = conf.FIDO2;
  if (conf.LongNameMax !== 0) out.LongNameMax = conf.LongNameMax;
  return JSON.stringify(out, null, '\t') + '\n';
}
