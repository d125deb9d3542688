/**
 * Who made a FUSE request: the uid, gid and pid the binding takes
 * from libfuse's request context for every creation (create, mkdir, mknod,
 * symlink), and the supplementary groups of that process from
 * /proc/PID/status, as gocryptfs reads them (syscallcompat
 * getSupplementaryGroups). A root mount creates each new entry as this
 * caller (src/vault/vault-core.ts, Owner).
 *
 * The groups only serve the permission checks of the creation itself,
 * which the kernel has already made with the true ones: they are kept per
 * pid for a second (an untar asks for thousands), at most 256 processes.
 */
import { readFileSync } from 'node:fs';
import type { Owner } from '../vault/index.js';

/** What the binding hands over with a creating request. */
export interface FuseCaller {
  uid: number;
  gid: number;
  pid: number;
}

const GROUPS_TTL_MS = 1000;
const GROUPS_MAX = 256;
const groupsByPid = new Map<number, { groups: number[]; until: number }>();

/** The supplementary groups of process `pid` (empty when it is gone or /proc cannot say). */
function supplementaryGroups(pid: number): number[] {
  const now = Date.now();
  const hit = groupsByPid.get(pid);
  if (hit && hit.until > now) return hit.groups;
  let groups: number[] = [];
  try {
    const line = /^Groups:(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    groups = line ? line[1]!.trim().split(/\s+/).filter((g) => g !== '').map(Number) : [];
  } catch {
    // the process has exited: its own ids are all there is
  }
  if (groupsByPid.size >= GROUPS_MAX) groupsByPid.clear();
  groupsByPid.set(pid, { groups, until: now + GROUPS_TTL_MS });
  return groups;
}

/** The owner of what `caller` creates; undefined for a request without one (a binding that does not pass it) or from root's own ids. */
export function ownerOf(caller: FuseCaller | undefined): Owner | undefined {
  if (!caller || typeof caller.uid !== 'number') return undefined;
  if (caller.uid === 0 && caller.gid === 0) return undefined; // the daemon's own ids: nothing to switch
  return { uid: caller.uid, gid: caller.gid, groups: supplementaryGroups(caller.pid) };
}
