#define FUSE_USE_VERSION 29

#include <uv.h>
#include <node_api.h>
#include <napi-macros.h>

#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

#include <fuse.h>
#include <sys/file.h> // flock(2) operations
#include <fuse_lowlevel.h> // the channel wrapper and notifications (hard links)
#include <fuse_kernel.h>
// The hooks' structs and the 22-word stat layout, shared with tscryptfs's
// native fast path (native/fastpath).
#include "fuse_hooks.h"
#include "stat_words.h"
#ifndef FUSE_POSIX_ACL
#define FUSE_POSIX_ACL (1 << 20) // INIT flag of protocol 7.26, which libfuse2's headers predate
#endif
#include <errno.h>
#include <unistd.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/mman.h> // madvise (dropCaches)
#include <fuse_opt.h>
#include <fuse_common.h>
#include <fuse_lowlevel.h>

#include <unistd.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/stat.h>

static int IS_ARRAY_BUFFER_DETACH_SUPPORTED = 0;

napi_status napi_detach_arraybuffer(napi_env env, napi_value buf);

#define FUSE_NATIVE_CALLBACK(fn, blk)\
  napi_env env = ft->env;\
  napi_handle_scope scope;\
  napi_open_handle_scope(env, &scope);\
  napi_value ctx;\
  napi_get_reference_value(env, ft->ctx, &ctx);\
  napi_value callback;\
  napi_get_reference_value(env, fn, &callback);\
  blk\
  napi_close_handle_scope(env, scope);

// the name an operation changes, for the attribute cache: libfuse's
// symlink(target, path) has the new name second (dest here), every other
// operation first.
#define CHANGED_PATH(l) ((l)->op == op_symlink ? (l)->dest : (l)->path)

#define FUSE_NATIVE_HANDLER(name, blk)\
  fuse_thread_locals_t *l = get_thread_locals();\
  l->op = op_##name;\
  l->op_fn = fuse_native_dispatch_##name;\
  l->carried = 0;\
  { struct fuse_context *fc_ = fuse_get_context(); l->caller_uid = fc_->uid; l->caller_gid = fc_->gid; l->caller_pid = fc_->pid; }\
  l->kill_suidgid = hl_req.kill_suidgid;\
  blk\
  if (op_changes_dirs(l->op)) dirs_changing(l);\
  if (op_changes_attrs(l->op)) l->attr_targeted = attr_changing(l->fuse, l->op, CHANGED_PATH(l));\
  fuse_native_hand_over(l);\
  return l->res;

#define FUSE_METHOD(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk, signalBlk)\
  static void fuse_native_dispatch_##name (uv_async_t* handle, fuse_thread_locals_t* l, fuse_thread_t* ft) {\
    uint32_t op = op_##name;\
    FUSE_NATIVE_CALLBACK(ft->handlers[op], {\
      napi_value argv[callbackArgs + 2];\
      napi_get_reference_value(env, l->self, &(argv[0]));\
      napi_create_uint32(env, l->op, &(argv[1]));\
      callbackBlk\
      NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, callbackArgs + 2, argv, NULL)\
    })\
  }\
  NAPI_METHOD(fuse_native_signal_##name) {\
    NAPI_ARGV(signalArgs + 2)\
    NAPI_ARGV_BUFFER_CAST(fuse_thread_locals_t *, l, 0);\
    NAPI_ARGV_INT32(res, 1);\
    signalBlk\
    if (op_changes_attrs(l->op)) attr_ended(l, res);\
    l->res = res;\
    uv_sem_post(&(l->sem));\
    return NULL;\
  }\
  static int fuse_native_##name signature {\
    if (path == NULL) path = ""; /* flag_nullpath_ok: an open file whose path is gone */\
    FUSE_NATIVE_HANDLER(name, callBlk)\
  }

#define FUSE_METHOD_VOID(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk)\
  FUSE_METHOD(name, callbackArgs, signalArgs, signature, callBlk, callbackBlk, {})

// the request's caller as three arguments (uid, gid, pid), from FUSE_NATIVE_HANDLER
#define FUSE_CALLER_ARGV(pos)\
  napi_create_uint32(env, l->caller_uid, &(argv[pos]));\
  napi_create_uint32(env, l->caller_gid, &(argv[pos + 1]));\
  napi_create_uint32(env, (uint32_t) l->caller_pid, &(argv[pos + 2]));

#define FUSE_UINT64_TO_INTS_ARGV(n, pos)\
  uint32_t low##pos = n % 4294967296;\
  uint32_t high##pos = (n - low##pos) / 4294967296;\
  napi_create_uint32(env, low##pos, &(argv[pos]));\
  napi_create_uint32(env, high##pos, &(argv[pos + 1]));


// Opcodes

static const uint32_t op_init = 0;
static const uint32_t op_error = 1;
static const uint32_t op_access = 2;
static const uint32_t op_statfs = 3;
static const uint32_t op_fgetattr = 4;
static const uint32_t op_getattr = 5;
static const uint32_t op_flush = 6;
static const uint32_t op_fsync = 7;
static const uint32_t op_fsyncdir = 8;
static const uint32_t op_readdir = 9;
static const uint32_t op_truncate = 10;
static const uint32_t op_ftruncate = 11;
static const uint32_t op_utimens = 12;
static const uint32_t op_readlink = 13;
static const uint32_t op_chown = 14;
static const uint32_t op_chmod = 15;
static const uint32_t op_mknod = 16;
static const uint32_t op_setxattr = 17;
static const uint32_t op_getxattr = 18;
static const uint32_t op_listxattr = 19;
static const uint32_t op_removexattr = 20;
static const uint32_t op_open = 21;
static const uint32_t op_opendir = 22;
static const uint32_t op_read = 23;
static const uint32_t op_write = 24;
static const uint32_t op_release = 25;
static const uint32_t op_releasedir = 26;
static const uint32_t op_create = 27;
static const uint32_t op_unlink = 28;
static const uint32_t op_rename = 29;
static const uint32_t op_link = 30;
static const uint32_t op_symlink = 31;
static const uint32_t op_mkdir = 32;
static const uint32_t op_rmdir = 33;
static const uint32_t op_fallocate = 34; // fallocate(2), libfuse 2.9's operation
static const uint32_t op_lock = 35; // POSIX record locks (fcntl), libfuse's lock
static const uint32_t op_flock = 36; // flock(2), libfuse 2.9's flock
#define OP_COUNT 37

// The sha256 of this directory's C sources this binary was compiled from
// (source-hash.js; binding.gyp passes it): index.js refuses a binary built
// from other sources, such as one left from before a change.
static const char fork_source_sha256[] = FORK_SOURCE_SHA256;

// a native fast path. setFastPath(hook) hands over a struct
// tscryptfs_fast_path (fuse_hooks.h); each READ first calls hook->read
// on the libfuse thread that received it, which answers with the bytes read,
// or -1 to send the request to JS as before; each WRITE first calls
// hook->write the same way (fuse_native_write_fast), a SETATTR of a node
// with an open handle hook->attr (attr_by_handle), and so on for the other
// hooks of the struct. The owner keeps it alive until the filesystem is
// unmounted.
//
// lending a hand while waiting. setAssistHook(hook) hands over a struct
// tscryptfs_assist_hook (fuse_hooks.h); a libfuse thread spinning for
// JS's answer calls hook->assist between its polls, which takes chunks of
// work JS has opened for others (the blocks of a large WRITE being sealed)
// and returns at once when there are none. The owner keeps it alive for the
// life of the process.

// Data structures

// a RELEASE waiting for JS (see fuse_native_release_later)
struct release_item {
  struct release_item *next;
  uint64_t fh;
  char path[];
};

typedef struct {
  napi_env env;
  pthread_t thread;
  pthread_attr_t attr;
  napi_ref ctx;
  napi_ref malloc;

  // Operation handlers
  napi_ref handlers[OP_COUNT]; // three more operations (fallocate, lock, flock)

  struct fuse *fuse;
  struct fuse_chan *ch;
  char mnt[1024];
  char mntopts[1024];
  int mounted;

  uv_async_t async;
  uv_mutex_t mut;
  uv_sem_t sem;

  // notify JS when fuse_loop_mt ends (external unmount / fusermount -u)
  napi_ref on_exit;
  uv_async_t exit_async;

  // answer getxattr("security.capability") with EOPNOTSUPP here, without a
  // trip to JS. The kernel asks for it before every write (file_remove_privs).
  int reject_capability;
  // JS answers each request in one go (direct I/O), so unlink and rmdir
  // may forget just their own entries (see attr_changing)
  int attr_targeted_ok;
  // a targeted change leaves the attributes it handed back in the cache (attr_ended)
  int attr_carried_ok;

  // attribute cache (attr_* below); NULL when off (-sharedstorage)
  struct attr_slot *attr_cache;
  uint64_t attr_gen;
  // the attribute cache's sequence: one step for each emptying and each
  // forgetting (attr_seq_now); attr_emptied_at, the step of the last emptying
  uint64_t attr_seq;
  uint64_t attr_emptied_at;
  // one step for each rename: the cipher paths listings left in the
  // cache (attr_put_listed) hold only within the step they were stored in
  uint64_t names_gen;
  // one step when a mkdir, rmdir or rename starts and one when it
  // ends (atomic, dirs_changing): the read hook's lookup keeps what it
  // read of directories only if this stood still while it read
  uint64_t dirs_gen;
  uv_mutex_t attr_mut;
  // kept listings (kept_*); NULL when off. Under attr_mut.
  struct kept_dir *kept;
  uint64_t kept_seq; // one step for each listing kept_dir_put records
  struct kept_copy *kept_copies; // listings the kernel has not completed (kept_copy_*); NULL when off. Under attr_mut.
  int opendir_in_js; // JS has an opendir (fuse_native_opendir_kept)

  // node ids of hard-linked files (see hl_*)
  struct hl_table *hl;

  // the native fast path (setFastPath); NULL: every request goes to JS
  struct tscryptfs_fast_path *fast_path;
  // setAssistHook; NULL: spinning threads only poll
  struct tscryptfs_assist_hook *assist_hook;

  // spinning (see fuse_native_hand_over); in_js: requests handed to JS and not yet answered
  uint64_t spin_ns;
  uint32_t in_js;
  uint64_t hot_ns;
  uint64_t last_op_ns;
  int hot; // the loop polls (uv_idle active); written on the JS thread, read on the libfuse threads too
  uv_idle_t idle;
  // every request keeps the loop polling, also those answered in C (see fuse_native_note_request)
  int hot_native;
  int hot_kick; // hot_async sent and not yet run
  uv_async_t hot_async;
  // spinning only while a core is free (see spin_gate_open); gate_mut held by the one thread looking
  int gate_on;
  int gate_open;
  uint64_t gate_checked_ns;
  uint64_t gate_busy_ticks;
  uint64_t gate_self_ns;
  long gate_hz; // clock ticks per second of /proc/stat
  long gate_cpus; // CPUs online
  uv_mutex_t gate_mut;

  // the locals of libfuse threads that have ended, for the threads it
  // starts next (see fuse_native_thread_exit); a list through next_free
  void *free_locals;
  uv_mutex_t locals_mut;

  // RELEASE answered at once, closed by JS later (see
  // fuse_native_release_later); on_release NULL: RELEASE waits for JS
  napi_ref on_release;
  uv_async_t release_async;
  uv_mutex_t release_mut;
  struct release_item *release_head;
  struct release_item *release_tail;
  int locks_taken; // a lock or flock was taken through this mount (see fuse_native_lock_wait)
} fuse_thread_t;

// attribute cache. The mount runs with attr_timeout=0 (hard links are
// separate kernel inodes in libfuse2's path API, so kernel-cached sizes could
// go stale under the other names), and every stat(2) reaches us as GETATTR.
// Repeated ones are answered here from getattr results less than a second
// old. Any operation that can change attributes (write, truncate, chmod,
// rename, unlink, ...) empties the whole cache when it starts and again when
// it ends, or, when it changes no more than one name and its directory (see
// attr_changing), forgets those two; so nothing this mount changed is ever
// served stale, and a result whose getattr overlapped such an operation is
// not stored. A change that hands back its attributes leaves them as the
// entry (attr_ended). Changes made by other programs on the cipher directory
// show within a second, as with gocryptfs's one-second attribute timeout.
#define ATTR_SLOTS 4096
#define ATTR_PATH_MAX 256
#define ATTR_TTL_US 1000000
// A listed entry's place in the cipher directory: its cipher path from the
// cipher directory's root, one name on disk per component (see attr_cipher_path)
#define ATTR_CPATH_MAX 640

struct attr_slot {
  uint64_t gen;
  struct timespec at;
  size_t len;
  char path[ATTR_PATH_MAX];
  struct stat st;
  int no_xattrs; // the cipher file had no extended attributes at all (readdir looked)
  int stale; // a change forgot the attributes; the kind of file (see attr_known_alone) still holds
  uint64_t forgot_at; // attr_seq when a change last forgot a path of this slot (whichever path it holds)
  // The cipher path a listing gave this slot's path (attr_cipher_path).
  // It outlives the attributes (emptying the cache leaves it), as only a
  // rename moves a name: valid while names_gen is cpath_gen, for a second.
  uint16_t cpath_len; // 0: not known
  uint8_t cpath_long; // the last name on disk is a long name's (it has a .name file beside it)
  uint64_t cpath_gen;
  struct timespec cpath_at;
  char cpath[ATTR_CPATH_MAX];
};

typedef struct {
  napi_ref self;

  // Opcode
  uint32_t op;
  void *op_fn;

  // Payloads
  const char *path;
  const char *dest;
  char *linkname;
  struct fuse_file_info *info;
  const void *buf;
  off_t offset;
  size_t len;
  mode_t mode;
  dev_t dev;
  uid_t uid;
  gid_t gid;
  struct timespec tv[2]; // utimens: atime and mtime, to the nanosecond
  int32_t res;

  // Extended attributes
  const char *name;
  const char *value;
  char *list;
  size_t size;
  uint32_t position;
  int flags;

  // Stat + Statfs
  struct stat *stat;
  struct statvfs *statvfs;

  // Readdir
  fuse_fill_dir_t readdir_filler;

  // attributes an operation handed back (fuse_native_carry_stat) for the
  // getattr/fgetattr libfuse makes right after it, in the same request
  int carried;
  char carried_path[4096];
  struct stat carried_stat;
  struct timespec carried_at;
  uint64_t attr_seq_start; // attr_seq when this thread's getattr went to JS
  int attr_targeted; // this unlink/rmdir forgets only its own entry and its parent's

  // Internal bookkeeping
  fuse_thread_t *fuse;
  uv_sem_t sem;
  uv_async_t async;
  void *next_free; // in fuse->free_locals while no thread has it

  // who made the request (fuse_get_context on the libfuse thread), for
  // the operations that create something: a root filesystem creates as them
  uid_t caller_uid;
  gid_t caller_gid;
  pid_t caller_pid;
  // the kernel asks this write or truncate to drop set-id bits (hl_req.kill_suidgid)
  int kill_suidgid;
  // a lock request's lock (fuse_native_lock)
  struct flock *lock;
} fuse_thread_locals_t;

static pthread_key_t thread_locals_key;
static fuse_thread_locals_t* get_thread_locals();
static void fuse_native_hand_over (fuse_thread_locals_t *l);
static void fuse_native_keep_hot (fuse_thread_t *ft);

// Helpers
// TODO: Extract into a separate file.



// utimens time -> JS [seconds, nanoseconds] (exact), null for UTIME_OMIT, now for UTIME_NOW
static void timespec_to_js (napi_env env, const struct timespec* ts, const struct timespec* now, napi_value* out) {
  if (ts->tv_nsec == UTIME_OMIT) {
    napi_get_null(env, out);
    return;
  }
  if (ts->tv_nsec == UTIME_NOW) ts = now;
  napi_value sec, nsec;
  napi_create_double(env, (double) ts->tv_sec, &sec);
  napi_create_uint32(env, (uint32_t) ts->tv_nsec, &nsec);
  napi_create_array_with_length(env, 2, out);
  napi_set_element(env, *out, 0, sec);
  napi_set_element(env, *out, 1, nsec);
}

static void populate_stat (uint32_t *ints, struct stat* stat) {
  stat_from_words(stat, ints); // the layout of stat_words.h (64-bit inodes, nanosecond times)
}

// the counts are 64-bit (two words, low first; getStatfsArray): as
// 32-bit words they wrapped at 2^32 blocks (16 TiB at 4 KiB) and at 2^32
// inodes (XFS and NFS report more free inodes than that).
static uint64_t statvfs_word64 (uint32_t **ints) {
  uint64_t lo = *(*ints)++;
  uint64_t hi = *(*ints)++;
  return lo | (hi << 32);
}

static void populate_statvfs (uint32_t *ints, struct statvfs* statvfs) {
  statvfs->f_bsize = *ints++;
  statvfs->f_frsize = *ints++;
  statvfs->f_blocks = statvfs_word64(&ints);
  statvfs->f_bfree = statvfs_word64(&ints);
  statvfs->f_bavail = statvfs_word64(&ints);
  statvfs->f_files = statvfs_word64(&ints);
  statvfs->f_ffree = statvfs_word64(&ints);
  statvfs->f_favail = statvfs_word64(&ints);
  statvfs->f_fsid = *ints++;
  statvfs->f_flag = *ints++;
  statvfs->f_namemax = *ints++;
}

// attribute cache (see struct attr_slot)
static int attr_get (fuse_thread_t *ft, const char *path, struct stat *st);
static int attr_known_alone (fuse_thread_t *ft, const char *path);
static int op_changes_attrs (uint32_t op) {
  return op == op_truncate || op == op_ftruncate || op == op_utimens || op == op_chown || op == op_chmod ||
    op == op_mknod || op == op_setxattr || op == op_removexattr || op == op_write || op == op_create ||
    op == op_unlink || op == op_rename || op == op_link || op == op_symlink || op == op_mkdir || op == op_rmdir ||
    op == op_fallocate;
}

// Empties the whole cache (lock held).
static void attr_empty_locked (fuse_thread_t *ft) {
  ft->attr_gen++;
  ft->attr_emptied_at = ++ft->attr_seq;
}

static void attr_bump (fuse_thread_t *ft) {
  if (ft == NULL || ft->attr_cache == NULL) return;
  uv_mutex_lock(&(ft->attr_mut));
  attr_empty_locked(ft);
  uv_mutex_unlock(&(ft->attr_mut));
}

// The cache's sequence now (0 when the cache is off): a getattr or a listing
// takes it before it reads, and its results are stored (attr_put) only if
// nothing emptied the cache since, nor forgot anything in their slots.
static uint64_t attr_seq_now (fuse_thread_t *ft) {
  if (ft->attr_cache == NULL) return 0;
  uv_mutex_lock(&(ft->attr_mut));
  uint64_t g = ft->attr_seq;
  uv_mutex_unlock(&(ft->attr_mut));
  return g;
}

// FNV-1a of a path, and its length in *len: where the attribute cache and the kept listings put it.
static uint32_t path_hash (const char *path, size_t *len) {
  uint32_t h = 2166136261u;
  size_t n = 0;
  for (; path[n] != 0; n++) h = (h ^ (uint8_t) path[n]) * 16777619u;
  *len = n;
  return h;
}

static struct attr_slot *attr_slot_of (fuse_thread_t *ft, const char *path, size_t *len) {
  return &(ft->attr_cache[path_hash(path, len) % ATTR_SLOTS]);
}

// Forgets the attributes of `path` and of its parent directory (lock held).
// The entries stay, marked stale, for attr_known_alone.
// The two slots are marked forgotten whatever they hold, so that a getattr
// of either path that read before this cannot store its result after it
// (attr_put), even when it ran beside the change on another thread (the
// read hook's native writes and attribute changes).
static void attr_forget_locked (fuse_thread_t *ft, const char *path) {
  size_t len;
  const uint64_t seq = ++ft->attr_seq;
  struct attr_slot *slot = attr_slot_of(ft, path, &len);
  if (slot->len == len && memcmp(slot->path, path, len) == 0) slot->stale = 1;
  slot->forgot_at = seq;
  const char *cut = strrchr(path, '/');
  if (cut == NULL) return;
  char parent[ATTR_PATH_MAX];
  size_t plen = cut == path ? 1 : (size_t) (cut - path);
  if (plen >= sizeof(parent)) return;
  memcpy(parent, path, plen);
  parent[plen] = 0;
  slot = attr_slot_of(ft, parent, &len);
  if (slot->len == len && memcmp(slot->path, parent, len) == 0) slot->stale = 1;
  slot->forgot_at = seq;
}

// An operation that can change attributes starts: returns 1 when it
// forgot only what it touches, 0 when it emptied the whole cache. Only
// unlink and rmdir of an entry cached with a link count of one (a file
// no other name shares; a directory) touch no more than themselves and
// their parent; and only if JS answers each request in one go, so that no
// getattr result read before the change can be stored after it ends.
static int op_changes_dirs (uint32_t op) {
  return op == op_mkdir || op == op_rmdir || op == op_rename;
}

static int attr_changing (fuse_thread_t *ft, uint32_t op, const char *path) {
  if (ft == NULL || ft->attr_cache == NULL) return 0;
  // Targeted: an operation that changes only `path` and its parent directory
  // forgets just those two entries. That holds for a new name, and for a change
  // to an existing name the cache knows as a directory or a single-link file
  // (another name of a hard-linked file would keep stale attributes).
  int alone = 0;
  if (ft->attr_targeted_ok && path != NULL && strlen(path) < ATTR_PATH_MAX) {
    if (op == op_create || op == op_mkdir || op == op_mknod || op == op_symlink) {
      alone = 1;
    } else if (op == op_rmdir) {
      alone = 1; // only a directory can be removed so, and a directory has one name
    } else if (op == op_unlink || op == op_write || op == op_truncate || op == op_ftruncate ||
               op == op_utimens || op == op_chown || op == op_chmod || op == op_setxattr || op == op_removexattr) {
      alone = attr_known_alone(ft, path);
    }
  }
  uv_mutex_lock(&(ft->attr_mut));
  if (op == op_rename) ft->names_gen++; // before the names move: no listing started before this stores (attr_put_listed)
  if (alone) attr_forget_locked(ft, path);
  else attr_empty_locked(ft);
  uv_mutex_unlock(&(ft->attr_mut));
  return alone;
}

// The operation has ended (before its result reaches the kernel).
static void attr_changed (fuse_thread_t *ft, const char *path, int targeted) {
  if (ft == NULL || ft->attr_cache == NULL) return;
  if (!targeted) {
    attr_bump(ft);
    return;
  }
  uv_mutex_lock(&(ft->attr_mut));
  attr_forget_locked(ft, path);
  uv_mutex_unlock(&(ft->attr_mut));
}

// A fresh entry for `path` (or a stale one, with even_stale): copies its
// attributes to `st` (if not NULL) and its no_xattrs flag to `no_xattrs` (if
// not NULL); 0 when there is none.
static int attr_lookup (fuse_thread_t *ft, const char *path, int even_stale, struct stat *st, int *no_xattrs) {
  if (ft->attr_cache == NULL || path == NULL || path[0] == 0) return 0;
  size_t len;
  struct attr_slot *slot = attr_slot_of(ft, path, &len);
  if (len >= ATTR_PATH_MAX) return 0;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int hit = 0;
  uv_mutex_lock(&(ft->attr_mut));
  if (slot->gen == ft->attr_gen && (even_stale || !slot->stale) && slot->len == len && memcmp(slot->path, path, len) == 0) {
    int64_t us = (int64_t) (now.tv_sec - slot->at.tv_sec) * 1000000 + (now.tv_nsec - slot->at.tv_nsec) / 1000;
    if (us >= 0 && us < ATTR_TTL_US) {
      if (st != NULL) *st = slot->st;
      if (no_xattrs != NULL) *no_xattrs = slot->no_xattrs;
      hit = 1;
    }
  }
  uv_mutex_unlock(&(ft->attr_mut));
  return hit;
}

// True when the cache knows `path` (stale attributes too, less than a second
// old, and nothing emptied the cache since) as a directory or a file with one
// link. Its link count can change only by a link, a rename or an unlink of
// another name, and those empty the whole cache (see attr_changing); a chmod,
// a write or a truncate leave it as it was.
static int attr_known_alone (fuse_thread_t *ft, const char *path) {
  struct stat st;
  return attr_lookup(ft, path, 1, &st, NULL) && (S_ISDIR(st.st_mode) || st.st_nlink == 1);
}

static int attr_get (fuse_thread_t *ft, const char *path, struct stat *st) {
  return attr_lookup(ft, path, 0, st, NULL);
}

// True when readdir saw that `path` has no extended attributes and nothing changed since.
static int attr_knows_no_xattrs (fuse_thread_t *ft, const char *path) {
  int none = 0;
  return attr_lookup(ft, path, 0, NULL, &none) && none;
}

// libfuse's name for an unlinked open file (.fuse_hiddenXXXX): a second name
// of a file whose link count says one, so never cached (see attr_changing)
static int attr_hidden_name (const char *path) {
  const char *base = strrchr(path, '/');
  return strncmp(base == NULL ? path : base + 1, ".fuse_hidden", 12) == 0;
}

// The slot where `path` (`len` bytes) is kept, when it may be kept at all; NULL if not.
static struct attr_slot *attr_slot_to_store (fuse_thread_t *ft, const char *path, size_t *len) {
  if (ft == NULL || ft->attr_cache == NULL || path == NULL || path[0] == 0 || attr_hidden_name(path)) return NULL;
  struct attr_slot *slot = attr_slot_of(ft, path, len);
  return *len < ATTR_PATH_MAX ? slot : NULL;
}

// Makes `st` the fresh entry of `path` in `slot` (lock held).
static void attr_store_locked (fuse_thread_t *ft, struct attr_slot *slot, const char *path, size_t len, const struct stat *st, int no_xattrs) {
  if (slot->len != len || memcmp(slot->path, path, len) != 0) slot->cpath_len = 0; // another path's
  slot->gen = ft->attr_gen;
  clock_gettime(CLOCK_MONOTONIC, &(slot->at));
  slot->len = len;
  memcpy(slot->path, path, len);
  slot->st = *st;
  slot->no_xattrs = no_xattrs;
  slot->stale = 0;
}

// Stores what a listing read, unless something that changed attributes
// ended or started since it took `seq_start` (attr_seq_now); with the
// entry's cipher path (`cpath_len` bytes, 0: not known) when it fits.
static void attr_put_listed (fuse_thread_t *ft, const char *path, const struct stat *st, uint64_t seq_start, int no_xattrs,
                             const char *cpath, size_t cpath_len, int cpath_long) {
  size_t len;
  struct attr_slot *slot = attr_slot_to_store(ft, path, &len);
  if (slot == NULL) return;
  uv_mutex_lock(&(ft->attr_mut));
  if (ft->attr_emptied_at <= seq_start && slot->forgot_at <= seq_start) {
    attr_store_locked(ft, slot, path, len, st, no_xattrs);
    if (cpath_len > 0 && cpath_len < ATTR_CPATH_MAX) {
      memcpy(slot->cpath, cpath, cpath_len);
      slot->cpath[cpath_len] = 0;
      slot->cpath_len = (uint16_t) cpath_len;
      slot->cpath_long = cpath_long ? 1 : 0;
      slot->cpath_gen = ft->names_gen;
      slot->cpath_at = slot->at;
    }
  }
  uv_mutex_unlock(&(ft->attr_mut));
}

// Stores what a getattr read (as attr_put_listed, without a cipher path).
static void attr_put (fuse_thread_t *ft, const char *path, const struct stat *st, uint64_t seq_start, int no_xattrs) {
  attr_put_listed(ft, path, st, seq_start, no_xattrs, NULL, 0, 0);
}

// native unlink. Copies to `cpath` (ATTR_CPATH_MAX bytes) the cipher
// path a listing gave `path` less than a second ago, with no rename since,
// and whether its name on disk is a long name's; 0 when there is none. The
// listing's directory could have been removed and made again meanwhile: its
// new IV gives its names new cipher names, so the old one is not found,
// and JS answers; as when another program renamed a directory on the way.
static int attr_cipher_path (fuse_thread_t *ft, const char *path, char *cpath, int *cpath_long) {
  if (ft->attr_cache == NULL || path == NULL || path[0] == 0) return 0;
  size_t len;
  struct attr_slot *slot = attr_slot_of(ft, path, &len);
  if (len >= ATTR_PATH_MAX) return 0;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int hit = 0;
  uv_mutex_lock(&(ft->attr_mut));
  if (slot->cpath_len > 0 && slot->cpath_gen == ft->names_gen && slot->len == len && memcmp(slot->path, path, len) == 0) {
    int64_t us = (int64_t) (now.tv_sec - slot->cpath_at.tv_sec) * 1000000 + (now.tv_nsec - slot->cpath_at.tv_nsec) / 1000;
    if (us >= 0 && us < ATTR_TTL_US) {
      memcpy(cpath, slot->cpath, (size_t) slot->cpath_len + 1);
      *cpath_long = slot->cpath_long;
      hit = 1;
    }
  }
  uv_mutex_unlock(&(ft->attr_mut));
  return hit;
}

// kept listings. The kernel can keep a directory's listing in its
// page cache (FOPEN_CACHE_DIR, protocol 7.28) and serve the next opendir's
// readdir from it, when the OPENDIR reply says FOPEN_KEEP_CACHE. It drops
// that listing by itself when this mount changes the directory (it bumps
// the directory's i_version) or when a GETATTR shows a new mtime. What it
// cannot see is a change another program made to the cipher directory.
// So every OPENDIR reply asks for CACHE_DIR, and KEEP_CACHE only when:
// - a listing of this path was read less than a second ago (kept_dir_put:
//   JS hands over the directory's attributes, read before its names, and
//   only when its ctime is far enough in the past that a later change
//   cannot have the same ctime, see src/vault/node-dir-ops.ts);
// - the cipher directory that listing came from, found again by its
//   cipher path (the read hook's dir_stat), has the same device, inode,
//   size, mtime and ctime now;
// - no rename was made since (names_gen): a listing read again gives the
//   attribute cache its entries' cipher paths again, which a rename voided
//   (attr_cipher_path), so that an rm -r right after a listing still
//   unlinks natively.
// One case stays open: two listings of a directory at once with another
// program's change between them, where the kernel keeps the older; the
// second bounds that to a second. -sharedstorage turns all of this off.
#define KEPT_SLOTS 1024

struct kept_dir {
  size_t len; // 0: empty
  char path[ATTR_PATH_MAX];
  uint64_t seq; // ft->kept_seq when stored: which listing this is (kept_copy_*)
  struct timespec at; // CLOCK_MONOTONIC, when stored
  uint64_t names_gen;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  char cpath[ATTR_CPATH_MAX];
};

static struct kept_dir *kept_slot_of (fuse_thread_t *ft, const char *path, size_t *len) {
  return &(ft->kept[path_hash(path, len) % KEPT_SLOTS]);
}

static int kept_same_time (const struct timespec *a, const struct timespec *b) {
  return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

// Remembers that `path` was listed from the cipher directory `cpath`, whose
// attributes were `st` before its names were read. Returns the listing's
// number (0: not recorded), for its copy (kept_copy_put).
static uint64_t kept_dir_put (fuse_thread_t *ft, const char *path, const char *cpath, const struct stat *st) {
  if (ft->kept == NULL || path == NULL || cpath == NULL) return 0;
  size_t len, clen = strlen(cpath);
  struct kept_dir *k = kept_slot_of(ft, path, &len);
  if (len == 0 || len >= ATTR_PATH_MAX || clen >= ATTR_CPATH_MAX) return 0;
  uv_mutex_lock(&(ft->attr_mut));
  const uint64_t seq = ++ft->kept_seq;
  k->len = len;
  k->seq = seq;
  memcpy(k->path, path, len);
  clock_gettime(CLOCK_MONOTONIC, &(k->at));
  k->names_gen = ft->names_gen;
  k->dev = st->st_dev;
  k->ino = st->st_ino;
  k->size = st->st_size;
  k->mtime = st->st_mtim;
  k->ctime = st->st_ctim;
  memcpy(k->cpath, cpath, clen + 1);
  uv_mutex_unlock(&(ft->attr_mut));
  return seq;
}

// True when the kernel may keep the listing it has of `path` (see above);
// then *seq (when not NULL) is that listing's number.
static int kept_dir_holds (fuse_thread_t *ft, const char *path, uint64_t *seq) {
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (ft->kept == NULL || path == NULL || hook == NULL || hook->dir_stat == NULL) return 0;
  size_t len;
  struct kept_dir *k = kept_slot_of(ft, path, &len);
  struct kept_dir was;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int hit = 0;
  uv_mutex_lock(&(ft->attr_mut));
  if (k->len == len && memcmp(k->path, path, len) == 0 && k->names_gen == ft->names_gen) {
    int64_t us = (int64_t) (now.tv_sec - k->at.tv_sec) * 1000000 + (now.tv_nsec - k->at.tv_nsec) / 1000;
    if (us >= 0 && us < ATTR_TTL_US) {
      was.dev = k->dev;
      was.ino = k->ino;
      was.size = k->size;
      was.mtime = k->mtime;
      was.ctime = k->ctime;
      was.seq = k->seq;
      memcpy(was.cpath, k->cpath, strlen(k->cpath) + 1);
      hit = 1;
    }
  }
  uv_mutex_unlock(&(ft->attr_mut));
  struct stat st;
  if (!hit || hook->dir_stat(hook->ctx, was.cpath, &st) != 0) return 0;
  const int holds = st.st_dev == was.dev && st.st_ino == was.ino && st.st_size == was.size &&
    kept_same_time(&st.st_mtim, &was.mtime) && kept_same_time(&st.st_ctim, &was.ctime);
  if (holds && seq != NULL) *seq = was.seq;
  return holds;
}

// copies of kept listings. The kernel lists a directory again from
// memory only when it has read the listing to its end (fuse_readdir_cache_end
// marks it complete on a READDIR reply of length 0). rm -r reads one
// getdents of each directory to see whether it is empty, closes it, opens
// it again and reads it all: the kernel's listing is not complete, so the
// second pass asks again. The binding keeps a copy of each listing it
// recorded (kept_dir_put) as libfuse's filler gets it: each name with the
// inode number and type the kernel is told. A READDIR at offset 0 of a path
// whose kept listing still holds (kept_dir_holds, the same checks as for the
// kernel's own copy, and the same listing: kept_dir's seq) is answered from
// it on this thread. The attributes of its names are not stored again: the
// listing the copy came from stored them a moment ago (attr_put_listed).
// A few slots, each listing up to KEPT_COPY_MAX bytes: rm -r, find and du
// read a directory's listing again right after the first.
#define KEPT_COPY_SLOTS 16
#define KEPT_COPY_MAX (256 * 1024)

struct kept_copy {
  size_t len; // 0: empty
  char path[ATTR_PATH_MAX];
  uint64_t seq; // the kept_dir listing this copies
  char *blob;   // kept_copy_entry records (malloc)
  size_t blob_len;
};

struct kept_copy_entry { // one name of a copy; the name and its NUL follow, then padding to 8 bytes
  uint64_t ino;
  uint32_t mode; // 0: the filler got no attributes
  uint32_t namelen;
};
#define KEPT_COPY_ENTRY_SIZE(namelen) ((sizeof(struct kept_copy_entry) + (namelen) + 1 + 7) & ~(size_t) 7)

// A copy being made, while JS's listing is handed to libfuse (readdir_packed).
struct kept_copy_build {
  char *blob;
  size_t len, cap;
  int failed;
};

static void kept_copy_add (struct kept_copy_build *b, const char *name, size_t namelen, const struct stat *st) {
  if (b->failed) return;
  const size_t size = KEPT_COPY_ENTRY_SIZE(namelen);
  if (b->len + size > KEPT_COPY_MAX) {
    b->failed = 1;
    return;
  }
  if (b->len + size > b->cap) {
    size_t cap = b->cap == 0 ? 4096 : b->cap * 2;
    while (cap < b->len + size) cap *= 2;
    char *grown = realloc(b->blob, cap);
    if (grown == NULL) {
      b->failed = 1;
      return;
    }
    b->blob = grown;
    b->cap = cap;
  }
  struct kept_copy_entry e = { st != NULL ? (uint64_t) st->st_ino : 0, st != NULL ? (uint32_t) st->st_mode : 0, (uint32_t) namelen };
  memset(b->blob + b->len, 0, size);
  memcpy(b->blob + b->len, &e, sizeof(e));
  memcpy(b->blob + b->len + sizeof(e), name, namelen);
  b->len += size;
}

// Keeps the copy `b` of listing `seq` of `path` (which takes its blob), unless it failed.
static void kept_copy_put (fuse_thread_t *ft, const char *path, uint64_t seq, struct kept_copy_build *b) {
  size_t len = 0;
  struct kept_copy *c = ft->kept_copies != NULL && path != NULL ? &(ft->kept_copies[path_hash(path, &len) % KEPT_COPY_SLOTS]) : NULL;
  if (c == NULL || seq == 0 || b->failed || len == 0 || len >= ATTR_PATH_MAX) {
    free(b->blob);
    b->blob = NULL;
    return;
  }
  uv_mutex_lock(&(ft->attr_mut));
  char *old = c->blob;
  c->len = len;
  memcpy(c->path, path, len);
  c->seq = seq;
  c->blob = b->blob;
  c->blob_len = b->len;
  uv_mutex_unlock(&(ft->attr_mut));
  free(old);
  b->blob = NULL;
}

// A READDIR at offset 0 answered from the copy of `path`'s kept listing,
// while that listing holds: 1 when answered, 0 when JS must list it.
static int kept_copy_fill (fuse_thread_t *ft, const char *path, void *buf, fuse_fill_dir_t filler) {
  uint64_t seq = 0;
  size_t len;
  if (ft->kept_copies == NULL || path == NULL || !kept_dir_holds(ft, path, &seq)) return 0;
  struct kept_copy *c = &(ft->kept_copies[path_hash(path, &len) % KEPT_COPY_SLOTS]);
  char *blob = NULL;
  size_t blob_len = 0;
  uv_mutex_lock(&(ft->attr_mut));
  if (c->len == len && memcmp(c->path, path, len) == 0 && c->seq == seq && c->blob != NULL) {
    blob = malloc(c->blob_len > 0 ? c->blob_len : 1);
    if (blob != NULL) {
      memcpy(blob, c->blob, c->blob_len);
      blob_len = c->blob_len;
    }
  }
  uv_mutex_unlock(&(ft->attr_mut));
  if (blob == NULL) return 0;
  for (size_t at = 0; at < blob_len;) {
    struct kept_copy_entry e;
    memcpy(&e, blob + at, sizeof(e));
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_ino = (ino_t) e.ino;
    st.st_mode = (mode_t) e.mode;
    if (filler(buf, blob + at + sizeof(e), e.mode != 0 ? &st : NULL, 0) == 1) break;
    at += KEPT_COPY_ENTRY_SIZE(e.namelen);
  }
  free(blob);
  return 1;
}

// A change has ended, on the JS thread, right before its result goes back:
// its entries are forgotten (attr_changed). A targeted change that handed
// its attributes back (carryStat, just before this) leaves them, under the
// same lock, as its path's entry, since the kernel often asks for them next: a GETATTR before
// a chown (to clear the set-id bits), or a stat after a create. They were
// read at the end of the change, and JS answers each request in one go
// (attr_targeted_ok), so no other change ran between that read and this.
// a mkdir, rmdir or rename starts or has ended: dirs_gen steps on,
// then the read hook forgets what it kept of the directories it touches
// (the path, a rename's both paths, and everything below them). A lookup
// that read before the step keeps nothing (see the hook's `lookup`).
static void dirs_changing_paths (fuse_thread_t *ft, const char *path, const char *dest) {
  if (ft == NULL) return;
  __atomic_add_fetch(&(ft->dirs_gen), 1, __ATOMIC_ACQ_REL);
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook == NULL || hook->dirs_changed == NULL) return;
  if (path != NULL) hook->dirs_changed(hook->ctx, path);
  if (dest != NULL) hook->dirs_changed(hook->ctx, dest);
}

static void dirs_changing (fuse_thread_locals_t *l) {
  dirs_changing_paths(l->fuse, l->path, l->op == op_rename ? l->dest : NULL);
}

static void attr_ended (fuse_thread_locals_t *l, int32_t res) {
  fuse_thread_t *ft = l->fuse;
  if (op_changes_dirs(l->op)) dirs_changing(l);
  const char *path = CHANGED_PATH(l);
  size_t len;
  struct attr_slot *slot = NULL;
  if (res == 0 && l->carried && l->attr_targeted && ft != NULL && ft->attr_carried_ok && path != NULL && strcmp(path, l->carried_path) == 0)
    slot = attr_slot_to_store(ft, path, &len);
  if (slot == NULL) {
    attr_changed(ft, path, l->attr_targeted);
    return;
  }
  uv_mutex_lock(&(ft->attr_mut));
  attr_forget_locked(ft, path);
  attr_store_locked(ft, slot, path, len, &(l->carried_stat), 0);
  uv_mutex_unlock(&(ft->attr_mut));
}

// hard links. libfuse2's path API gives every name of a file its own
// node id, so the kernel keeps one inode, and one page cache, per name: a
// handle open on one name would go on reading cached pages after a write
// through another name. gocryptfs (go-fuse) has one inode per file. Here the
// mount's channel is wrapped (hl_receive/hl_send): entry replies teach which
// node ids share a file (st_ino, use_ino), FORGETs unteach it, and when a
// WRITE, a size change or an FALLOCATE through one node id succeeds, the
// other node ids of the file get their cached pages of that range dropped
// (fuse_lowlevel_notify_inval_inode) before the writer sees the reply.
//
// Deadlock: the kernel keeps the pages of a buffered write locked until our
// reply, and dropping pages waits for their locks. Two writes in flight on
// two names of one file would wait for each other; so when another name of
// the file has a write in flight, the invalidation is sent right after the
// reply instead (concurrent writers get no ordering from the kernel either).
// A write stops counting as in flight just before its reply (see hl_send).
//
// The same notes answer fstat(2) of a file whose path libfuse has lost (an
// unlinked open file whose directory was then removed): the kernel asks
// GETATTR by node id without a handle, and libfuse, finding no path, would
// answer ENOENT itself. A GETATTR for a node id with an open handle is
// turned into one with that handle, which reaches fgetattr (flag_nullpath_ok).

#define HL_BUCKETS 16384
#define HL_MAX_SIBLINGS 64
#define HL_MAX_FH 4
// Protocol 7.21 (READDIRPLUS), which libfuse2's fuse_kernel.h (7.19) does not have.
#define HL_FUSE_READDIRPLUS 44
#define HL_FUSE_DO_READDIRPLUS (1 << 13)
#define HL_FUSE_READDIRPLUS_AUTO (1 << 14)
// Protocol 7.33: the file system drops set-id bits on write, truncate and chown.
#define HL_FUSE_HANDLE_KILLPRIV_V2 (1 << 28)
#define HL_FUSE_WRITE_KILL_SUIDGID (1 << 2)
#define HL_FATTR_KILL_SUIDGID (1 << 11)
// Protocol 7.28: the kernel may cache a directory's listing.
#define HL_FOPEN_CACHE_DIR (1 << 3)
// Protocol 7.23: renameat2's flags (RENAME2). The kernel sends it only to a
// file system that answered INIT with minor 23 or more; libfuse2 answers
// 19, which the channel raises (nothing between 7.19 and 7.23 changes a
// struct libfuse2 sends or reads without a flag asking for it).
#define HL_FUSE_RENAME2 45
#define HL_FUSE_RENAME2_MINOR 23
#define HL_RENAME_NOREPLACE (1 << 0)
#define HL_RENAME_EXCHANGE (1 << 1)
#define HL_RENAME_WHITEOUT (1 << 2)
struct hl_rename2_in {
  uint64_t newdir;
  uint32_t flags;
  uint32_t padding;
};
#define HL_NAME_MAX 1024
#define HL_LOCK_SEEN 256
#define HL_FUSE_GETLK 31
#define HL_FUSE_SETLK 32
#define HL_FUSE_SETLKW 33

struct hl_node {
  uint64_t nodeid;
  uint64_t ino;
  uint64_t nlookup;
  uint32_t writing;
  uint32_t nfh;
  uint64_t fh[HL_MAX_FH]; // handles open on this node id (see hl_note_request, GETATTR)
  struct fuse_attr *dir_attr; // a directory's attributes as last answered (see hl_orphan_reply)
  struct hl_node *next_id;
  struct hl_node *next_ino;
};

struct hl_table {
  uv_mutex_t mut;
  struct fuse_chan *ch; // the wrapping channel (for notifications)
  uint32_t attr_valid_ms; // kernel attribute timeout for files with one name (see hl_set_attr_valid)
  int posix_acl; // answer INIT with FUSE_POSIX_ACL: the kernel enforces ACLs (gocryptfs -acl)
  int readdirplus; // answer INIT with FUSE_DO_READDIRPLUS when the kernel offers it (see hl_plus_reply)
  int killpriv; // answer INIT with FUSE_HANDLE_KILLPRIV_V2 when the kernel offers it (see hl_req.kill_suidgid)
  int no_capabilities; // security.capability is answered EOPNOTSUPP (rejectCapability): no file has capabilities to drop
  int kept_listings; // OPENDIR replies say FOPEN_CACHE_DIR, and FOPEN_KEEP_CACHE when hl_req.keep_listing (see kept_dir_holds)
  fuse_thread_t *ft; // the mount (fuse_native_note_request)
  struct hl_node *by_id[HL_BUCKETS];
  struct hl_node *by_ino[HL_BUCKETS];
  // Lock owners seen with each handle (SETLK/SETLKW of a read or write lock), for hl_release_locks
  struct { uint64_t fh, owner; } lock_seen[HL_LOCK_SEEN];
  uint32_t nlock_seen;
};

// The request this libfuse thread is working on (fuse_loop_mt receives,
// processes and replies on one thread).
static __thread struct {
  uint64_t unique;
  uint64_t nodeid;
  uint32_t opcode;
  int writes;      // a content change counted in hl_node.writing
  uint64_t off;    // its range (len 0: to the end)
  uint64_t len;
  uint64_t link_old; // FUSE_LINK: the node id of the existing name
  uint32_t uid, gid, pid; // the caller, for the lookups a READDIRPLUS makes (hl_plus_reply)
  uint32_t init_flags; // FUSE_INIT: what the kernel offers
  uint32_t init_minor; // FUSE_INIT: the kernel's protocol minor
  uint32_t rename_flags; // a RENAME2 handed to libfuse as a RENAME: its flags, for the rename handler (and hl_exchange)
  int rename_noop;       // hl_exchange's made-up renames: libfuse's node table moves, the handler does nothing
  uint64_t rename_olddir, rename_newdir; // a RENAME_EXCHANGE's directories and names (hl_exchange)
  char rename_old[HL_NAME_MAX + 1], rename_new[HL_NAME_MAX + 1];
  uint64_t exchange_parked; // a RENAME_EXCHANGE's target is parked under a made-up name (hl_exchange): its number
  uint64_t release_fh;     // a RELEASE's handle (hl_release_locks)
  struct fuse_setattr_in setattr; // a SETATTR's argument (hl_orphan_reply)
  uint32_t plus_size;  // a READDIRPLUS read as a READDIR: the kernel's buffer size (0: not one)
  int kill_suidgid;    // a WRITE or SETATTR that must drop set-id bits (HANDLE_KILLPRIV_V2), handed to JS
  int attr_fh_ok;      // a SETATTR of mode, owner or times only, of a node with a handle open: attr_fh (see attr_by_handle)
  uint64_t attr_fh;
  int keep_listing;    // an OPENDIR whose directory's kept listing still holds (fuse_native_opendir_kept)
} hl_req;

static inline size_t hl_hash (uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return (size_t) (v % HL_BUCKETS);
}

static struct hl_node *hl_find_locked (struct hl_table *t, uint64_t nodeid) {
  for (struct hl_node *n = t->by_id[hl_hash(nodeid)]; n != NULL; n = n->next_id) {
    if (n->nodeid == nodeid) return n;
  }
  return NULL;
}

static void hl_unlink_ino_locked (struct hl_table *t, struct hl_node *n) {
  struct hl_node **p = &(t->by_ino[hl_hash(n->ino)]);
  while (*p != NULL && *p != n) p = &((*p)->next_ino);
  if (*p == n) *p = n->next_ino;
}

static void hl_track (struct hl_table *t, uint64_t nodeid, uint64_t ino) {
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, nodeid);
  if (n == NULL) {
    n = calloc(1, sizeof(struct hl_node));
    if (n != NULL) {
      n->nodeid = nodeid;
      n->ino = ino;
      size_t hi = hl_hash(nodeid);
      n->next_id = t->by_id[hi];
      t->by_id[hi] = n;
      size_t hj = hl_hash(ino);
      n->next_ino = t->by_ino[hj];
      t->by_ino[hj] = n;
    }
  } else if (n->ino != ino) { // the name now leads to another file
    hl_unlink_ino_locked(t, n);
    n->ino = ino;
    size_t hj = hl_hash(ino);
    n->next_ino = t->by_ino[hj];
    t->by_ino[hj] = n;
  }
  if (n != NULL) n->nlookup++;
  uv_mutex_unlock(&(t->mut));
}

static void hl_opened (struct hl_table *t, uint64_t nodeid, uint64_t fh) {
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, nodeid);
  if (n != NULL && n->nfh < HL_MAX_FH) n->fh[n->nfh++] = fh;
  uv_mutex_unlock(&(t->mut));
}

static void hl_forget_locked (struct hl_table *t, uint64_t nodeid, uint64_t nlookup) {
  struct hl_node *n = hl_find_locked(t, nodeid);
  if (n == NULL) return;
  n->nlookup = nlookup >= n->nlookup ? 0 : n->nlookup - nlookup;
  if (n->nlookup > 0) return;
  struct hl_node **p = &(t->by_id[hl_hash(nodeid)]);
  while (*p != n) p = &((*p)->next_id);
  *p = n->next_id;
  hl_unlink_ino_locked(t, n);
  free(n->dir_attr);
  free(n);
}

// Called with each request read from the kernel.
static void hl_note_request (struct hl_table *t, char *buf, size_t size) {
  const struct fuse_in_header *in = (const struct fuse_in_header *) buf;
  char *arg = buf + sizeof(struct fuse_in_header);
  size_t arglen = size - sizeof(struct fuse_in_header);
  hl_req.unique = in->unique;
  hl_req.nodeid = in->nodeid;
  hl_req.opcode = in->opcode;
  hl_req.writes = 0;
  hl_req.off = 0;
  hl_req.len = 0;
  hl_req.link_old = 0;
  hl_req.uid = in->uid;
  hl_req.gid = in->gid;
  hl_req.pid = in->pid;
  hl_req.init_flags = 0;
  hl_req.plus_size = 0;
  hl_req.kill_suidgid = 0;
  hl_req.attr_fh_ok = 0;
  hl_req.keep_listing = 0;
  hl_req.rename_flags = 0;
  hl_req.release_fh = (uint64_t) -1;
  if (in->opcode == FUSE_INIT && arglen >= sizeof(struct fuse_init_in)) {
    hl_req.init_flags = ((const struct fuse_init_in *) arg)->flags;
    hl_req.init_minor = ((const struct fuse_init_in *) arg)->minor;
    return;
  }
  if (in->opcode == HL_FUSE_READDIRPLUS && t->readdirplus && arglen >= sizeof(struct fuse_read_in)) {
    // libfuse2 knows only READDIR; the reply is turned back into a READDIRPLUS one (hl_plus_reply)
    ((struct fuse_in_header *) buf)->opcode = FUSE_READDIR;
    hl_req.opcode = FUSE_READDIR;
    hl_req.plus_size = ((const struct fuse_read_in *) arg)->size;
    return;
  }
  if (in->opcode == FUSE_LINK && arglen >= sizeof(struct fuse_link_in)) {
    hl_req.link_old = ((const struct fuse_link_in *) arg)->oldnodeid;
    return;
  }
  if (in->opcode == FUSE_FORGET && arglen >= sizeof(struct fuse_forget_in)) {
    uv_mutex_lock(&(t->mut));
    hl_forget_locked(t, in->nodeid, ((const struct fuse_forget_in *) arg)->nlookup);
    uv_mutex_unlock(&(t->mut));
    return;
  }
  if (in->opcode == FUSE_BATCH_FORGET && arglen >= sizeof(struct fuse_batch_forget_in)) {
    uint32_t count = ((const struct fuse_batch_forget_in *) arg)->count;
    const struct fuse_forget_one *one = (const struct fuse_forget_one *) (arg + sizeof(struct fuse_batch_forget_in));
    size_t room = (arglen - sizeof(struct fuse_batch_forget_in)) / sizeof(struct fuse_forget_one);
    if (count > room) count = (uint32_t) room;
    uv_mutex_lock(&(t->mut));
    for (uint32_t i = 0; i < count; i++) hl_forget_locked(t, one[i].nodeid, one[i].nlookup);
    uv_mutex_unlock(&(t->mut));
    return;
  }
  if (in->opcode == FUSE_GETATTR && arglen >= sizeof(struct fuse_getattr_in)) {
    struct fuse_getattr_in *g = (struct fuse_getattr_in *) arg;
    if (g->getattr_flags & FUSE_GETATTR_FH) return;
    uv_mutex_lock(&(t->mut));
    struct hl_node *n = hl_find_locked(t, in->nodeid);
    if (n != NULL && n->nfh > 0) {
      g->getattr_flags |= FUSE_GETATTR_FH;
      g->fh = n->fh[0];
    }
    uv_mutex_unlock(&(t->mut));
    return;
  }
  if ((in->opcode == HL_FUSE_SETLK || in->opcode == HL_FUSE_SETLKW) && arglen >= sizeof(struct fuse_lk_in)) {
    const struct fuse_lk_in *lk = (const struct fuse_lk_in *) arg;
    if (lk->lk.type == F_UNLCK || (lk->lk_flags & FUSE_LK_FLOCK)) return;
    uv_mutex_lock(&(t->mut));
    int known = 0;
    for (uint32_t i = 0; i < t->nlock_seen && !known; i++) known = t->lock_seen[i].fh == lk->fh && t->lock_seen[i].owner == lk->owner;
    if (!known && t->nlock_seen < HL_LOCK_SEEN) {
      t->lock_seen[t->nlock_seen].fh = lk->fh;
      t->lock_seen[t->nlock_seen].owner = lk->owner;
      __atomic_store_n(&(t->nlock_seen), t->nlock_seen + 1, __ATOMIC_RELEASE);
    }
    uv_mutex_unlock(&(t->mut));
    return;
  }
  if (in->opcode == FUSE_RELEASE && arglen >= sizeof(struct fuse_release_in)) {
    uint64_t fh = ((const struct fuse_release_in *) arg)->fh;
    hl_req.release_fh = fh;
    uv_mutex_lock(&(t->mut));
    struct hl_node *n = hl_find_locked(t, in->nodeid);
    for (uint32_t i = 0; n != NULL && i < n->nfh; i++) {
      if (n->fh[i] == fh) {
        n->fh[i] = n->fh[--n->nfh];
        break;
      }
    }
    uv_mutex_unlock(&(t->mut));
    return;
  }
  int writes = 0;
  if (in->opcode == FUSE_WRITE && arglen >= sizeof(struct fuse_write_in)) {
    const struct fuse_write_in *w = (const struct fuse_write_in *) arg;
    writes = 1;
    hl_req.off = w->offset;
    hl_req.len = w->size > 0 ? w->size : 1;
    hl_req.kill_suidgid = t->killpriv && (w->write_flags & HL_FUSE_WRITE_KILL_SUIDGID) != 0;
  } else if (in->opcode == FUSE_SETATTR && arglen >= sizeof(struct fuse_setattr_in)) {
    struct fuse_setattr_in *sa = (struct fuse_setattr_in *) arg;
    hl_req.setattr = *sa;
    writes = (sa->valid & FATTR_SIZE) != 0;
    hl_req.kill_suidgid = t->killpriv && (sa->valid & HL_FATTR_KILL_SUIDGID) != 0;
    if (t->killpriv && sa->valid == 0 && (in->uid != 0 || t->no_capabilities)) {
      // A SETATTR that sets nothing comes from the kernel's file_remove_privs
      // (before a write, fallocate or chown(-1, -1) by an unprivileged caller)
      // or from a chown(-1, -1) by root, whose set-id part HANDLE_KILLPRIV_V2
      // leaves to us. It becomes chown(-1, -1), which in the cipher directory
      // drops the bits by the kernel's own rule, and its reply hands the
      // kernel the new mode. From root it can also be a write dropping a
      // file's capabilities alone (ext4 keeps root's set-id bits then), but
      // only where files can have them (-suid).
      sa->valid = FATTR_UID | FATTR_GID;
      sa->uid = (uint32_t) -1;
      sa->gid = (uint32_t) -1;
    }
    if (!writes && (sa->valid & (FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_ATIME | FATTR_MTIME)) != 0) {
      // fchmod, fchown and futimens come without a handle (only a truncate
      // carries one); any handle open on the node id is the same file
      uv_mutex_lock(&(t->mut));
      struct hl_node *n = hl_find_locked(t, in->nodeid);
      if (n != NULL && n->nfh > 0) {
        hl_req.attr_fh = n->fh[0];
        hl_req.attr_fh_ok = 1;
      }
      uv_mutex_unlock(&(t->mut));
    }
  } else if (in->opcode == FUSE_FALLOCATE) {
    writes = 1;
  }
  if (!writes) return;
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, in->nodeid);
  if (n != NULL) {
    n->writing++;
    hl_req.writes = 1;
  }
  uv_mutex_unlock(&(t->mut));
}

// Whether this thread's SETATTR's node still has handle attr_fh open (the read hook's `still`, arg: the table).
static int hl_attr_fh_open (void *arg) {
  struct hl_table *t = (struct hl_table *) arg;
  int open = 0;
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, hl_req.nodeid);
  for (uint32_t i = 0; n != NULL && i < n->nfh && !open; i++) open = n->fh[i] == hl_req.attr_fh;
  uv_mutex_unlock(&(t->mut));
  return open;
}

// The other node ids of the file behind `nodeid`; *busy = one of them has a write in flight.
static int hl_siblings_locked (struct hl_table *t, uint64_t nodeid, uint64_t *out, int *busy) {
  struct hl_node *n = hl_find_locked(t, nodeid);
  int count = 0;
  *busy = 0;
  if (n == NULL) return 0;
  for (struct hl_node *m = t->by_ino[hl_hash(n->ino)]; m != NULL; m = m->next_ino) {
    if (m == n || m->ino != n->ino) continue;
    if (m->writing > 0) *busy = 1;
    if (count < HL_MAX_SIBLINGS) out[count++] = m->nodeid;
  }
  return count;
}

static void hl_invalidate (struct hl_table *t, const uint64_t *ids, int count, uint64_t off, uint64_t len) {
  for (int i = 0; i < count; i++) {
    // -ENOENT: the kernel has forgotten that node already; nothing to drop
    fuse_lowlevel_notify_inval_inode(t->ch, ids[i], (off_t) off, (off_t) len);
  }
}

static int hl_is_entry_reply (uint32_t opcode) {
  return opcode == FUSE_LOOKUP || opcode == FUSE_CREATE || opcode == FUSE_MKNOD || opcode == FUSE_LINK ||
    opcode == FUSE_SYMLINK || opcode == FUSE_MKDIR;
}

// Whether more than one node id of the table leads to file `ino`.
static int hl_shared_ino (struct hl_table *t, uint64_t ino) {
  int count = 0;
  uv_mutex_lock(&(t->mut));
  for (struct hl_node *m = t->by_ino[hl_hash(ino)]; m != NULL && count < 2; m = m->next_ino) {
    if (m->ino == ino) count++;
  }
  uv_mutex_unlock(&(t->mut));
  return count > 1;
}

// Kernel attribute timeouts. libfuse's high-level API gives every name of a
// hard-linked file its own node id, so its own kernel inode: attributes the
// kernel keeps for one name would go stale when the file changes through
// another. The mount therefore says attr_timeout=0, and here a reply's
// attributes are given attr_valid_ms when the file has one name (nlink <= 1)
// or is a directory. A file gains a second name only through LINK, whose
// existing name's attributes are dropped (hl_send) before it is answered;
// changes through other names of a file with several are handled above.
// A file with one name may still have other node ids: the hidden name of
// an unlinked open file whose last other name is about to go (its count
// drops to 0 by an UNLINK of another node id), or names the kernel has not
// forgotten yet; those replies get no timeout either.
// Off (0) when another mount may change the cipher directory.
static void hl_set_attr_valid (struct hl_table *t, struct fuse_attr *attr, uint64_t *valid, uint32_t *valid_nsec) {
  if (t->attr_valid_ms == 0 || (attr->nlink > 1 && !S_ISDIR(attr->mode))) return;
  if (!S_ISDIR(attr->mode) && hl_shared_ino(t, attr->ino)) return;
  *valid = t->attr_valid_ms / 1000;
  *valid_nsec = (t->attr_valid_ms % 1000) * 1000000;
}

static int hl_write_iov (struct fuse_chan *ch, const struct iovec iov[], size_t count);

// What every entry the kernel gets (a LOOKUP's, a creation's, a READDIRPLUS's)
// notes: its attribute timeout, and which node ids lead to a regular file.
// A directory node's attributes, as the latest reply gave them (`create`: for a new entry of it).
static void hl_note_dir_attr (struct hl_table *t, uint64_t nodeid, const struct fuse_attr *attr) {
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, nodeid);
  if (n != NULL && n->dir_attr == NULL) n->dir_attr = malloc(sizeof(struct fuse_attr));
  if (n != NULL && n->dir_attr != NULL) *(n->dir_attr) = *attr;
  uv_mutex_unlock(&(t->mut));
}

static void hl_note_entry (struct hl_table *t, struct fuse_entry_out *e) {
  hl_set_attr_valid(t, &(e->attr), &(e->attr_valid), &(e->attr_valid_nsec));
  if (e->nodeid != 0 && (S_ISREG(e->attr.mode) || S_ISDIR(e->attr.mode))) hl_track(t, e->nodeid, e->attr.ino);
  if (e->nodeid != 0 && S_ISDIR(e->attr.mode)) hl_note_dir_attr(t, e->nodeid, &(e->attr));
}

// A directory removed or renamed over while open. libfuse forgets its
// name, and then answers every GETATTR and SETATTR of it with ENOENT (it
// has no path, and directories have no handle on our side); ext4 goes on
// answering fstat(2) with the attributes and a link count of 0, and lets
// fchmod and fchown change them. So such an ENOENT for a directory node is
// answered here instead, from the attributes of its last reply, link count
// 0, with a SETATTR's changes applied (kept for the next one): the
// directory is gone from the cipher directory already, so nothing reaches
// the store. 1 when it was answered.
static int hl_orphan_reply (struct fuse_chan *ch, struct hl_table *t, const struct fuse_out_header *out) {
  struct {
    struct fuse_out_header head;
    struct fuse_attr_out attr;
  } reply;
  memset(&reply, 0, sizeof(reply));
  int found = 0;
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, hl_req.nodeid);
  if (n != NULL && n->dir_attr != NULL) {
    struct fuse_attr *a = n->dir_attr;
    if (hl_req.opcode == FUSE_SETATTR) {
      const struct fuse_setattr_in *sa = &(hl_req.setattr);
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      if (sa->valid & FATTR_MODE) a->mode = (a->mode & S_IFMT) | (sa->mode & 07777);
      if ((sa->valid & FATTR_UID) && sa->uid != (uint32_t) -1) a->uid = sa->uid;
      if ((sa->valid & FATTR_GID) && sa->gid != (uint32_t) -1) a->gid = sa->gid;
      if (sa->valid & FATTR_ATIME) { a->atime = (sa->valid & FATTR_ATIME_NOW) ? (uint64_t) now.tv_sec : sa->atime; a->atimensec = (sa->valid & FATTR_ATIME_NOW) ? (uint32_t) now.tv_nsec : sa->atimensec; }
      if (sa->valid & FATTR_MTIME) { a->mtime = (sa->valid & FATTR_MTIME_NOW) ? (uint64_t) now.tv_sec : sa->mtime; a->mtimensec = (sa->valid & FATTR_MTIME_NOW) ? (uint32_t) now.tv_nsec : sa->mtimensec; }
      a->ctime = (uint64_t) now.tv_sec;
      a->ctimensec = (uint32_t) now.tv_nsec;
    }
    a->nlink = 0;
    reply.attr.attr = *a;
    found = 1;
  }
  uv_mutex_unlock(&(t->mut));
  if (!found) return 0;
  reply.head.len = sizeof(reply);
  reply.head.error = 0;
  reply.head.unique = out->unique;
  struct iovec v = { &reply, sizeof(reply) };
  hl_write_iov(ch, &v, 1);
  return 1;
}

// READDIRPLUS. libfuse2 speaks protocol 7.19, so without this the kernel
// sends a LOOKUP for each name that ls -l, rm -r or find touches after a
// listing (the dentries of an earlier walk have timed out by then). When
// the kernel offers it, the INIT reply says FUSE_DO_READDIRPLUS (with
// READDIRPLUS_AUTO: the kernel asks for the plus form at the start of a
// listing, and further on only after a lookup of one of its names); each
// READDIRPLUS is handed to libfuse as the READDIR it otherwise is
// (hl_note_request), and its reply is rewritten here: every name gets the
// entry a LOOKUP of it would have got, made by libfuse itself on this
// thread (a LOOKUP request that never came from the kernel, answered into
// hl_synth instead of the device). So libfuse's node table counts the
// lookup the kernel now counts, as for a real LOOKUP. The attributes come
// from the attribute cache the listing just filled, or from the fast path's
// lookup when the cache no longer has them, never from JS
// (fuse_native_getattr_fast): a name neither has, or whose lookup fails,
// gets node id 0, which the kernel takes as "no entry to link", and it
// looks the name up itself when it needs it. The kernel
// links every entry of the reply (also those its reader has no room for)
// or sends a FORGET for it. A plus entry is larger than a plain one, so a
// reply stops early when the kernel's buffer is full; the kernel asks on
// from the offset of the last entry it got, and libfuse answers that from
// the listing it keeps for the open directory.

struct hl_direntplus_head { // struct fuse_direntplus up to the name (protocol 7.21)
  struct fuse_entry_out entry_out;
  struct fuse_dirent dirent;
};
#define HL_PLUS_NAME_OFFSET offsetof(struct hl_direntplus_head, dirent.name)

static __thread struct {
  uint64_t unique; // the made-up request being answered (0: none)
  int error;       // its reply's error (0 or -errno)
  int got;         // its reply was an entry
  struct fuse_entry_out entry;
} hl_synth;

static uint64_t hl_synth_next = 1;

// The entry of `name` in directory `parent`, as libfuse answers a LOOKUP; node id 0 when it fails.
static void hl_lookup_entry (struct fuse_chan *ch, uint64_t parent, const char *name, size_t namelen, struct fuse_entry_out *e) {
  memset(e, 0, sizeof(*e));
  char buf[sizeof(struct fuse_in_header) + 256];
  if (namelen == 0 || namelen > 255) return;
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  memset(in, 0, sizeof(*in));
  in->len = (uint32_t) (sizeof(*in) + namelen + 1);
  in->opcode = FUSE_LOOKUP;
  // Uniques of the kernel's own requests count up from 0; these stay far from them.
  in->unique = (1ull << 62) | __atomic_fetch_add(&hl_synth_next, 1, __ATOMIC_RELAXED);
  in->nodeid = parent;
  in->uid = hl_req.uid;
  in->gid = hl_req.gid;
  in->pid = hl_req.pid;
  memcpy(buf + sizeof(*in), name, namelen);
  buf[sizeof(*in) + namelen] = '\0';
  hl_synth.unique = in->unique;
  hl_synth.got = 0;
  fuse_session_process(fuse_chan_session(ch), buf, in->len, ch);
  hl_synth.unique = 0;
  if (hl_synth.got) *e = hl_synth.entry;
}

// hl_send of the made-up LOOKUP's reply: kept for hl_lookup_entry, noted as a LOOKUP reply is.
static int hl_synth_reply (struct hl_table *t, const struct fuse_out_header *out, const struct iovec iov[], size_t count) {
  hl_synth.error = out->error;
  if (out->error != 0 || count < 2 || iov[1].iov_len < sizeof(struct fuse_entry_out)) return 0;
  struct fuse_entry_out *e = &(hl_synth.entry);
  memcpy(e, iov[1].iov_base, sizeof(*e));
  if (e->nodeid == 0) return 0; // a negative entry (libfuse's negative_timeout): no name to link
  hl_note_entry(t, e);
  hl_synth.got = 1;
  return 0;
}

// renameat2's flags. libfuse2 knows only RENAME (protocol 7.19), so a
// RENAME2 is handed to it as a RENAME (the names move up over the flags),
// and its flags stay with this thread (hl_req.rename_flags) for the rename
// handler, which passes them to JS; JS makes the rename with the same flags
// on the backing store, so the check or the swap is atomic there, and a
// store that refuses a flag gives its error. Two parts of libfuse's rename
// need help:
// - it hides an open target (renames it to .fuse_hidden*) before the
//   rename: with RENAME_NOREPLACE the handler refuses that rename with
//   EEXIST, which is the answer the rename itself would give;
// - after a rename its node table has the source under the target's name
//   and the target under none, which for RENAME_EXCHANGE is wrong (the
//   kernel keeps both nodes, swapped). So the target's node is first parked
//   under a made-up name in the source's directory and, once the exchange
//   is answered, moved to the source's old name (or back, if it failed):
//   made-up RENAMEs that move libfuse's nodes and reach no handler
//   (hl_req.rename_noop). The kernel holds both directories locked until
//   the reply, so no other rename runs in between.

// The names of a RENAME's argument (after struct fuse_rename_in or the RENAME2 struct): 1 when both are there.
static int hl_rename_names (const char *names, size_t len, const char **old, const char **new) {
  const char *end = memchr(names, '\0', len);
  if (end == NULL) return 0;
  size_t rest = len - (size_t) (end + 1 - names);
  if (memchr(end + 1, '\0', rest) == NULL) return 0;
  *old = names;
  *new = end + 1;
  return 1;
}

// A RENAME2 as the RENAME libfuse2 understands; the new size of the request (size when it is not one).
static size_t hl_rename2 (char *buf, size_t size) {
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  size_t arglen = size - sizeof(struct fuse_in_header);
  if (in->opcode != HL_FUSE_RENAME2 || arglen < sizeof(struct hl_rename2_in)) return size;
  char *arg = buf + sizeof(struct fuse_in_header);
  const struct hl_rename2_in r = *(const struct hl_rename2_in *) arg;
  size_t nameslen = arglen - sizeof(struct hl_rename2_in);
  const char *old, *new;
  if (!hl_rename_names(arg + sizeof(struct hl_rename2_in), nameslen, &old, &new)) return size;
  if ((r.flags & HL_RENAME_EXCHANGE) && (strlen(old) > HL_NAME_MAX || strlen(new) > HL_NAME_MAX)) return size;
  if (r.flags & HL_RENAME_EXCHANGE) {
    hl_req.rename_olddir = in->nodeid;
    hl_req.rename_newdir = r.newdir;
    strcpy(hl_req.rename_old, old);
    strcpy(hl_req.rename_new, new);
  }
  ((struct fuse_rename_in *) arg)->newdir = r.newdir;
  memmove(arg + sizeof(struct fuse_rename_in), arg + sizeof(struct hl_rename2_in), nameslen);
  size_t shrink = sizeof(struct hl_rename2_in) - sizeof(struct fuse_rename_in);
  in->opcode = FUSE_RENAME;
  in->len -= (uint32_t) shrink;
  hl_req.opcode = FUSE_RENAME;
  hl_req.rename_flags = r.flags;
  return size - shrink;
}

// A made-up RENAME that moves a node in libfuse's table only; its error (0 or -errno).
static int hl_table_rename (struct fuse_chan *ch, uint64_t fromdir, const char *from, uint64_t todir, const char *to) {
  size_t lf = strlen(from), lt = strlen(to);
  size_t len = sizeof(struct fuse_in_header) + sizeof(struct fuse_rename_in) + lf + 1 + lt + 1;
  char *buf = calloc(1, len);
  if (buf == NULL) return -ENOMEM;
  struct fuse_in_header *in = (struct fuse_in_header *) buf;
  in->len = (uint32_t) len;
  in->opcode = FUSE_RENAME;
  in->unique = (1ull << 62) | __atomic_fetch_add(&hl_synth_next, 1, __ATOMIC_RELAXED);
  in->nodeid = fromdir;
  in->uid = hl_req.uid;
  in->gid = hl_req.gid;
  in->pid = hl_req.pid;
  ((struct fuse_rename_in *) (buf + sizeof(*in)))->newdir = todir;
  char *names = buf + sizeof(*in) + sizeof(struct fuse_rename_in);
  memcpy(names, from, lf + 1);
  memcpy(names + lf + 1, to, lt + 1);
  hl_req.rename_noop = 1;
  hl_synth.unique = in->unique;
  hl_synth.error = -EIO;
  hl_synth.got = 0;
  fuse_session_process(fuse_chan_session(ch), buf, len, ch);
  hl_synth.unique = 0;
  hl_req.rename_noop = 0;
  free(buf);
  return hl_synth.error;
}

static uint64_t hl_parked_next = 1;

// The made-up name a RENAME_EXCHANGE's target is parked under.
static void hl_parked_name (char *out, size_t size, uint64_t n) {
  snprintf(out, size, ".tscryptfs-exchange-%llu", (unsigned long long) n);
}

// Before libfuse sees a RENAME_EXCHANGE: its target's node goes under a made-up name.
static void hl_exchange_park (struct fuse_chan *ch) {
  char parked[64];
  uint64_t n = __atomic_fetch_add(&hl_parked_next, 1, __ATOMIC_RELAXED);
  hl_parked_name(parked, sizeof(parked), n);
  hl_req.exchange_parked = hl_table_rename(ch, hl_req.rename_newdir, hl_req.rename_new, hl_req.rename_olddir, parked) == 0 ? n : 0;
}

// Once the exchange is answered (error: its error): the parked node goes to the source's old name, or back.
static void hl_exchange_unpark (struct fuse_chan *ch, int error) {
  if (hl_req.exchange_parked == 0) return;
  char parked[64];
  hl_parked_name(parked, sizeof(parked), hl_req.exchange_parked);
  hl_req.exchange_parked = 0;
  if (error == 0) hl_table_rename(ch, hl_req.rename_olddir, parked, hl_req.rename_olddir, hl_req.rename_old);
  else hl_table_rename(ch, hl_req.rename_olddir, parked, hl_req.rename_newdir, hl_req.rename_new);
}

// Locks of a handle being released. The kernel frees a process's record
// locks with the FLUSH of each close and a flock with the RELEASE, but an
// open file description lock (F_OFD_SETLK: its owner is the open file)
// with nothing: libfuse 2.9, older than those locks, would keep it in its
// own list (and answer F_GETLK with it) and the file system would keep it
// taken. So before libfuse sees the RELEASE, each lock owner that locked
// through this handle gets a made-up unlock of the whole file: libfuse
// forgets its locks and the file system releases what it took for it. A
// process's record locks are gone by then (its FLUSH came first).
static void hl_release_locks (struct fuse_chan *ch, struct hl_table *t, uint64_t nodeid, uint64_t fh) {
  if (__atomic_load_n(&(t->nlock_seen), __ATOMIC_ACQUIRE) == 0) return; // no lock was ever taken through a handle still open
  uint64_t owners[16];
  int n = 0;
  uv_mutex_lock(&(t->mut));
  for (uint32_t i = 0; i < t->nlock_seen;) {
    if (t->lock_seen[i].fh == fh && n < 16) {
      owners[n++] = t->lock_seen[i].owner;
      t->lock_seen[i] = t->lock_seen[--t->nlock_seen];
    } else {
      i++;
    }
  }
  uv_mutex_unlock(&(t->mut));
  for (int i = 0; i < n; i++) {
    char buf[sizeof(struct fuse_in_header) + sizeof(struct fuse_lk_in)];
    memset(buf, 0, sizeof(buf));
    struct fuse_in_header *in = (struct fuse_in_header *) buf;
    in->len = (uint32_t) sizeof(buf);
    in->opcode = HL_FUSE_SETLK;
    in->unique = (1ull << 62) | __atomic_fetch_add(&hl_synth_next, 1, __ATOMIC_RELAXED);
    in->nodeid = nodeid;
    in->uid = hl_req.uid;
    in->gid = hl_req.gid;
    in->pid = hl_req.pid;
    struct fuse_lk_in *lk = (struct fuse_lk_in *) (buf + sizeof(*in));
    lk->fh = fh;
    lk->owner = owners[i];
    lk->lk.start = 0;
    lk->lk.end = INT64_MAX;
    lk->lk.type = F_UNLCK;
    hl_synth.unique = in->unique;
    hl_synth.error = -EIO;
    hl_synth.got = 0;
    fuse_session_process(fuse_chan_session(ch), buf, in->len, ch);
    hl_synth.unique = 0;
  }
}

// A READDIR reply (libfuse's struct fuse_dirent records) sent as the READDIRPLUS reply the kernel asked for.
static int hl_plus_reply (struct fuse_chan *ch, const struct fuse_out_header *out, const struct iovec iov[], size_t count) {
  struct fuse_out_header head = *out;
  // fuse_reply_buf sends the listing as one piece after the header (none when it is at its end).
  const char *plain = count >= 2 ? (const char *) iov[1].iov_base : NULL;
  size_t in_len = count >= 2 ? iov[1].iov_len : 0;
  size_t room = hl_req.plus_size;
  char *plus = count <= 2 ? malloc(room > 0 ? room : 1) : NULL;
  if (plus == NULL) { // the kernel still gets an answer
    head.error = count <= 2 ? -ENOMEM : -EIO;
    head.len = sizeof(head);
    struct iovec e[1] = { { &head, sizeof(head) } };
    return hl_write_iov(ch, e, 1);
  }
  uint64_t parent = hl_req.nodeid;
  size_t used = 0;
  for (size_t at = 0; at + FUSE_NAME_OFFSET <= in_len;) {
    const struct fuse_dirent *d = (const struct fuse_dirent *) (plain + at);
    size_t reclen = FUSE_DIRENT_SIZE(d);
    if (d->namelen == 0 || at + reclen > in_len) break; // libfuse cuts its listing by bytes: a partial record ends it
    size_t plus_len = FUSE_DIRENT_ALIGN(HL_PLUS_NAME_OFFSET + d->namelen);
    if (used + plus_len > room) break;
    struct hl_direntplus_head *p = (struct hl_direntplus_head *) (plus + used);
    memset(plus + used, 0, plus_len);
    const int dots = d->name[0] == '.' && (d->namelen == 1 || (d->namelen == 2 && d->name[1] == '.'));
    if (!dots) hl_lookup_entry(ch, parent, d->name, d->namelen, &(p->entry_out));
    memcpy(&(p->dirent), d, FUSE_NAME_OFFSET + d->namelen);
    used += plus_len;
    at += reclen;
  }
  head.len = (uint32_t) (sizeof(head) + used);
  struct iovec v[2] = { { &head, sizeof(head) }, { plus, used } };
  int res = hl_write_iov(ch, v, used > 0 ? 2 : 1);
  free(plus);
  return res;
}

static void fuse_native_note_request (fuse_thread_t *ft, const char *buf, size_t len);
// This thread's request wakes the JS loop once it is answered (fuse_native_note_request, hl_send).
static __thread int hl_kick_pending;

// The channel: the kernel channel's own receive/send (fuse_kern_chan.c), plus the notes above.
static int hl_receive (struct fuse_chan **chp, char *buf, size_t size) {
  struct fuse_chan *ch = *chp;
  struct fuse_session *se = fuse_chan_session(ch);
  ssize_t res;
  int err;
  do {
    res = read(fuse_chan_fd(ch), buf, size);
    err = errno;
    if (fuse_session_exited(se)) return 0;
  } while (res == -1 && err == ENOENT); // ENOENT: the request was interrupted; read the next
  if (res == -1) {
    if (err == ENODEV) { // unmounted
      fuse_session_exit(se);
      return 0;
    }
    if (err != EINTR && err != EAGAIN) perror("fuse: reading device");
    return -err;
  }
  if ((size_t) res < sizeof(struct fuse_in_header)) {
    fprintf(stderr, "short read on fuse device\n");
    return -EIO;
  }
  hl_note_request((struct hl_table *) fuse_chan_data(ch), buf, (size_t) res);
  fuse_native_note_request(((struct hl_table *) fuse_chan_data(ch))->ft, buf, (size_t) res);
  res = (ssize_t) hl_rename2(buf, (size_t) res);
  hl_req.exchange_parked = 0;
  if (hl_req.rename_flags & HL_RENAME_EXCHANGE) hl_exchange_park(ch);
  if (hl_req.release_fh != (uint64_t) -1) hl_release_locks(ch, (struct hl_table *) fuse_chan_data(ch), ((struct fuse_in_header *) buf)->nodeid, hl_req.release_fh);
  return (int) res;
}

static int hl_write_iov (struct fuse_chan *ch, const struct iovec iov[], size_t count) {
  ssize_t res = writev(fuse_chan_fd(ch), iov, count);
  if (res == -1) {
    int err = errno;
    // ENOENT: the request was interrupted, or a notification named a node the kernel forgot
    if (!fuse_session_exited(fuse_chan_session(ch)) && err != ENOENT) perror("fuse: writing device");
    return -err;
  }
  return 0;
}

static int hl_send_reply (struct fuse_chan *ch, const struct iovec iov[], size_t count);

// Sends a reply, then the JS loop's wake-up the request asked for (fuse_native_note_request).
static int hl_send (struct fuse_chan *ch, const struct iovec iov[], size_t count) {
  const int res = hl_send_reply(ch, iov, count);
  if (hl_kick_pending) {
    hl_kick_pending = 0;
    uv_async_send(&(((struct hl_table *) fuse_chan_data(ch))->ft->hot_async));
  }
  return res;
}

static int hl_send_reply (struct fuse_chan *ch, const struct iovec iov[], size_t count) {
  if (iov == NULL) return 0;
  struct hl_table *t = (struct hl_table *) fuse_chan_data(ch);
  const struct fuse_out_header *out = (const struct fuse_out_header *) iov[0].iov_base;
  if (count > 0 && iov[0].iov_len >= sizeof(*out) && hl_synth.unique != 0 && out->unique == hl_synth.unique) {
    return hl_synth_reply(t, out, iov, count); // a READDIRPLUS's lookup (hl_lookup_entry), not for the kernel
  }
  if (count == 0 || iov[0].iov_len < sizeof(*out) || out->unique == 0 || out->unique != hl_req.unique) {
    return hl_write_iov(ch, iov, count); // a notification, or not this thread's request
  }
  hl_req.unique = 0;
  hl_exchange_unpark(ch, out->error);
  if (out->error == -ENOENT && (hl_req.opcode == FUSE_GETATTR || hl_req.opcode == FUSE_SETATTR) && hl_orphan_reply(ch, t, out)) return 0;
  if (out->error == 0 && hl_req.plus_size > 0) return hl_plus_reply(ch, out, iov, count);
  if (out->error == 0 && hl_req.opcode == FUSE_INIT && count >= 2 && iov[1].iov_len >= sizeof(struct fuse_init_out)) {
    // libfuse2 knows neither POSIX ACLs nor READDIRPLUS (protocol 7.19); the kernel takes the flags from any reply
    struct fuse_init_out *init = (struct fuse_init_out *) iov[1].iov_base;
    if (t->posix_acl) init->flags |= FUSE_POSIX_ACL;
    if (t->readdirplus && (hl_req.init_flags & HL_FUSE_DO_READDIRPLUS)) init->flags |= HL_FUSE_DO_READDIRPLUS | HL_FUSE_READDIRPLUS_AUTO;
    // killpriv stays on only if the kernel agreed (no other request comes before this reply)
    if (!(hl_req.init_flags & HL_FUSE_HANDLE_KILLPRIV_V2)) t->killpriv = 0;
    if (t->killpriv) init->flags |= HL_FUSE_HANDLE_KILLPRIV_V2;
    if (hl_req.init_minor >= HL_FUSE_RENAME2_MINOR && init->minor < HL_FUSE_RENAME2_MINOR) init->minor = HL_FUSE_RENAME2_MINOR;
  }
  if (out->error == 0 && (hl_req.opcode == FUSE_GETATTR || hl_req.opcode == FUSE_SETATTR) && count >= 2 && iov[1].iov_len >= sizeof(struct fuse_attr_out)) {
    struct fuse_attr_out *a = (struct fuse_attr_out *) iov[1].iov_base;
    hl_set_attr_valid(t, &(a->attr), &(a->attr_valid), &(a->attr_valid_nsec));
    if (S_ISDIR(a->attr.mode)) hl_note_dir_attr(t, hl_req.nodeid, &(a->attr));
  }
  if (hl_req.opcode == FUSE_LINK && out->error == 0 && hl_req.link_old != 0) {
    hl_invalidate(t, &(hl_req.link_old), 1, (uint64_t) -1, 0); // its nlink (and ctime) changed
  }
  if (out->error == 0 && hl_is_entry_reply(hl_req.opcode) && count >= 2 && iov[1].iov_len >= sizeof(struct fuse_entry_out)) {
    struct fuse_entry_out *e = (struct fuse_entry_out *) iov[1].iov_base;
    hl_note_entry(t, e);
    if (e->nodeid != 0 && S_ISREG(e->attr.mode) && hl_req.opcode == FUSE_CREATE && iov[1].iov_len >= sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out)) {
      hl_opened(t, e->nodeid, ((const struct fuse_open_out *) ((const char *) iov[1].iov_base + sizeof(struct fuse_entry_out)))->fh);
    }
    return hl_write_iov(ch, iov, count);
  }
  if (out->error == 0 && hl_req.opcode == FUSE_OPENDIR && t->kept_listings && count >= 2 && iov[1].iov_len >= sizeof(struct fuse_open_out)) {
    // libfuse2 (protocol 7.19) has no FOPEN_CACHE_DIR, and its opendir replies never keep the cache (see kept_dir_holds)
    struct fuse_open_out *o = (struct fuse_open_out *) iov[1].iov_base;
    o->open_flags |= HL_FOPEN_CACHE_DIR;
    if (hl_req.keep_listing) o->open_flags |= FOPEN_KEEP_CACHE;
    return hl_write_iov(ch, iov, count);
  }
  if (out->error == 0 && hl_req.opcode == FUSE_OPEN && count >= 2 && iov[1].iov_len >= sizeof(struct fuse_open_out)) {
    hl_opened(t, hl_req.nodeid, ((const struct fuse_open_out *) iov[1].iov_base)->fh);
    return hl_write_iov(ch, iov, count);
  }
  if (!hl_req.writes) return hl_write_iov(ch, iov, count);
  uint64_t ids[HL_MAX_SIBLINGS];
  int busy = 0;
  uv_mutex_lock(&(t->mut));
  int n = out->error == 0 ? hl_siblings_locked(t, hl_req.nodeid, ids, &busy) : 0;
  uv_mutex_unlock(&(t->mut));
  if (n > 0 && !busy) hl_invalidate(t, ids, n, hl_req.off, hl_req.len);
  // The write stops counting as in flight before its reply goes: once the
  // writer has its answer, a write through another name must see no write
  // here, or it would take the path for concurrent writers and drop its
  // siblings' pages after its own reply, when a read through this name may
  // already have been served from them. (Counted down after the reply, a
  // thread preempted between the two made a sequential write-then-read
  // through two names read stale data.) No deadlock: from here on this
  // thread sends its reply before it waits for any page lock.
  uv_mutex_lock(&(t->mut));
  struct hl_node *self = hl_find_locked(t, hl_req.nodeid);
  if (self != NULL && self->writing > 0) self->writing--;
  uv_mutex_unlock(&(t->mut));
  int res = hl_write_iov(ch, iov, count);
  if (n > 0 && busy) hl_invalidate(t, ids, n, hl_req.off, hl_req.len);
  return res;
}

static void hl_destroy (struct fuse_chan *ch) {
  (void) ch; // the file descriptor belongs to the kernel channel, closed by fuse_unmount
}

static void hl_free (struct hl_table *t) {
  if (t == NULL) return;
  for (size_t i = 0; i < HL_BUCKETS; i++) {
    struct hl_node *n = t->by_id[i];
    while (n != NULL) {
      struct hl_node *next = n->next_id;
      free(n);
      n = next;
    }
  }
  uv_mutex_destroy(&(t->mut));
  free(t);
}

static struct fuse_chan_ops hl_chan_ops = {
  .receive = hl_receive,
  .send = hl_send,
  .destroy = hl_destroy,
};

// Methods

FUSE_METHOD(statfs, 1, 1, (const char * path, struct statvfs *statvfs), {
  l->path = path;
  l->statvfs = statvfs;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
}, {
  NAPI_ARGV_BUFFER_CAST(uint32_t*, ints, 2)
  populate_statvfs(ints, l->statvfs);
})

// STATFS answered by the read hook's `statfs` when it has one (the
// cipher directory's file system, as JS would answer), else by JS.
static int fuse_native_statfs_fast (const char *path, struct statvfs *statvfs) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook != NULL && hook->statfs != NULL && hook->statfs(hook->ctx, statvfs) == 0) return 0;
  return fuse_native_statfs(path, statvfs);
}

FUSE_METHOD(getattr, 1, 1, (const char *path, struct stat *stat), {
  l->path = path;
  l->stat = stat;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
}, {
  NAPI_ARGV_BUFFER_CAST(uint32_t*, ints, 2)
  populate_stat(ints, l->stat);
  if (res == 0) attr_put(l->fuse, l->path, l->stat, l->attr_seq_start, 0);
})

FUSE_METHOD(fgetattr, 2, 1, (const char *path, struct stat *stat, struct fuse_file_info *info), {
  l->path = path;
  l->stat = stat;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
}, {
  NAPI_ARGV_BUFFER_CAST(uint32_t*, ints, 2)
  populate_stat(ints, l->stat);
  if (res == 0) attr_put(l->fuse, l->path, l->stat, l->attr_seq_start, 0);
})

FUSE_METHOD_VOID(access, 2, 0, (const char *path, int mode), {
  l->path = path;
  l->mode = mode;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
})

FUSE_METHOD(open, 2, 1, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->flags, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
}, {
  NAPI_ARGV_INT32(fd, 2)
  if (fd != 0) {
    l->info->fh = fd;
  }
})

FUSE_METHOD(opendir, 3, 1, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
    napi_create_uint32(env, l->info->flags, &(argv[4]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
    napi_create_uint32(env, 0, &(argv[4]));
  }
}, {
  NAPI_ARGV_INT32(fd, 2)
  if (fd != 0) {
    l->info->fh = fd;
  }
})

// kept listings. OPENDIR answered here: decides whether the kernel
// may keep the listing it has (kept_dir_holds; hl_send puts it in the
// reply), then asks JS as before if it has an opendir (tscryptfs has none).
static int fuse_native_opendir_kept (const char *path, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  hl_req.keep_listing = kept_dir_holds(ft, path, NULL);
  return ft->opendir_in_js ? fuse_native_opendir(path, info) : 0;
}

FUSE_METHOD(create, 6, 1, (const char *path, mode_t mode, struct fuse_file_info *info), {
  l->path = path;
  l->mode = mode;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, l->info != NULL ? l->info->flags : 0, &(argv[4])); // open flags
  FUSE_CALLER_ARGV(5) // the caller
}, {
  NAPI_ARGV_INT32(fd, 2)
  if (fd != 0) {
    l->info->fh = fd;
  }
})

FUSE_METHOD_VOID(utimens, 3, 0, (const char *path, const struct timespec tv[2]), {
  l->path = path;
  l->tv[0] = tv[0];
  l->tv[1] = tv[1];
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  timespec_to_js(env, &(l->tv[0]), &now, &(argv[3])); // atime
  timespec_to_js(env, &(l->tv[1]), &now, &(argv[4])); // mtime
})

FUSE_METHOD_VOID(release, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD_VOID(releasedir, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD(read, 6, 2, (const char *path, char *buf, size_t len, off_t offset, struct fuse_file_info *info), {
  l->path = path;
  l->buf = buf;
  l->len = len;
  l->offset = offset;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->info->fh, &(argv[3]));
  napi_create_external_buffer(env, l->len, (char *) l->buf, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->len, &(argv[5]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 6)
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[3]) == napi_ok);
})

FUSE_METHOD(write, 7, 2, (const char *path, const char *buf, size_t len, off_t offset, struct fuse_file_info *info), {
  l->path = path;
  l->buf = buf;
  l->len = len;
  l->offset = offset;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->info->fh, &(argv[3]));
  napi_create_external_buffer(env, l->len, (char *) l->buf, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->len, &(argv[5]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 6)
  napi_get_boolean(env, l->kill_suidgid != 0, &(argv[8])); // drop set-id bits first
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[3]) == napi_ok);
})

// A listing handed to libfuse (listing_start, listing_entry, listing_end),
// from JS (readdir_packed) or from the fast path's `list` (native_list):
// each entry goes to libfuse's filler with d_type and d_ino, into the
// kept copy of the listing, and with flag 1 (TSCRYPTFS_LISTED_ATTRS) into
// the attribute cache, so that the LOOKUP and GETATTR of each that usually
// follow (ls -l, rm -r, find) are answered here; flag 2: it also has no
// extended attributes at all. With the listed directory's cipher path
// (from the cipher directory's root, "" for the root) and each entry's
// name on disk, the cache also keeps each entry's cipher path
// (attr_cipher_path); flag 4: that name is a long name's. With the
// directory's own attributes, read before its names, the kernel may keep
// this listing (kept_dir_put).
struct listing_fill {
  fuse_thread_t *ft;
  const char *dir;  // the listed directory's plaintext path
  void *buf;
  fuse_fill_dir_t filler;
  uint64_t gen;     // the cache's sequence taken before the listing was read (0: store nothing)
  char path[ATTR_PATH_MAX];
  size_t base;
  char cpath[ATTR_CPATH_MAX];
  size_t cbase;
  int cpaths;       // cpath holds the directory's cipher path and a '/'
  uint64_t kept_seq; // the listing's number, when it is kept (kept_copy_put)
  struct kept_copy_build copy;
};

static void listing_start (struct listing_fill *f, fuse_thread_t *ft, const char *dir, void *buf, fuse_fill_dir_t filler, off_t offset,
                           uint64_t gen, const char *cdir, size_t cdir_len, const struct stat *keep) {
  f->ft = ft;
  f->dir = dir;
  f->buf = buf;
  f->filler = filler;
  f->gen = gen;
  f->base = strlen(dir);
  if (f->base == 1) f->base = 0; // the root: "/name"
  if (f->base >= sizeof(f->path)) f->gen = 0;
  else memcpy(f->path, dir, f->base);
  f->cpaths = cdir != NULL && cdir_len + 1 < sizeof(f->cpath);
  f->cbase = 0;
  f->kept_seq = 0;
  if (f->cpaths) {
    memcpy(f->cpath, cdir, cdir_len);
    f->cpath[cdir_len] = 0;
    f->cbase = cdir_len;
    if (keep != NULL && ft->kept != NULL) f->kept_seq = kept_dir_put(ft, dir, f->cpath, keep);
    if (f->cbase > 0) f->cpath[f->cbase++] = '/';
  }
  f->copy = (struct kept_copy_build) { NULL, 0, 0, f->kept_seq == 0 || ft->kept_copies == NULL || offset != 0 };
}

// One entry (`st` NULL: no attributes; `disk` NULL: no name on disk); nonzero when libfuse took no more.
static int listing_entry (struct listing_fill *f, const char *name, size_t len, const struct stat *st, int flags, const char *disk) {
  if (f->filler(f->buf, name, st, 0) == 1) {
    f->copy.failed = 1; // libfuse took only part of it
    return 1;
  }
  kept_copy_add(&(f->copy), name, len, st);
  if (st != NULL && f->gen != 0 && (flags & 1) && f->base + 1 + len < sizeof(f->path)) {
    f->path[f->base] = '/';
    memcpy(f->path + f->base + 1, name, len + 1);
    size_t clen = 0, dlen = disk != NULL ? strlen(disk) : 0;
    if (f->cpaths && dlen > 0 && f->cbase + dlen + 1 < sizeof(f->cpath)) {
      memcpy(f->cpath + f->cbase, disk, dlen + 1);
      clen = f->cbase + dlen;
    }
    attr_put_listed(f->ft, f->path, st, f->gen, (flags & 2) != 0, f->cpath, clen, (flags & 4) != 0);
  }
  return 0;
}

static void listing_end (struct listing_fill *f) {
  kept_copy_put(f->ft, f->dir, f->kept_seq, &(f->copy));
}

// A listing from JS with its attributes packed (see _op_readdir in index.js):
// `stats` is a Uint32Array of 22 words per entry in populate_stat's layout
// (mode 0: none), `flags` a Uint8Array of listing_fill's flags, `gen` the
// cache's generation taken before the listing was read (0: store
// nothing), `cdir` the directory's cipher path and `disk` each entry's
// name on disk, `dir_v` the directory's own 22 words when the kernel may
// keep the listing (see listing_fill).
static void readdir_packed (napi_env env, fuse_thread_locals_t *l, napi_value names, napi_value stats, napi_value flags_v, napi_value gen_v,
                            napi_value cdir_v, napi_value disk_v, napi_value dir_v) {
  uint32_t n = 0;
  size_t words_len = 0, flags_len = 0;
  uint32_t *words = NULL;
  uint8_t *flags = NULL;
  double gen = 0;
  napi_typedarray_type t;
  if (napi_get_array_length(env, names, &n) != napi_ok) return;
  if (napi_get_typedarray_info(env, stats, &t, &words_len, (void **) &words, NULL, NULL) != napi_ok || t != napi_uint32_array || words_len != (size_t) n * 22) words = NULL;
  if (napi_get_typedarray_info(env, flags_v, &t, &flags_len, (void **) &flags, NULL, NULL) != napi_ok || t != napi_uint8_array || flags_len != n) flags = NULL;
  if (napi_get_value_double(env, gen_v, &gen) != napi_ok || flags == NULL) gen = 0;
  char cdir[ATTR_CPATH_MAX];
  size_t cdir_len = 0;
  uint32_t disk_n = 0;
  napi_valuetype vt;
  const int cpaths = napi_typeof(env, cdir_v, &vt) == napi_ok && vt == napi_string &&
    napi_get_value_string_utf8(env, cdir_v, cdir, sizeof(cdir), &cdir_len) == napi_ok && cdir_len + 1 < sizeof(cdir) &&
    napi_get_array_length(env, disk_v, &disk_n) == napi_ok && disk_n == n;
  struct stat dst;
  const struct stat *keep = NULL;
  size_t dir_len = 0;
  uint32_t *dir_words = NULL;
  if (cpaths && napi_get_typedarray_info(env, dir_v, &t, &dir_len, (void **) &dir_words, NULL, NULL) == napi_ok && t == napi_uint32_array && dir_len == 22) {
    populate_stat(dir_words, &dst);
    keep = &dst;
  }
  struct listing_fill f;
  listing_start(&f, l->fuse, l->path, l->buf, l->readdir_filler, l->offset, (uint64_t) gen, cpaths ? cdir : NULL, cdir_len, keep);
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    char name[1024], disk[ATTR_CPATH_MAX];
    size_t len = 0, dlen = 0;
    if (napi_get_element(env, names, i, &v) != napi_ok || napi_get_value_string_utf8(env, v, name, sizeof(name), &len) != napi_ok) continue;
    struct stat st;
    const int have = words != NULL && words[(size_t) i * 22] != 0;
    if (have) populate_stat(words + (size_t) i * 22, &st);
    const int has_disk = cpaths && napi_get_element(env, disk_v, i, &v) == napi_ok && napi_get_value_string_utf8(env, v, disk, sizeof(disk), &dlen) == napi_ok && dlen + 1 < sizeof(disk);
    if (listing_entry(&f, name, len, have ? &st : NULL, flags != NULL ? flags[i] : 0, has_disk ? disk : NULL)) break;
  }
  listing_end(&f);
}

FUSE_METHOD(readdir, 1, 7, (const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *info), {
  l->buf = buf;
  l->path = path;
  l->offset = offset;
  l->info = info;
  l->readdir_filler = filler;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
}, {
  bool packed = false;
  if (napi_is_typedarray(env, argv[3], &packed) == napi_ok && packed) {
    readdir_packed(env, l, argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], argv[8]);
  } else {
  uint32_t stats_length;
  uint32_t names_length;
  napi_get_array_length(env, argv[3], &stats_length);
  napi_get_array_length(env, argv[2], &names_length);

  napi_value raw_names = argv[2];
  napi_value raw_stats = argv[3];

  if (names_length != stats_length) {
    NAPI_FOR_EACH(raw_names, raw_name) {
      NAPI_UTF8(name, 1024, raw_name)
      int err = l->readdir_filler((char *) l->buf, name, NULL, 0);
      if (err == 1) {
        break;
      }
    }
  } else {
    NAPI_FOR_EACH(raw_names, raw_name) {
      NAPI_UTF8(name, 1024, raw_name)
      napi_value raw_stat;
      napi_get_element(env, raw_stats, i, &raw_stat);

      NAPI_BUFFER_CAST(uint32_t*, stats_array, raw_stat);
      struct stat st;
      populate_stat(stats_array, &st);

      // TODO: It turns out readdirplus likely won't work with FUSE 29...
      // Metadata caching between readdir/getattr will be enabled when we upgrade fuse-shared-library
      int err = l->readdir_filler((char *) l->buf, name, (struct stat *) &st, 0);
      if (err == 1) {
        break;
      }
    }
  }
  }
})

static struct tscryptfs_fast_path *path_hook (fuse_thread_t *ft, const char *path);

// The fast path's `list` as listing_fill's sink.
struct native_listing {
  struct tscryptfs_list_sink sink; // first: the hook gets a pointer to it
  struct listing_fill fill;
  fuse_thread_t *ft;
  const char *path;
  void *buf;
  fuse_fill_dir_t filler;
  uint64_t gen;
  int started;
};

static void native_list_start (struct tscryptfs_list_sink *s, const char *cpath, const struct stat *keep) {
  struct native_listing *nl = (struct native_listing *) s;
  listing_start(&(nl->fill), nl->ft, nl->path, nl->buf, nl->filler, 0, nl->gen, cpath, strlen(cpath), keep);
  nl->started = 1;
}

static int native_list_entry (struct tscryptfs_list_sink *s, const char *name, size_t len, const struct stat *st, int flags, const char *disk) {
  struct native_listing *nl = (struct native_listing *) s;
  return listing_entry(&(nl->fill), name, len, st, flags, disk);
}

// A READDIR at offset 0 whose listing the binding has a holding copy of
// is answered from it (kept_copy_fill); else one the fast path's `list`
// can read is answered on this thread (path_hook; with the attribute
// cache on, as JS hands over packed listings only then); any other goes
// to JS.
static int fuse_native_readdir_fast (const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (offset == 0 && ft->kept_copies != NULL && kept_copy_fill(ft, path, buf, filler)) return 0;
  struct tscryptfs_fast_path *hook = path_hook(ft, path);
  if (offset == 0 && hook != NULL && hook->list != NULL) {
    // nl.fill (8 KB, mostly path buffers) is left as it is: listing_start sets every field it reads.
    struct native_listing nl;
    nl.sink = (struct tscryptfs_list_sink) { native_list_start, native_list_entry };
    nl.ft = ft;
    nl.path = path;
    nl.buf = buf;
    nl.filler = filler;
    nl.gen = attr_seq_now(ft);
    nl.started = 0;
    if (nl.gen != 0) {
      const int res = hook->list(hook->ctx, path, &(ft->dirs_gen), &(nl.sink));
      if (nl.started) listing_end(&(nl.fill));
      if (res != TSCRYPTFS_HOOK_PASS) return res;
    }
  }
  return fuse_native_readdir(path, buf, filler, offset, info);
}

#ifdef __APPLE__

FUSE_METHOD(setxattr, 5, 1, (const char *path, const char *name, const char *value, size_t size, int flags, uint32_t position), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->flags = flags;
  l->position = position;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->position, &(argv[5]));
  napi_create_uint32(env, l->flags, &(argv[6]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

FUSE_METHOD(getxattr, 4, 1, (const char *path, const char *name, char *value, size_t size, uint32_t position), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->position = position;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, l->position, &(argv[5]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

#else

FUSE_METHOD(setxattr, 5, 1, (const char *path, const char *name, const char *value, size_t size, int flags), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
  l->flags = flags;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, 0, &(argv[5])); // normalize apis between mac and linux
  napi_create_uint32(env, l->flags, &(argv[6]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

FUSE_METHOD(getxattr, 4, 1, (const char *path, const char *name, char *value, size_t size), {
  l->path = path;
  l->name = name;
  l->value = value;
  l->size = size;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_external_buffer(env, l->size, (char *) l->value, NULL, NULL, &(argv[4]));
  napi_create_uint32(env, 0, &(argv[5]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

#endif

// the attributes an operation on `path` hands back, for take_carried_stat; 0 when the path does not fit
static int carry_locals (fuse_thread_locals_t *l, const char *path, const struct stat *st) {
  size_t n = strlen(path);
  l->carried = 0;
  if (n >= sizeof(l->carried_path) - 1) return 0;
  memcpy(l->carried_path, path, n + 1);
  l->carried_stat = *st;
  clock_gettime(CLOCK_MONOTONIC, &(l->carried_at));
  l->carried = 1;
  return 1;
}

// libfuse2's high-level API follows chmod, chown, utimens, truncate,
// create, mkdir, mknod, symlink and link with a getattr/fgetattr of the same
// path in the same request. When the operation handed its attributes back,
// answer that call here instead of with a second trip to JS.
static int take_carried_stat (const char *path, struct stat *stat) {
  fuse_thread_locals_t *l = get_thread_locals();
  if (!l->carried) return 0;
  l->carried = 0;
  if (strcmp(path, l->carried_path) != 0) return 0;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t us = (int64_t) (now.tv_sec - l->carried_at.tv_sec) * 1000000 + (now.tv_nsec - l->carried_at.tv_nsec) / 1000;
  if (us < 0 || us > 5000) return 0;
  *stat = l->carried_stat;
  return 1;
}

// The fast path for a request that names `path`: when one is set and the
// cache is on (not with -sharedstorage), except for libfuse's hidden names
// (JS serves those from open handles); NULL otherwise.
static struct tscryptfs_fast_path *path_hook (fuse_thread_t *ft, const char *path) {
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook == NULL || ft->attr_cache == NULL || path == NULL || path[0] == 0 || attr_hidden_name(path)) return NULL;
  return hook;
}

// native lookup. A GETATTR the cache cannot answer goes to the read
// hook's `lookup` first, when it has one (path_hook). What it finds is
// kept as a getattr's result is, with the cipher path, for a native unlink
// (attr_put_listed). Returns its answer, or TSCRYPTFS_HOOK_PASS.
static int fuse_native_lookup_native (fuse_thread_t *ft, const char *path, struct stat *stat, uint64_t seq_start) {
  struct tscryptfs_fast_path *hook = path_hook(ft, path);
  if (hook == NULL || hook->lookup == NULL) return TSCRYPTFS_HOOK_PASS;
  char cpath[ATTR_CPATH_MAX];
  int cpath_long = 0;
  int res = hook->lookup(hook->ctx, path, &(ft->dirs_gen), stat, cpath, sizeof(cpath), &cpath_long);
  if (res == 0) attr_put_listed(ft, path, stat, seq_start, 0, cpath, strlen(cpath), cpath_long);
  return res;
}

static int fuse_native_getattr_fast (const char *path, struct stat *stat) {
  if (path == NULL) path = "";
  if (take_carried_stat(path, stat)) return 0;
  fuse_thread_locals_t *l = get_thread_locals();
  if (attr_get(l->fuse, path, stat)) return 0;
  l->attr_seq_start = attr_seq_now(l->fuse);
  int res = fuse_native_lookup_native(l->fuse, path, stat, l->attr_seq_start);
  if (res != TSCRYPTFS_HOOK_PASS) return res;
  // A READDIRPLUS's lookup never asks JS. The cache no longer has the
  // listing's attributes when the directory holds more names than the
  // cache (or the cache changed while it was read); the fast path's lookup
  // (a name encryption and an fstatat) then costs less than the LOOKUP
  // the kernel would send, but a trip to JS per name costs more.
  if (hl_synth.unique != 0) return -EAGAIN;
  return fuse_native_getattr(path, stat);
}

// An FGETATTR the cache cannot answer, of a file the fast path opened, is
// the fast path's fstat of its descriptor (its `fgetattr`).
static int fuse_native_fgetattr_fast (const char *path, struct stat *stat, struct fuse_file_info *info) {
  if (path == NULL) path = "";
  if (take_carried_stat(path, stat)) return 0;
  fuse_thread_locals_t *l = get_thread_locals();
  if (attr_get(l->fuse, path, stat)) return 0;
  struct tscryptfs_fast_path *hook = path_hook(l->fuse, path);
  if (hook != NULL && hook->fgetattr != NULL && info != NULL && hook->fgetattr(hook->ctx, info->fh, stat) == 0) return 0;
  l->attr_seq_start = attr_seq_now(l->fuse);
  return fuse_native_fgetattr(path, stat, info);
}

// OPEN through the read hook's `open` when it has one (path_hook): a file
// opened for reading gets a handle of the hook's (0x80000000 and up) with
// no trip to JS. JS adopts such a handle when a request for it reaches JS
// after all.
static int fuse_native_open_fast (const char *path, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = path_hook(ft, path);
  if (hook != NULL && hook->open != NULL && info != NULL) {
    uint64_t fh = 0;
    int res = hook->open(hook->ctx, path, info->flags, &(ft->dirs_gen), &fh);
    if (res == 0) {
      info->fh = fh;
      return 0;
    }
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_open(path, info);
}

// CREATE through the read hook's `create` when it has one (path_hook): a
// new file made and opened on the libfuse thread, its handle the hook's as
// for an open. The attribute cache forgets and keeps what a create JS
// answers makes it forget and keep (attr_changing, attr_ended), and the
// new file's attributes answer the fgetattr libfuse sends next.
static int fuse_native_create_fast (const char *path, mode_t mode, struct fuse_file_info *info) {
  struct fuse_context *fc = fuse_get_context();
  fuse_thread_t *ft = (fuse_thread_t *) fc->private_data;
  struct tscryptfs_fast_path *hook = path_hook(ft, path);
  if (hook != NULL && hook->create != NULL && info != NULL) {
    fuse_thread_locals_t *l = get_thread_locals();
    l->op = op_create;
    l->path = path;
    l->carried = 0;
    l->attr_targeted = attr_changing(ft, op_create, path);
    uint64_t fh = 0;
    struct stat st;
    int res = hook->create(hook->ctx, path, mode, info->flags, fc->uid, fc->gid, &(ft->dirs_gen), &fh, &st);
    if (res == 0) {
      carry_locals(l, path, &st);
      attr_ended(l, 0);
      info->fh = fh;
      return 0;
    }
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_create(path, mode, info);
}

// a RELEASE the read hook's `release` finished (a handle its `open`
// made, which JS never adopted): nothing goes to JS
static int release_native (fuse_thread_t *ft, struct fuse_file_info *info) {
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  return hook != NULL && hook->release != NULL && info != NULL && hook->release(hook->ctx, info->fh) == 0;
}

static int fuse_native_release_fast (const char *path, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (release_native(ft, info)) return 0;
  return fuse_native_release(path, info);
}

// READ through the native fast path when one is set and it answers
static int fuse_native_read_fast (const char *path, char *buf, size_t len, off_t offset, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook != NULL && info != NULL) {
    int n = hook->read(hook->ctx, info->fh, buf, len, offset);
    if (n >= 0) return n;
  }
  return fuse_native_read(path, buf, len, offset, info);
}

// WRITE through the native write path when one is set and it
// answers (not a write that must drop set-id bits: JS does that first). The
// attribute cache forgets the file as for a write JS answers; a getattr JS
// is answering meanwhile on its own thread, with the size from before this
// write, does not store its result (attr_put).
static int fuse_native_write_fast (const char *path, const char *buf, size_t len, off_t offset, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook != NULL && hook->write != NULL && info != NULL && !hl_req.kill_suidgid) {
    int targeted = attr_changing(ft, op_write, path);
    int res = hook->write(hook->ctx, info->fh, buf, len, offset);
    attr_changed(ft, path, targeted);
    if (res != TSCRYPTFS_HOOK_PASS) return res == 0 ? (int) len : res;
  }
  return fuse_native_write(path, buf, len, offset, info);
}

// setFastPath(thread, hook): an external pointing to a struct
// tscryptfs_fast_path, or null to send every request to JS again
NAPI_METHOD(fuse_native_set_fast_path) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  napi_valuetype t;
  void *p = NULL;
  if (napi_typeof(env, argv[1], &t) != napi_ok) return NULL;
  if (t == napi_external && napi_get_value_external(env, argv[1], &p) != napi_ok) return NULL;
  struct tscryptfs_fast_path *hook = (struct tscryptfs_fast_path *) p;
  if (hook != NULL && hook->magic != TSCRYPTFS_FAST_PATH_MAGIC) {
    napi_throw_error(env, "EINVAL", "setFastPath: not a fast path");
    return NULL;
  }
  __atomic_store_n(&(ft->fast_path), hook, __ATOMIC_RELEASE);
  return NULL;
}

// setAssistHook(thread, hook): an external pointing to a struct
// tscryptfs_assist_hook, or null
NAPI_METHOD(fuse_native_set_assist_hook) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  napi_valuetype t;
  void *p = NULL;
  if (napi_typeof(env, argv[1], &t) != napi_ok) return NULL;
  if (t == napi_external && napi_get_value_external(env, argv[1], &p) != napi_ok) return NULL;
  struct tscryptfs_assist_hook *hook = (struct tscryptfs_assist_hook *) p;
  if (hook != NULL && hook->magic != TSCRYPTFS_ASSIST_HOOK_MAGIC) {
    napi_throw_error(env, "EINVAL", "setAssistHook: not an assist hook");
    return NULL;
  }
  __atomic_store_n(&(ft->assist_hook), hook, __ATOMIC_RELEASE);
  return NULL;
}

// carryStat(threadLocals, path, statArray): called by JS just before it signals the operation's result
NAPI_METHOD(fuse_native_carry_stat) {
  NAPI_ARGV(3)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_locals_t *, l, 0);
  char path[sizeof(l->carried_path)];
  size_t path_len;
  l->carried = 0;
  if (napi_get_value_string_utf8(env, argv[1], path, sizeof(path), &path_len) != napi_ok) return NULL;
  NAPI_ARGV_BUFFER_CAST(uint32_t *, ints, 2)
  struct stat st;
  populate_stat(ints, &st);
  carry_locals(l, path, &st);
  return NULL;
}

// attrGen(thread) -> the attribute cache's sequence now (attr_seq_now; 0 when the cache is off)
NAPI_METHOD(fuse_native_attr_gen) {
  NAPI_ARGV(1)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  napi_value r;
  napi_create_double(env, (double) attr_seq_now(ft), &r);
  return r;
}

// Zeroes `len` bytes at `p`: the whole pages inside go back to the system
// (MADV_DONTNEED: zero-filled at their next use), the edges are cleared.
static size_t zero_and_release (void *p, size_t len) {
  const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE), a = (uintptr_t) p, b = a + len;
  const uintptr_t first = (a + page - 1) & ~(page - 1), last = b & ~(page - 1);
  if (first >= last) {
    memset(p, 0, len);
    return 0;
  }
  memset(p, 0, first - a);
  memset((void *) last, 0, b - last);
  if (madvise((void *) first, last - first, MADV_DONTNEED) != 0) memset((void *) first, 0, last - first);
  return last - first;
}

// dropCaches(): a quiet mount's caches go back to the state of a fresh
// mount (every slot empty, as calloc made them) and their memory to the
// system: the attribute cache (about 4.6 MB once a big tree has gone
// through it), the kept listings and their copies. Nothing in them is worth
// keeping after a quiet spell: attributes and cipher paths hold for a
// second, listings are read again. Returns the bytes given back.
NAPI_METHOD(fuse_native_drop_caches) {
  NAPI_ARGV(1)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 0);
  size_t released = 0;
  if (ft->attr_cache != NULL) {
    uv_mutex_lock(&(ft->attr_mut));
    attr_empty_locked(ft);
    released += zero_and_release(ft->attr_cache, ATTR_SLOTS * sizeof(struct attr_slot));
    if (ft->kept != NULL) released += zero_and_release(ft->kept, KEPT_SLOTS * sizeof(struct kept_dir));
    if (ft->kept_copies != NULL) {
      for (int i = 0; i < KEPT_COPY_SLOTS; i++) {
        released += ft->kept_copies[i].blob_len;
        free(ft->kept_copies[i].blob);
      }
      memset(ft->kept_copies, 0, KEPT_COPY_SLOTS * sizeof(struct kept_copy));
    }
    uv_mutex_unlock(&(ft->attr_mut));
  }
  napi_value r;
  napi_create_double(env, (double) released, &r);
  return r;
}

// True when the fast path's `no_xattrs` (path_hook) finds that `path` has
// no extended attributes (for attribute `name`; NULL: a list).
static int fuse_native_no_xattrs (fuse_thread_t *ft, const char *path, const char *name) {
  struct tscryptfs_fast_path *hook = path_hook(ft, path);
  if (hook == NULL || hook->no_xattrs == NULL) return 0;
  return hook->no_xattrs(hook->ctx, path, name, &(ft->dirs_gen)) == -ENODATA;
}

// short-cut for the capability lookup the kernel makes before every write,
// and for entries with no extended attributes at all
static int fuse_native_getxattr_fast (const char *path, const char *name, char *value, size_t size
#ifdef __APPLE__
  , uint32_t position
#endif
) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (ft->reject_capability && strcmp(name, "security.capability") == 0) return -EOPNOTSUPP;
  if (attr_knows_no_xattrs(ft, path)) return -ENODATA; // readdir saw none
  if (fuse_native_no_xattrs(ft, path, name)) return -ENODATA;
#ifdef __APPLE__
  return fuse_native_getxattr(path, name, value, size, position);
#else
  return fuse_native_getxattr(path, name, value, size);
#endif
}

FUSE_METHOD(listxattr, 2, 1, (const char *path, char *list, size_t size), {
  l->path = path;
  l->list = list;
  l->size = size;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_external_buffer(env, l->size, l->list, NULL, NULL, &(argv[3]));
}, {
  if (IS_ARRAY_BUFFER_DETACH_SUPPORTED == 1) assert(napi_detach_arraybuffer(env, argv[2]) == napi_ok);
})

// an empty list for what readdir saw, or the fast path finds, has no extended attributes
static int fuse_native_listxattr_fast (const char *path, char *list, size_t size) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (attr_knows_no_xattrs(ft, path) || fuse_native_no_xattrs(ft, path, NULL)) return 0;
  return fuse_native_listxattr(path, list, size);
}

FUSE_METHOD_VOID(removexattr, 2, 0, (const char *path, const char *name), {
  l->path = path;
  l->name = name;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &(argv[3]));
})

FUSE_METHOD_VOID(flush, 2, 0, (const char *path, struct fuse_file_info *info), {
  l->path = path;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
})

FUSE_METHOD_VOID(fsync, 3, 0, (const char *path, int datasync, struct fuse_file_info *info), {
  l->path = path;
  l->mode = datasync;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[4]));
  } else {
    napi_create_uint32(env, 0, &(argv[4]));
  }
})

// FSYNC of an open file through the fast path's `fsync` when one is set:
// an fsync(2) of the handle's cipher file, with no trip to JS (which would
// also adopt a handle the fast path opened)
static int fuse_native_fsync_fast (const char *path, int datasync, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook != NULL && hook->fsync != NULL && info != NULL) {
    int res = hook->fsync(hook->ctx, info->fh, datasync);
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_fsync(path, datasync, info);
}

FUSE_METHOD_VOID(fsyncdir, 3, 0, (const char *path, int datasync, struct fuse_file_info *info), {
  l->path = path;
  l->mode = datasync;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[4]));
  } else {
    napi_create_uint32(env, 0, &(argv[4]));
  }
})


FUSE_METHOD_VOID(truncate, 4, 0, (const char *path, off_t size), {
  l->path = path;
  l->offset = size;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 3)
  napi_get_boolean(env, l->kill_suidgid != 0, &(argv[5])); // drop set-id bits too
})

FUSE_METHOD_VOID(ftruncate, 5, 0, (const char *path, off_t size, struct fuse_file_info *info), {
  l->path = path;
  l->offset = size;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  if (l->info != NULL) {
    napi_create_uint32(env, l->info->fh, &(argv[3]));
  } else {
    napi_create_uint32(env, 0, &(argv[3]));
  }
  FUSE_UINT64_TO_INTS_ARGV(l->offset, 4)
  napi_get_boolean(env, l->kill_suidgid != 0, &(argv[6])); // drop set-id bits too
})

FUSE_METHOD(readlink, 1, 1, (const char *path, char *linkname, size_t len), {
  l->path = path;
  l->linkname = linkname;
  l->len = len;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
}, {
  NAPI_ARGV_UTF8(linkname, l->len, 2)
  strncpy(l->linkname, linkname, l->len);
})

FUSE_METHOD_VOID(chown, 3, 0, (const char *path, uid_t uid, gid_t gid), {
  l->path = path;
  l->uid = uid;
  l->gid = gid;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->uid, &(argv[3]));
  napi_create_uint32(env, l->gid, &(argv[4]));
})

FUSE_METHOD_VOID(chmod, 2, 0, (const char *path, mode_t mode), {
  l->path = path;
  l->mode = mode;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
})

// chmod, chown and utimens of a file with a handle open. The kernel
// sends fchmod(2), fchown(2) and futimens(2) (and their path forms) as a
// SETATTR of the node, which libfuse2 splits into path operations, each a
// trip to JS. When the channel found a handle open on that node id
// (hl_req.attr_fh), the read hook's `attr` makes the change on the
// handle's cipher file instead, on this thread, with the attribute cache
// kept as for a change JS makes, and carries the attributes after it to
// the getattr libfuse makes next. TSCRYPTFS_HOOK_PASS: JS answers.
static int attr_by_handle (uint32_t op, const char *path, const struct tscryptfs_attr_change *c) {
  if (!hl_req.attr_fh_ok || hl_req.opcode != FUSE_SETATTR) return TSCRYPTFS_HOOK_PASS;
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook == NULL || hook->attr == NULL || ft->hl == NULL) return TSCRYPTFS_HOOK_PASS;
  fuse_thread_locals_t *l = get_thread_locals();
  l->op = op;
  l->path = path;
  l->carried = 0;
  l->attr_targeted = attr_changing(l->fuse, op, path);
  struct stat st;
  int have_stat = 0;
  int res = hook->attr(hook->ctx, hl_req.attr_fh, c, &st, &have_stat, hl_attr_fh_open, ft->hl);
  if (res == TSCRYPTFS_HOOK_PASS) {
    attr_changed(l->fuse, path, l->attr_targeted);
    return res;
  }
  if (res == 0 && have_stat) carry_locals(l, path, &st);
  attr_ended(l, res);
  return res;
}

static int fuse_native_chmod_fast (const char *path, mode_t mode) {
  if (path == NULL) path = "";
  struct tscryptfs_attr_change c = { .op = TSCRYPTFS_ATTR_CHMOD, .mode = mode };
  int res = attr_by_handle(op_chmod, path, &c);
  return res != TSCRYPTFS_HOOK_PASS ? res : fuse_native_chmod(path, mode);
}

static int fuse_native_chown_fast (const char *path, uid_t uid, gid_t gid) {
  if (path == NULL) path = "";
  struct tscryptfs_attr_change c = { .op = TSCRYPTFS_ATTR_CHOWN, .uid = uid, .gid = gid };
  int res = attr_by_handle(op_chown, path, &c);
  return res != TSCRYPTFS_HOOK_PASS ? res : fuse_native_chown(path, uid, gid);
}

static int fuse_native_utimens_fast (const char *path, const struct timespec tv[2]) {
  if (path == NULL) path = "";
  struct tscryptfs_attr_change c = { .op = TSCRYPTFS_ATTR_UTIMENS, .tv = { tv[0], tv[1] } };
  int res = attr_by_handle(op_utimens, path, &c);
  return res != TSCRYPTFS_HOOK_PASS ? res : fuse_native_utimens(path, tv);
}

FUSE_METHOD_VOID(mknod, 6, 0, (const char *path, mode_t mode, dev_t dev), {
  l->path = path;
  l->mode = mode;
  l->dev = dev;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  napi_create_uint32(env, l->dev, &(argv[4]));
  FUSE_CALLER_ARGV(5) // the caller
})

FUSE_METHOD_VOID(unlink, 1, 0, (const char *path), {
  l->path = path;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
})

// UNLINK through the read hook's `unlink` when it has one and the
// attribute cache knows where the name is in the cipher directory (a
// listing told it: attr_cipher_path). The cache forgets the entry and its
// parent, or empties itself, as for an unlink JS answers (attr_changing).
// libfuse has already hidden a name with open handles (.fuse_hidden*, see
// src/fuse/hidden-files.ts) instead of calling this, and the cache never
// holds such a name.
// When no listing told the cache where the name is, the read hook's
// lookup finds it (fuse_native_lookup_native), as a LOOKUP would.
static int fuse_native_unlink_fast (const char *path) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  char cpath[ATTR_CPATH_MAX];
  int cpath_long = 0;
  struct stat st;
  if (hook != NULL && hook->unlink != NULL &&
      (attr_cipher_path(ft, path, cpath, &cpath_long) ||
       (fuse_native_lookup_native(ft, path, &st, attr_seq_now(ft)) == 0 && !S_ISDIR(st.st_mode) && attr_cipher_path(ft, path, cpath, &cpath_long)))) {
    int targeted = attr_changing(ft, op_unlink, path);
    int res = hook->unlink(hook->ctx, cpath, cpath_long);
    attr_changed(ft, path, targeted);
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_unlink(path);
}

// A handle open on the node libfuse hides by renaming it to `dest`
// (".fuse_hidden", the node id as 8 hex digits, then a counter: libfuse
// 2.9's node ids are 32-bit); -1 when there is none or dest is not such a name. It lets JS
// find the open file where the store gives a file another inode number
// when it is renamed (rclone), so that the unlinked file is not left under
// its hidden name.
static int64_t hl_hidden_fh (fuse_thread_t *ft, const char *dest) {
  const char *base = strrchr(dest, '/');
  base = base != NULL ? base + 1 : dest;
  if (ft->hl == NULL || strncmp(base, ".fuse_hidden", 12) != 0 || strlen(base) != 28) return -1;
  char hex[9];
  memcpy(hex, base + 12, 8);
  hex[8] = '\0';
  struct hl_table *t = ft->hl;
  uv_mutex_lock(&(t->mut));
  struct hl_node *n = hl_find_locked(t, strtoull(hex, NULL, 16));
  int64_t fh = n != NULL && n->nfh > 0 ? (int64_t) n->fh[0] : -1;
  uv_mutex_unlock(&(t->mut));
  return fh;
}

// renameat2's flags as a third argument (see hl_rename2), the
// caller (a whiteout belongs to them), and for libfuse's hiding of an open
// file a handle open on it (hl_hidden_fh; -1: none); the made-up renames of
// an exchange move libfuse's nodes only; the hiding of an open target is
// refused under RENAME_NOREPLACE.
FUSE_METHOD_VOID(rename, 7, 0, (const char *path, const char *dest), {
  if (hl_req.rename_noop) return 0;
  const char *base = strrchr(dest, '/');
  if ((hl_req.rename_flags & HL_RENAME_NOREPLACE) && strncmp(base != NULL ? base + 1 : dest, ".fuse_hidden", 12) == 0) return -EEXIST;
  l->path = path;
  l->dest = dest;
  l->flags = (int) hl_req.rename_flags;
  l->offset = (off_t) hl_hidden_fh(l->fuse, dest);
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->dest, NAPI_AUTO_LENGTH, &(argv[3]));
  napi_create_uint32(env, (uint32_t) l->flags, &(argv[4]));
  FUSE_CALLER_ARGV(5)
  napi_create_double(env, (double) l->offset, &(argv[8]));
})

// RENAME through the read hook's `rename` when it has one, for a
// rename(2) without flags whose names are neither of libfuse's hidden ones:
// the hook renames what is no directory (nothing a walk keeps moves). The
// cache empties itself and voids the cipher paths listings gave
// (attr_changing's names_gen), as for a rename JS answers. libfuse's
// rename over an open target first hides it (a rename to .fuse_hidden*,
// which JS answers); JS then holds the target's path, which the hook's
// rename leaves to JS, until it has seen the second half
// (src/fuse/hidden-files.ts, native/fastpath/held.h).
static int fuse_native_rename_fast (const char *path, const char *dest) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  if (hook != NULL && hook->rename != NULL && hl_req.rename_flags == 0 && !hl_req.rename_noop &&
      !attr_hidden_name(path) && !attr_hidden_name(dest)) {
    attr_changing(ft, op_rename, path);
    int res = hook->rename(hook->ctx, path, dest, &(ft->dirs_gen));
    attr_changed(ft, path, 0);
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_rename(path, dest);
}

FUSE_METHOD_VOID(link, 2, 0, (const char *path, const char *dest), {
  l->path = path;
  l->dest = dest;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->dest, NAPI_AUTO_LENGTH, &(argv[3]));
})

FUSE_METHOD_VOID(symlink, 5, 0, (const char *path, const char *dest), {
  l->path = path;
  l->dest = dest;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_string_utf8(env, l->dest, NAPI_AUTO_LENGTH, &(argv[3]));
  FUSE_CALLER_ARGV(4) // the caller
})

FUSE_METHOD_VOID(mkdir, 5, 0, (const char *path, mode_t mode), {
  l->path = path;
  l->mode = mode;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->mode, &(argv[3]));
  FUSE_CALLER_ARGV(4) // the caller
})

// fallocate(path, mode, offset, length, fh); offsets as numbers (exact below 2^53)
FUSE_METHOD_VOID(fallocate, 5, 0, (const char *path, int mode, off_t offset, off_t len, struct fuse_file_info *info), {
  l->path = path;
  l->mode = mode;
  l->offset = offset;
  l->len = len;
  l->info = info;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_int32(env, (int32_t) l->mode, &(argv[3]));
  napi_create_double(env, (double) l->offset, &(argv[4]));
  napi_create_double(env, (double) l->len, &(argv[5]));
  napi_create_uint32(env, l->info != NULL ? (uint32_t) l->info->fh : 0, &(argv[6]));
})

// POSIX record locks and flock(2), for a file system that keeps
// them itself (tscryptfs takes them on the cipher file, so another mount of
// the same cipher directory sees them). lock(path, fh, set, type, start,
// len, ownerLow, ownerHigh, pid): set 0 is F_GETLK, whose answer (the
// conflicting lock: type, start, length, pid) comes back in a
// Float64Array(4); 1 is F_SETLK, which never waits (fuse_native_lock_wait
// makes F_SETLKW of it). flock(path, fh, op) with LOCK_NB when it must not wait.
FUSE_METHOD(lock, 9, 1, (const char *path, struct fuse_file_info *info, int cmd, struct flock *lock), {
  l->path = path;
  l->info = info;
  l->mode = cmd;
  l->lock = lock;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->info != NULL ? (uint32_t) l->info->fh : 0, &(argv[3]));
  napi_create_int32(env, l->mode == F_GETLK ? 0 : 1, &(argv[4]));
  napi_create_int32(env, l->lock->l_type, &(argv[5]));
  napi_create_double(env, (double) l->lock->l_start, &(argv[6]));
  napi_create_double(env, (double) l->lock->l_len, &(argv[7]));
  uint64_t owner = l->info != NULL ? l->info->lock_owner : 0;
  FUSE_UINT64_TO_INTS_ARGV(owner, 8)
  napi_create_int32(env, l->lock->l_pid, &(argv[10]));
}, {
  if (res == 0 && l->mode == F_GETLK && argc > 2) {
    double *answer;
    size_t answer_len;
    napi_typedarray_type kind;
    napi_value ab;
    size_t off;
    if (napi_get_typedarray_info(env, argv[2], &kind, &answer_len, (void **) &answer, &ab, &off) == napi_ok && kind == napi_float64_array && answer_len >= 4) {
      l->lock->l_type = (short) answer[0];
      l->lock->l_whence = SEEK_SET;
      l->lock->l_start = (off_t) answer[1];
      l->lock->l_len = (off_t) answer[2];
      l->lock->l_pid = (pid_t) answer[3];
    }
  }
})

FUSE_METHOD_VOID(flock, 3, 0, (const char *path, struct fuse_file_info *info, int op), {
  l->path = path;
  l->info = info;
  l->mode = op;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
  napi_create_uint32(env, l->info != NULL ? (uint32_t) l->info->fh : 0, &(argv[3]));
  napi_create_int32(env, (int32_t) l->mode, &(argv[4]));
})

// waiting for a lock. JS only tries (a lock is never waited for in
// the daemon); a request that must wait tries again from its own libfuse
// thread, 1 ms later and then up to 32 ms apart, until it gets the lock or
// its caller is interrupted by a signal (EINTR, as a local F_SETLKW or
// flock). libfuse sends an unlock of everything with each close (FLUSH);
// while nothing was ever locked through this mount it is answered here.
static int fuse_native_lock_wait (const char *path, struct fuse_file_info *info, int cmd, struct flock *lock) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (cmd != F_GETLK && lock->l_type == F_UNLCK && !__atomic_load_n(&(ft->locks_taken), __ATOMIC_ACQUIRE)) return 0;
  if (cmd != F_GETLK && lock->l_type != F_UNLCK) __atomic_store_n(&(ft->locks_taken), 1, __ATOMIC_RELEASE);
  if (cmd != F_SETLKW) return fuse_native_lock(path, info, cmd, lock);
  struct flock want = *lock;
  for (useconds_t pause = 1000;; pause = pause < 32000 ? pause * 2 : pause) {
    *lock = want;
    int res = fuse_native_lock(path, info, F_SETLK, lock);
    if (res != -EAGAIN && res != -EACCES) return res;
    if (fuse_interrupted()) return -EINTR;
    usleep(pause);
  }
}

static int fuse_native_flock_wait (const char *path, struct fuse_file_info *info, int op) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if ((op & LOCK_UN) && !__atomic_load_n(&(ft->locks_taken), __ATOMIC_ACQUIRE)) return 0;
  if (!(op & LOCK_UN)) __atomic_store_n(&(ft->locks_taken), 1, __ATOMIC_RELEASE);
  if ((op & (LOCK_UN | LOCK_NB)) != 0) return fuse_native_flock(path, info, op);
  for (useconds_t pause = 1000;; pause = pause < 32000 ? pause * 2 : pause) {
    int res = fuse_native_flock(path, info, op | LOCK_NB);
    if (res != -EWOULDBLOCK) return res;
    if (fuse_interrupted()) return -EINTR;
    usleep(pause);
  }
}

FUSE_METHOD_VOID(rmdir, 1, 0, (const char *path), {
  l->path = path;
}, {
  napi_create_string_utf8(env, l->path, NAPI_AUTO_LENGTH, &(argv[2]));
})

// native rmdir. An RMDIR of a directory a listing showed less than
// a second ago (its cipher path in the attribute cache) goes to the read
// hook's `rmdir` first, as a JS rmdir would: the read hook's kept
// directories and the attribute cache learn of it as of JS's (dirs_changing,
// attr_changing). JS learns of it from the hook (takeRemovedDirs). The
// hook passes anything but an empty directory on to JS.
static int fuse_native_rmdir_fast (const char *path) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  struct tscryptfs_fast_path *hook = __atomic_load_n(&(ft->fast_path), __ATOMIC_ACQUIRE);
  char cpath[ATTR_CPATH_MAX];
  int cpath_long = 0;
  if (hook != NULL && hook->rmdir != NULL && attr_cipher_path(ft, path, cpath, &cpath_long)) {
    dirs_changing_paths(ft, path, NULL);
    int targeted = attr_changing(ft, op_rmdir, path);
    int res = hook->rmdir(hook->ctx, cpath, cpath_long);
    attr_changed(ft, path, targeted);
    dirs_changing_paths(ft, path, NULL);
    if (res != TSCRYPTFS_HOOK_PASS) return res;
  }
  return fuse_native_rmdir(path);
}

static void fuse_native_dispatch_init (uv_async_t* handle, fuse_thread_locals_t* l, fuse_thread_t* ft) {\
  FUSE_NATIVE_CALLBACK(ft->handlers[op_init], {
    napi_value argv[2];

    napi_get_reference_value(env, l->self, &(argv[0]));
    napi_create_uint32(env, l->op, &(argv[1]));

    NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, 2, argv, NULL);
  })
}

NAPI_METHOD(fuse_native_signal_init) {
  NAPI_ARGV(2)
  NAPI_ARGV_BUFFER_CAST(fuse_thread_locals_t *, l, 0);
  NAPI_ARGV_INT32(res, 1);
  l->res = res;
  uv_sem_post(&(l->sem));
  return NULL;
}

static void * fuse_native_init (struct fuse_conn_info *conn) {
  fuse_thread_locals_t *l = get_thread_locals();

  l->op = op_init;
  l->op_fn = fuse_native_dispatch_init;

  uv_async_send(&(l->async));
  uv_sem_wait(&(l->sem));

  return l->fuse;
}


// spinning. Every request crosses from a libfuse thread to the JS
// thread and back. Waking a sleeping thread costs more than most answers
// take (tscryptfs's Documentation/performance.md, "Spinning instead of
// sleeping"). So both
// sides stay awake a little: after each request the JS event loop polls
// instead of sleeping for hot_ns (an active uv_idle handle makes uv_run poll
// with a zero timeout), and the libfuse thread polls for its answer for up
// to spin_ns before it sleeps on the semaphore. 0 turns either off.
static inline uint64_t fuse_native_now_ns () {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static inline void fuse_native_cpu_relax () {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Spinning only while a core is free. A spinning thread holds a core; with
// other processes at work that core is theirs, and the spin delays them
// and, through them, the requests it waits for (tscryptfs's
// Documentation/performance.md, "Spinning only while a core is free").
// At most every GATE_NS the thread about to spin measures how many cores
// the machine's other processes kept busy since the last look: all busy
// time in /proc/stat less this process's own CPU time, so our spinning
// does not count. The gate stays open while they leave GATE_FREE_CORES
// (in hundredths) free, so on one CPU it never opens; it stays as it was
// when /proc/stat cannot be read.
#define GATE_NS 250000000ull
#define GATE_FREE_CORES 125

static int gate_busy_ticks (uint64_t *out) {
  char buf[512];
  int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  // "cpu  user nice system idle iowait irq softirq steal ...": all but idle and iowait are busy
  unsigned long long v[8] = {0};
  if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 7) return 0;
  *out = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return 1;
}

static uint64_t gate_self_ns () {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static int spin_gate_open (fuse_thread_t *ft) {
  if (!ft->gate_on) return 1;
  const uint64_t now = fuse_native_now_ns();
  if (now - __atomic_load_n(&ft->gate_checked_ns, __ATOMIC_RELAXED) >= GATE_NS && uv_mutex_trylock(&ft->gate_mut) == 0) {
    const uint64_t since = now - ft->gate_checked_ns;
    uint64_t busy;
    if (since >= GATE_NS && gate_busy_ticks(&busy)) {
      const long hz = ft->gate_hz, cpus = ft->gate_cpus;
      const uint64_t self = gate_self_ns();
      if (ft->gate_checked_ns != 0 && hz > 0 && cpus > 0) {
        // cores the others kept busy, in hundredths
        const double others_ns = (double) (busy - ft->gate_busy_ticks) * 1e9 / (double) hz - (double) (self - ft->gate_self_ns);
        const double others = others_ns * 100.0 / (double) since;
        __atomic_store_n(&ft->gate_open, (double) cpus * 100.0 - others >= GATE_FREE_CORES, __ATOMIC_RELAXED);
      }
      ft->gate_busy_ticks = busy;
      ft->gate_self_ns = self;
    }
    __atomic_store_n(&ft->gate_checked_ns, now, __ATOMIC_RELAXED);
    uv_mutex_unlock(&ft->gate_mut);
  }
  return __atomic_load_n(&ft->gate_open, __ATOMIC_RELAXED);
}

static void fuse_native_idle (uv_idle_t *handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  if (fuse_native_now_ns() - __atomic_load_n(&ft->last_op_ns, __ATOMIC_RELAXED) > ft->hot_ns || !spin_gate_open(ft)) {
    uv_idle_stop(handle);
    __atomic_store_n(&ft->hot, 0, __ATOMIC_RELAXED);
  }
}

static void fuse_native_keep_hot (fuse_thread_t *ft) {
  if (ft->hot_ns == 0) return;
  __atomic_store_n(&ft->last_op_ns, fuse_native_now_ns(), __ATOMIC_RELAXED);
  if (!__atomic_load_n(&ft->hot, __ATOMIC_RELAXED) && spin_gate_open(ft)) {
    __atomic_store_n(&ft->hot, 1, __ATOMIC_RELAXED);
    uv_idle_start(&ft->idle, fuse_native_idle);
  }
}

// Requests answered in C keep the loop polling too (option spinNative). On
// a virtual machine a request costs least when its thread is woken on a
// vCPU that is awake: a vCPU left idle halts, and waking a thread there
// goes through the host. While requests come, the polling loop keeps one
// vCPU awake, and a stream of requests answered in C (deletes, lookups,
// small writes) takes about 0.7-0.9x the time for more of the daemon's CPU
// (tscryptfs's Documentation/performance.md, "Spinning while C answers").
// A READ or WRITE of HOT_IO_MAX bytes or more does not count: the libfuse
// threads open and seal streaming reads and writes themselves and need the
// cores. Runs on the libfuse thread that received the request; the loop
// starts polling on the JS thread (hot_async), once per burst. The wake-up
// goes out after the request's reply (hl_send), so that the request itself
// never waits for the JS thread coming up beside it (performance.md,
// "Spinning while C answers").
#define HOT_IO_MAX 65536

static void fuse_native_hot_kick (uv_async_t *handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  __atomic_store_n(&ft->hot_kick, 0, __ATOMIC_RELEASE);
  fuse_native_keep_hot(ft);
}

static void fuse_native_note_request (fuse_thread_t *ft, const char *buf, size_t len) {
  if (ft == NULL || !ft->hot_native || __atomic_load_n(&ft->hot_ns, __ATOMIC_RELAXED) == 0) return;
  const struct fuse_in_header *in = (const struct fuse_in_header *) buf;
  if (in->opcode == FUSE_WRITE && len >= sizeof(*in) + sizeof(struct fuse_write_in) &&
      ((const struct fuse_write_in *) (buf + sizeof(*in)))->size >= HOT_IO_MAX) return;
  if (in->opcode == FUSE_READ && len >= sizeof(*in) + sizeof(struct fuse_read_in) &&
      ((const struct fuse_read_in *) (buf + sizeof(*in)))->size >= HOT_IO_MAX) return;
  __atomic_store_n(&ft->last_op_ns, fuse_native_now_ns(), __ATOMIC_RELAXED);
  if (hl_kick_pending) { // the last request had no reply after all
    hl_kick_pending = 0;
    uv_async_send(&ft->hot_async);
  }
  if (in->opcode == FUSE_FORGET || in->opcode == FUSE_BATCH_FORGET || in->opcode == FUSE_INTERRUPT) return; // no reply to wake it after
  if (__atomic_load_n(&ft->hot, __ATOMIC_RELAXED) || __atomic_exchange_n(&ft->hot_kick, 1, __ATOMIC_ACQ_REL)) return;
  if (spin_gate_open(ft)) hl_kick_pending = 1; // sent after the reply (hl_send)
  else __atomic_store_n(&ft->hot_kick, 0, __ATOMIC_RELEASE);
}

static void fuse_native_hand_over (fuse_thread_locals_t *l) {
  fuse_thread_t *ft = l->fuse;
  // Spin only when no other request is waiting for JS: then JS takes this one
  // next and answers within microseconds. Behind a queue (several processes
  // at work) the answer comes later, and spinning threads only take the CPU
  // away from the JS thread. A full-size WRITE (128 KiB: a streaming writer)
  // takes JS longer than the usual answer (seal, preallocate, pwrite), so it
  // spins 3 ns per byte. Smaller writes come from programs that do other
  // work too (dbench), which would lose the CPU to the spinning. The
  // measurements behind these choices: tscryptfs's
  // Documentation/performance.md, "Spinning only when alone".
  const uint32_t queued = __atomic_fetch_add(&(ft->in_js), 1, __ATOMIC_ACQ_REL);
  const uint32_t op = l->op;
  uint64_t spin_ns = ft->spin_ns;
  if (op == op_write && spin_ns > 0 && l->len >= 131072) spin_ns = (uint64_t) l->len * 3;
  uv_async_send(&(l->async));
  if (spin_ns > 0 && queued == 0 && spin_gate_open(ft)) {
    struct tscryptfs_assist_hook *assist = __atomic_load_n(&(ft->assist_hook), __ATOMIC_ACQUIRE);
    uint64_t start = fuse_native_now_ns();
    for (;;) {
      for (int i = 0; i < 64; i++) {
        if (uv_sem_trywait(&(l->sem)) == 0) {
          __atomic_fetch_sub(&(ft->in_js), 1, __ATOMIC_ACQ_REL);
          return;
        }
        fuse_native_cpu_relax();
      }
      if (assist != NULL) assist->assist();
      if (fuse_native_now_ns() - start > spin_ns) break;
    }
  }
  uv_sem_wait(&(l->sem));
  __atomic_fetch_sub(&(ft->in_js), 1, __ATOMIC_ACQ_REL);
}

// Top-level dispatcher

static void fuse_native_dispatch (uv_async_t* handle) {
  fuse_thread_locals_t *l = (fuse_thread_locals_t *) handle->data;
  fuse_thread_t *ft = l->fuse;
  void (*fn)(uv_async_t *, fuse_thread_locals_t *, fuse_thread_t *) = l->op_fn;

  fn(handle, l, ft);
  fuse_native_keep_hot(ft);
}

static void fuse_native_async_init (uv_async_t* handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  fuse_thread_locals_t *l;

  FUSE_NATIVE_CALLBACK(ft->malloc, {
    napi_value argv[1];
    napi_create_uint32(ft->env, (uint32_t) sizeof(fuse_thread_locals_t), &(argv[0]));

    napi_value buf;
    NAPI_MAKE_CALLBACK(ft->env, NULL, ctx, callback, 1, argv, &buf);

    size_t l_len;

    napi_get_buffer_info(env, buf, (void **) &l, &l_len);
    napi_create_reference(env, buf, 1, &(l->self));
  })


  int err = uv_async_init(uv_default_loop(), &(l->async), (uv_async_cb) fuse_native_dispatch);
  assert(err >= 0);

  uv_unref((uv_handle_t *) &(l->async));

  uv_sem_init(&(l->sem), 0);
  l->async.data = l;
  ft->async.data = l;
  l->fuse = ft;

  uv_sem_post(&(ft->sem));
}

// libfuse2 starts a worker thread whenever none is idle and ends one
// whenever more than 10 are idle, so under a load with bursts of requests
// (a close sends RELEASE without waiting for it) threads come and go all the
// time: about 100 a second under fsstress with 4 processes. Each new thread
// had the JS thread make it a locals buffer holding a uv_async_t, and nothing
// ever freed either: memory grew without bound, and every wake-up of the
// event loop walked the ever longer list of async handles (uv__async_io),
// until the JS thread spent nearly all its time there, requests waited
// longer, more threads were started, and answers came ever later. Now a thread
// that ends (a thread-specific destructor, also run on pthread_cancel at
// unmount) puts its locals on its mount's free list, and a new thread takes
// them from there: there are never more locals than threads alive at once.
// A thread ends only after its answer came (sem posted last), so nothing on
// the JS side uses them any more.
static void fuse_native_thread_exit (void *data) {
  fuse_thread_locals_t *l = (fuse_thread_locals_t *) data;
  fuse_thread_t *ft = l->fuse;
  uv_mutex_lock(&(ft->locals_mut));
  l->next_free = ft->free_locals;
  ft->free_locals = l;
  uv_mutex_unlock(&(ft->locals_mut));
}

static fuse_thread_locals_t* get_thread_locals () {
  struct fuse_context *ctx = fuse_get_context();
  fuse_thread_t *ft = (fuse_thread_t *) ctx->private_data;

  void *data = pthread_getspecific(thread_locals_key);

  if (data != NULL) {
    return (fuse_thread_locals_t *) data;
  }

  // a thread that has ended left its locals here (fuse_native_thread_exit)
  uv_mutex_lock(&(ft->locals_mut));
  fuse_thread_locals_t *reused = (fuse_thread_locals_t *) ft->free_locals;
  if (reused != NULL) ft->free_locals = reused->next_free;
  uv_mutex_unlock(&(ft->locals_mut));
  if (reused != NULL) {
    reused->next_free = NULL;
    reused->carried = 0;
    pthread_setspecific(thread_locals_key, (void *) reused);
    return reused;
  }

  // Need to lock the mutation of l->async.
  uv_mutex_lock(&(ft->mut));
  ft->async.data = ft;

  // Notify the main thread to uv_async_init l->async.
  uv_async_send(&(ft->async));
  uv_sem_wait(&(ft->sem));

  fuse_thread_locals_t *l = (fuse_thread_locals_t*) ft->async.data;

  pthread_setspecific(thread_locals_key, (void *) l);
  uv_mutex_unlock(&(ft->mut));

  return l;
}

// RELEASE without waiting for JS. The kernel sends RELEASE after the
// last close(2) of an open file, does not wait for the answer and ignores
// its error; the program has long moved on. So the libfuse thread need not
// wait either: it queues the handle, answers 0 at once and goes back to the
// next request, and JS closes the handle when it gets there (in order, a
// whole queue per wake-up). That saves the JS thread a wake-up of the
// libfuse thread per release (a sem_post that reschedules it, the costliest
// part of a small request on a virtual machine) and the libfuse thread its
// sleep. Nothing can depend on JS having finished a release when the next
// request arrives: the kernel sends RELEASE in the background, and with
// several libfuse threads it always ran beside the requests that follow.

static int fuse_native_release_later (const char *path, struct fuse_file_info *info) {
  fuse_thread_t *ft = (fuse_thread_t *) fuse_get_context()->private_data;
  if (release_native(ft, info)) return 0;
  if (path == NULL) path = "";
  size_t n = strlen(path) + 1;
  struct release_item *it = malloc(sizeof(struct release_item) + n);
  if (it == NULL) return fuse_native_release(path, info); // no memory: the way that waits
  it->next = NULL;
  it->fh = info != NULL ? info->fh : 0;
  memcpy(it->path, path, n);
  uv_mutex_lock(&(ft->release_mut));
  if (ft->release_tail != NULL) ft->release_tail->next = it;
  else ft->release_head = it;
  ft->release_tail = it;
  uv_mutex_unlock(&(ft->release_mut));
  uv_async_send(&(ft->release_async));
  return 0;
}

// on the JS thread: hands every queued release to JS, oldest first
static void fuse_native_release_drain (uv_async_t *handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  uv_mutex_lock(&(ft->release_mut));
  struct release_item *it = ft->release_head;
  ft->release_head = NULL;
  ft->release_tail = NULL;
  uv_mutex_unlock(&(ft->release_mut));
  while (it != NULL) {
    FUSE_NATIVE_CALLBACK(ft->on_release, {
      napi_value argv[2];
      napi_create_string_utf8(env, it->path, NAPI_AUTO_LENGTH, &(argv[0]));
      napi_create_uint32(env, (uint32_t) it->fh, &(argv[1]));
      NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, 2, argv, NULL)
    })
    struct release_item *next = it->next;
    free(it);
    it = next;
  }
  fuse_native_keep_hot(ft);
}

// runs on the JS thread once the FUSE thread has left fuse_loop_mt
static void fuse_native_on_exit (uv_async_t* handle) {
  fuse_thread_t *ft = (fuse_thread_t *) handle->data;
  pthread_join(ft->thread, NULL);
  if (ft->on_release != NULL) fuse_native_release_drain(&(ft->release_async)); // releases before the end
  uv_unref((uv_handle_t *) &(ft->async)); // no longer keep the process alive
  uv_idle_stop(&(ft->idle)); // no more polling once the loop has ended
  __atomic_store_n(&ft->hot_ns, 0, __ATOMIC_RELAXED);
  FUSE_NATIVE_CALLBACK(ft->on_exit, {
    NAPI_MAKE_CALLBACK(env, NULL, ctx, callback, 0, NULL, NULL)
  })
}

static void* start_fuse_thread (void *data) {
  fuse_thread_t *ft = (fuse_thread_t *) data;
  fuse_loop_mt(ft->fuse);

  fuse_unmount(ft->mnt, ft->ch); // ft->ch is not in the session (see hl_*): no fuse_session_remove_chan
  fuse_destroy(ft->fuse); // destroys the wrapping channel too
  hl_free(ft->hl);
  ft->hl = NULL;

  uv_async_send(&(ft->exit_async)); // tell JS the loop ended

  return NULL;
}

// a number (or boolean) property of the mount's options object; 0 when absent
static uint32_t mount_option (napi_env env, napi_value obj, const char *name) {
  napi_value v;
  napi_valuetype t;
  uint32_t n = 0;
  bool b = false;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok || napi_typeof(env, v, &t) != napi_ok) return 0;
  if (t == napi_boolean && napi_get_value_bool(env, v, &b) == napi_ok) return b ? 1 : 0;
  if (t == napi_number && napi_get_value_uint32(env, v, &n) == napi_ok) return n;
  return 0;
}

NAPI_METHOD(fuse_native_mount) {
  NAPI_ARGV(9) // + on_exit, + tscryptfs's options object

  NAPI_ARGV_UTF8(mnt, 1024, 0);
  NAPI_ARGV_UTF8(mntopts, 1024, 1);
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 2);
  napi_create_reference(env, argv[3], 1, &(ft->ctx));
  napi_create_reference(env, argv[4], 1, &(ft->malloc));
  napi_value handlers = argv[5];
  NAPI_ARGV_BUFFER_CAST(uint32_t *, implemented, 6)
  napi_create_reference(env, argv[7], 1, &(ft->on_exit));
  napi_value tuning = argv[8]; // tscryptfs's options, by name (see mount_option)
  ft->reject_capability = mount_option(env, tuning, "rejectCapability") ? 1 : 0;
  ft->attr_targeted_ok = mount_option(env, tuning, "attrCacheAtomicHandlers") ? 1 : 0; // JS answers each request in one go
  ft->attr_carried_ok = ft->attr_targeted_ok && mount_option(env, tuning, "attrCacheCarried") ? 1 : 0; // see attr_ended
  { // releaseLater, a function(path, fh): see fuse_native_release_later
    napi_value f;
    napi_valuetype t;
    ft->on_release = NULL;
    if (napi_get_named_property(env, tuning, "releaseLater", &f) == napi_ok && napi_typeof(env, f, &t) == napi_ok && t == napi_function)
      napi_create_reference(env, f, 1, &(ft->on_release));
  }
  ft->spin_ns = (uint64_t) mount_option(env, tuning, "spinAnswerMicros") * 1000; // spinning, see fuse_native_hand_over
  ft->hot_ns = (uint64_t) mount_option(env, tuning, "spinLoopMicros") * 1000;
  ft->hot = 0;
  ft->gate_on = mount_option(env, tuning, "spinGate") ? 1 : 0;
  ft->hot_native = mount_option(env, tuning, "spinNative") ? 1 : 0; // see fuse_native_note_request
  ft->hot_kick = 0;
  ft->gate_open = 1;
  ft->gate_checked_ns = 0;
  ft->gate_hz = sysconf(_SC_CLK_TCK);
  ft->gate_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uv_mutex_init(&ft->gate_mut);
  uv_idle_init(uv_default_loop(), &ft->idle);
  ft->idle.data = ft;
  uv_unref((uv_handle_t *) &ft->idle);
  if (mount_option(env, tuning, "attrCache")) { // the attribute cache
    ft->attr_cache = calloc(ATTR_SLOTS, sizeof(struct attr_slot));
    ft->attr_gen = 1;
    ft->attr_seq = 1;
    ft->attr_emptied_at = 1;
    if (ft->attr_cache != NULL && uv_mutex_init(&(ft->attr_mut)) != 0) {
      free(ft->attr_cache);
      ft->attr_cache = NULL;
    }
  }
  ft->kept = NULL;
  if (ft->attr_cache != NULL && mount_option(env, tuning, "keptListings")) ft->kept = calloc(KEPT_SLOTS, sizeof(struct kept_dir));
  ft->kept_copies = NULL;
  if (ft->kept != NULL && mount_option(env, tuning, "keptListingCopies")) ft->kept_copies = calloc(KEPT_COPY_SLOTS, sizeof(struct kept_copy));

  for (int i = 0; i < OP_COUNT; i++) {
    ft->handlers[i] = NULL;
  }

  NAPI_FOR_EACH(handlers, handler) {
    napi_create_reference(env, handler, 1, &ft->handlers[i]);
  }

  ft->env = env;

  struct fuse_operations ops = { };
  if (implemented[op_access]) ops.access = fuse_native_access;
  if (implemented[op_truncate]) ops.truncate = fuse_native_truncate;
  if (implemented[op_ftruncate]) ops.ftruncate = fuse_native_ftruncate;
  if (implemented[op_getattr]) ops.getattr = fuse_native_getattr_fast;
  if (implemented[op_fgetattr]) ops.fgetattr = fuse_native_fgetattr_fast;
  if (implemented[op_flush]) ops.flush = fuse_native_flush;
  if (implemented[op_fsync]) ops.fsync = fuse_native_fsync_fast;
  if (implemented[op_fsyncdir]) ops.fsyncdir = fuse_native_fsyncdir;
  if (implemented[op_readdir]) ops.readdir = fuse_native_readdir_fast;
  if (implemented[op_readlink]) ops.readlink = fuse_native_readlink;
  if (implemented[op_chown]) ops.chown = fuse_native_chown_fast;
  if (implemented[op_chmod]) ops.chmod = fuse_native_chmod_fast;
  if (implemented[op_mknod]) ops.mknod = fuse_native_mknod;
  if (implemented[op_setxattr]) ops.setxattr = fuse_native_setxattr;
  if (implemented[op_getxattr]) ops.getxattr = fuse_native_getxattr_fast;
  if (implemented[op_listxattr]) ops.listxattr = fuse_native_listxattr_fast;
  if (implemented[op_removexattr]) ops.removexattr = fuse_native_removexattr;
  if (implemented[op_statfs]) ops.statfs = fuse_native_statfs_fast;
  if (implemented[op_open]) ops.open = fuse_native_open_fast;
  if (implemented[op_opendir]) ops.opendir = fuse_native_opendir;
  ft->opendir_in_js = implemented[op_opendir] ? 1 : 0;
  if (ft->kept != NULL) ops.opendir = fuse_native_opendir_kept;
  if (implemented[op_read]) ops.read = fuse_native_read_fast;
  if (implemented[op_write]) ops.write = fuse_native_write_fast;
  if (implemented[op_release]) ops.release = ft->on_release != NULL ? fuse_native_release_later : fuse_native_release_fast;
  if (implemented[op_releasedir]) ops.releasedir = fuse_native_releasedir;
  if (implemented[op_create]) ops.create = fuse_native_create_fast;
  if (implemented[op_utimens]) ops.utimens = fuse_native_utimens_fast;
  if (implemented[op_unlink]) ops.unlink = fuse_native_unlink_fast;
  if (implemented[op_rename]) ops.rename = fuse_native_rename_fast;
  if (implemented[op_link]) ops.link = fuse_native_link;
  if (implemented[op_symlink]) ops.symlink = fuse_native_symlink;
  if (implemented[op_mkdir]) ops.mkdir = fuse_native_mkdir;
  if (implemented[op_rmdir]) ops.rmdir = fuse_native_rmdir_fast;
  if (implemented[op_fallocate]) ops.fallocate = fuse_native_fallocate;
  if (implemented[op_lock]) ops.lock = fuse_native_lock_wait;
  if (implemented[op_flock]) ops.flock = fuse_native_flock_wait;
  if (implemented[op_init]) ops.init = fuse_native_init;
  ops.flag_nullpath_ok = 1; // operations on an open file whose path is gone (its directory removed) get a NULL path, not ENOENT from libfuse
  ops.flag_utime_omit_ok = 1; // let libfuse call utimens for atime-only / mtime-only changes (UTIME_OMIT)

  int _argc = (strcmp(mntopts, "-o") <= 0) ? 1 : 2;
  char *_argv[] = {
    (char *) "fuse_bindings_dummy",
    (char *) mntopts
  };

  struct fuse_args args = FUSE_ARGS_INIT(_argc, _argv);
  struct fuse_chan *ch = fuse_mount(mnt, &args);

  if (ch == NULL) {
    napi_throw_error(env, "fuse failed", "fuse failed");
    return NULL;
  }

  // libfuse reads and answers through a channel that notes node ids of
  // hard-linked files (hl_*); `ch` keeps the file descriptor and the unmount.
  struct hl_table *hl = calloc(1, sizeof(struct hl_table));
  struct fuse_chan *wrapped = NULL;
  if (hl != NULL && uv_mutex_init(&(hl->mut)) == 0) {
    wrapped = fuse_chan_new(&hl_chan_ops, fuse_chan_fd(ch), fuse_chan_bufsize(ch), hl);
    if (wrapped == NULL) uv_mutex_destroy(&(hl->mut));
  }
  if (wrapped == NULL) {
    free(hl);
    fuse_unmount(mnt, ch);
    napi_throw_error(env, "fuse failed", "fuse failed");
    return NULL;
  }
  hl->ch = wrapped;
  hl->attr_valid_ms = mount_option(env, tuning, "singleNameAttrTimeout") ? 1000 : 0; // kernel attribute timeout, 1 s as gocryptfs
  hl->posix_acl = mount_option(env, tuning, "posixAcl") ? 1 : 0; // the kernel enforces POSIX ACLs (-acl)
  hl->readdirplus = mount_option(env, tuning, "readdirPlus") ? 1 : 0; // listings carry each name's entry (hl_plus_reply)
  hl->kept_listings = ft->kept != NULL; // see kept_dir_holds
  hl->killpriv = mount_option(env, tuning, "killPriv") ? 1 : 0; // set-id bits dropped here, not by the kernel (hl_req.kill_suidgid)
  hl->no_capabilities = ft->reject_capability; // a root chown(-1, -1) drops set-id bits too
  hl->ft = ft;

  struct fuse *fuse = fuse_new(wrapped, &args, &ops, sizeof(struct fuse_operations), ft);

  if (fuse == NULL) { // e.g. unknown -o option; do not leave a dead mount behind
    fuse_chan_destroy(wrapped);
    hl_free(hl);
    fuse_unmount(mnt, ch);
    napi_throw_error(env, "fuse failed", "fuse failed");
    return NULL;
  }
  ft->hl = hl;

  uv_mutex_init(&(ft->mut));
  uv_sem_init(&(ft->sem), 0);
  uv_mutex_init(&(ft->locals_mut)); // see fuse_native_thread_exit
  ft->free_locals = NULL;

  strncpy(ft->mnt, mnt, 1024);
  strncpy(ft->mntopts, mntopts, 1024);
  ft->fuse = fuse;
  ft->ch = ch;
  ft->mounted++;

  int err = uv_async_init(uv_default_loop(), &(ft->async), (uv_async_cb) fuse_native_async_init);

  if (fuse == NULL || err < 0) {
    napi_throw_error(env, "fuse failed", "fuse failed");
    return NULL;
  }

  err = uv_async_init(uv_default_loop(), &(ft->exit_async), (uv_async_cb) fuse_native_on_exit);
  assert(err >= 0);
  ft->exit_async.data = ft;
  uv_unref((uv_handle_t *) &(ft->exit_async));
  // the release queue (fuse_native_release_later); before the FUSE thread starts
  uv_mutex_init(&(ft->release_mut));
  ft->release_head = NULL;
  ft->release_tail = NULL;
  err = uv_async_init(uv_default_loop(), &(ft->release_async), (uv_async_cb) fuse_native_release_drain);
  assert(err >= 0);
  ft->release_async.data = ft;
  uv_unref((uv_handle_t *) &(ft->release_async));
  // the loop's polling started by requests answered in C (fuse_native_note_request)
  err = uv_async_init(uv_default_loop(), &(ft->hot_async), (uv_async_cb) fuse_native_hot_kick);
  assert(err >= 0);
  ft->hot_async.data = ft;
  uv_unref((uv_handle_t *) &(ft->hot_async));

  pthread_attr_init(&(ft->attr));
  pthread_create(&(ft->thread), &(ft->attr), start_fuse_thread, ft);

  return NULL;
}

NAPI_METHOD(fuse_native_unmount) {
  NAPI_ARGV(2)
  NAPI_ARGV_UTF8(mnt, 1024, 0);
  NAPI_ARGV_BUFFER_CAST(fuse_thread_t *, ft, 1);

  if (ft != NULL && ft->mounted) {
    // TODO: Investigate why the FUSE thread is not always killed after fusermount.
    // pthread_join(ft->thread, NULL);
  }

  // TODO: fix the async holding the loop
  uv_unref((uv_handle_t *) &(ft->async));
  ft->mounted--;

  return NULL;
}

// the version of the libfuse this binding runs with (fuse_version():
// 29 for 2.9.x). The patch depends on libfuse 2.9's internals (its channel
// operations, the kernel protocol structs it reads and writes, its worker
// threads); tscryptfs refuses any other.
NAPI_METHOD(fuse_native_libfuse_version) {
  NAPI_RETURN_INT32(fuse_version())
}

NAPI_INIT() {
  const napi_node_version* version;
  assert(napi_get_node_version(env, &version) == napi_ok);

  if (version->major > 12 || (version->major == 12 && version->minor >= 16)) {
    IS_ARRAY_BUFFER_DETACH_SUPPORTED = 1;
  }

  pthread_key_create(&(thread_locals_key), fuse_native_thread_exit); // locals of ended threads are reused

  NAPI_EXPORT_SIZEOF(fuse_thread_t)
  NAPI_EXPORT_STRING(fork_source_sha256)

  NAPI_EXPORT_FUNCTION(fuse_native_mount)
  NAPI_EXPORT_FUNCTION(fuse_native_carry_stat)
  NAPI_EXPORT_FUNCTION(fuse_native_attr_gen)
  NAPI_EXPORT_FUNCTION(fuse_native_drop_caches)
  NAPI_EXPORT_FUNCTION(fuse_native_set_fast_path)
  NAPI_EXPORT_FUNCTION(fuse_native_set_assist_hook)
  NAPI_EXPORT_FUNCTION(fuse_native_unmount)
  NAPI_EXPORT_FUNCTION(fuse_native_libfuse_version)

  NAPI_EXPORT_FUNCTION(fuse_native_signal_getattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_init)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_access)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_statfs)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fgetattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_getattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_flush)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fsync)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fsyncdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_readdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_truncate)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_ftruncate)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_utimens)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_readlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_chown)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_chmod)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_mknod)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_setxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_getxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_listxattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_removexattr)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_open)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_opendir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_read)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_write)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_release)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_releasedir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_create)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_unlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_rename)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_link)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_symlink)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_mkdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_rmdir)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_fallocate)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_lock)
  NAPI_EXPORT_FUNCTION(fuse_native_signal_flock)

  NAPI_EXPORT_UINT32(op_getattr)
  NAPI_EXPORT_UINT32(op_init)
  NAPI_EXPORT_UINT32(op_error)
  NAPI_EXPORT_UINT32(op_access)
  NAPI_EXPORT_UINT32(op_statfs)
  NAPI_EXPORT_UINT32(op_fgetattr)
  NAPI_EXPORT_UINT32(op_getattr)
  NAPI_EXPORT_UINT32(op_flush)
  NAPI_EXPORT_UINT32(op_fsync)
  NAPI_EXPORT_UINT32(op_fsyncdir)
  NAPI_EXPORT_UINT32(op_readdir)
  NAPI_EXPORT_UINT32(op_truncate)
  NAPI_EXPORT_UINT32(op_ftruncate)
  NAPI_EXPORT_UINT32(op_utimens)
  NAPI_EXPORT_UINT32(op_readlink)
  NAPI_EXPORT_UINT32(op_chown)
  NAPI_EXPORT_UINT32(op_chmod)
  NAPI_EXPORT_UINT32(op_mknod)
  NAPI_EXPORT_UINT32(op_setxattr)
  NAPI_EXPORT_UINT32(op_getxattr)
  NAPI_EXPORT_UINT32(op_listxattr)
  NAPI_EXPORT_UINT32(op_removexattr)
  NAPI_EXPORT_UINT32(op_open)
  NAPI_EXPORT_UINT32(op_opendir)
  NAPI_EXPORT_UINT32(op_read)
  NAPI_EXPORT_UINT32(op_write)
  NAPI_EXPORT_UINT32(op_release)
  NAPI_EXPORT_UINT32(op_releasedir)
  NAPI_EXPORT_UINT32(op_create)
  NAPI_EXPORT_UINT32(op_unlink)
  NAPI_EXPORT_UINT32(op_rename)
  NAPI_EXPORT_UINT32(op_link)
  NAPI_EXPORT_UINT32(op_symlink)
  NAPI_EXPORT_UINT32(op_mkdir)
  NAPI_EXPORT_UINT32(op_rmdir)
  NAPI_EXPORT_UINT32(op_fallocate)
  NAPI_EXPORT_UINT32(op_lock)
  NAPI_EXPORT_UINT32(op_flock)
}
