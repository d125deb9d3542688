/**
 * Reading and writing gocryptfs.conf on disk. Writes never leave a
 * directory without a config: write `<conf>.tmp` (O_EXCL, 0400), fsync,
 * rename over the old file, fsync the directory (Documentation/format.md §3.2).
 */
import { promises as fsp, constants as C } from 'node:fs';
import { dirname } from 'node:path';
import { configError, hasCode } from '../util/errors.js';
import { parseConf, serializeConf, validateConf, type ConfFile } from './conf-file.js';

export const CONF_MODE = 0o400;

/** Reads, parses and validates. Errors: ECONFIGMISSING, ECONFIGPARSE, ECONFIGINVALID. */
export async function readConfFile(path: string): Promise<ConfFile> {
  let text: string;
  try {
    text = await fsp.readFile(path, 'utf8');
  } catch (err) {
    if (hasCode(err, 'ENOENT', 'ENOTDIR')) throw configError('ECONFIGMISSING', `config file ${path} not found`, err);
    throw configError('ECONFIGPARSE', `cannot read config file ${path}: ${(err as Error).message}`, err);
  }
  let conf: ConfFile;
  try {
    conf = parseConf(text);
  } catch (err) {
    (err as Error).message = `${path}: ${(err as Error).message}`;
    throw err;
  }
  try {
    validateConf(conf);
  } catch (err) {
    (err as Error).message = `${path}: ${(err as Error).message}`;
    throw err;
  }
  return conf;
}

/** Atomically replaces (or creates) the config file. Error: ECONFIGWRITE. */
export async function writeConfFile(path: string, conf: ConfFile): Promise<void> {
  const tmp = `${path}.tmp`;
  const text = serializeConf(conf);
  try {
    const fh = await fsp.open(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL, CONF_MODE);
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path);
  } catch (err) {
    if (!hasCode(err, 'EEXIST')) await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw configError('ECONFIGWRITE', `cannot write config file ${path}: ${(err as Error).message}`, err);
  }
  const dir = await fsp.open(dirname(path), 'r').catch(() => null);
  if (dir) {
    await dir.sync().catch(() => undefined); // some filesystems refuse fsync on directories
    await dir.close();
  }
}
