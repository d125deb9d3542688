/** backing.test.ts again on the /proc fallback of the *at() calls (no addon, or TSCRYPTFS_FS_IO=async). */
process.env.TSCRYPTFS_AT_CALLS = 'proc';
await import('./backing.test.js');
