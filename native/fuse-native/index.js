const os = require('os')
const fs = require('fs')
const path = require('path')
const { exec } = require('child_process')
const { EventEmitter } = require('events')

const Nanoresource = require('nanoresource')
const { beforeMount, beforeUnmount, configure, unconfigure, isConfigured } = require('fuse-shared-library')

// Built by tscryptfs's install (scripts/build-native.mjs), never prebuilt.
const BINARY = path.join(__dirname, 'build', 'Release', 'fuse.node')
const binding = require(BINARY)
if (binding.fork_source_sha256 !== require('./source-hash.js').sourceHash()) throw new Error('fuse-native: ' + BINARY + ' was built from other sources than ' + __dirname + ' holds; rebuild it: npm rebuild (in a clone), npm rebuild -g tscryptfs (installed)')

const IS_OSX = os.platform() === 'darwin'
const OSX_FOLDER_ICON = '/System/Library/CoreServices/CoreTypes.bundle/Contents/Resources/GenericFolderIcon.icns'
const HAS_FOLDER_ICON = IS_OSX && fs.existsSync(OSX_FOLDER_ICON)
const DEFAULT_TIMEOUT = 15 * 1000
const TIMEOUT_ERRNO = IS_OSX ? -60 : -110
const ENOTCONN = IS_OSX ? -57 : -107

const OpcodesAndDefaults = new Map([
  ['init', {
    op: binding.op_init
  }],
  ['error', {
    op: binding.op_error
  }],
  ['access', {
    op: binding.op_access,
    defaults: [0]
  }],
  ['statfs', {
    op: binding.op_statfs,
    defaults: [getStatfsArray()]
  }],
  ['fgetattr', {
    op: binding.op_fgetattr,
    defaults: [getStatArray()]
  }],
  ['getattr', {
    op: binding.op_getattr,
    defaults: [getStatArray()]
  }],
  ['flush', {
    op: binding.op_flush
  }],
  ['fsync', {
    op: binding.op_fsync
  }],
  ['fsyncdir', {
    op: binding.op_fsyncdir
  }],
  ['readdir', {
    op: binding.op_readdir,
    defaults: [[], []]
  }],
  ['truncate', {
    op: binding.op_truncate
  }],
  ['ftruncate', {
    op: binding.op_ftruncate
  }],
  ['utimens', {
    op: binding.op_utimens
  }],
  ['readlink', {
    op: binding.op_readlink,
    defaults: ['']
  }],
  ['chown', {
    op: binding.op_chown
  }],
  ['chmod', {
    op: binding.op_chmod
  }],
  ['mknod', {
    op: binding.op_mknod
  }],
  ['setxattr', {
    op: binding.op_setxattr
  }],
  ['getxattr', {
    op: binding.op_getxattr
  }],
  ['listxattr', {
    op: binding.op_listxattr
  }],
  ['removexattr', {
    op: binding.op_removexattr
  }],
  ['open', {
    op: binding.op_open,
    defaults: [0]
  }],
  ['opendir', {
    op: binding.op_opendir,
    defaults: [0]
  }],
  ['read', {
    op: binding.op_read,
    defaults: [0]
  }],
  ['write', {
    op: binding.op_write,
    defaults: [0]
  }],
  ['release', {
    op: binding.op_release
  }],
  ['releasedir', {
    op: binding.op_releasedir
  }],
  ['create', {
    op: binding.op_create,
    defaults: [0]
  }],
  ['unlink', {
    op: binding.op_unlink
  }],
  ['rename', {
    op: binding.op_rename
  }],
  ['link', {
    op: binding.op_link
  }],
  ['symlink', {
    op: binding.op_symlink
  }],
  ['mkdir', {
    op: binding.op_mkdir
  }],
  ['rmdir', {
    op: binding.op_rmdir
  }],
  ['fallocate', {
    op: binding.op_fallocate
  }],
  ['lock', {
    op: binding.op_lock
  }],
  ['flock', {
    op: binding.op_flock
  }]
])

class Fuse extends Nanoresource {
  constructor (mnt, ops, opts = {}) {
    super()

    this.opts = opts
    this.mnt = path.resolve(mnt)
    this.ops = ops
    // timeout false or 0 disables the per-operation timeout
    this.timeout = (opts.timeout === false || opts.timeout === 0) ? 0 : (opts.timeout || DEFAULT_TIMEOUT)
    EventEmitter.call(this) // emits 'unmount' when the FUSE loop ends
    this.exited = false

    this._force = !!opts.force
    this._mkdir = !!opts.mkdir
    this._thread = null
    this._handlers = this._makeHandlerArray()
    this._threads = new Set()

    const implemented = [binding.op_init, binding.op_error, binding.op_getattr]
    if (ops) {
      for (const [name, { op }] of OpcodesAndDefaults) {
        if (ops[name]) implemented.push(op)
      }
    }
    this._implemented = new Set(implemented)

    // Used to determine if the user-defined callback needs to be nextTick'd.
    this._sync = true
  }

  _getImplementedArray () {
    const implemented = new Uint32Array(37) // 35 operations, fallocate, lock and flock
    for (const impl of this._implemented) {
      implemented[impl] = 1
    }
    return implemented
  }

  _fuseOptions () {
    const options = []

    if ((/\*|(^,)fuse-bindings(,$)/.test(process.env.DEBUG)) || this.opts.debug) options.push('debug')
    if (this.opts.allowOther) options.push('allow_other')
    if (this.opts.allowRoot) options.push('allow_root')
    if (this.opts.autoUnmount) options.push('auto_unmount')
    if (this.opts.defaultPermissions) options.push('default_permissions')
    if (this.opts.blkdev) options.push('blkdev')
    if (this.opts.blksize) options.push('blksize=' + this.opts.blksize)
    if (this.opts.maxRead) options.push('max_read=' + this.opts.maxRead)
    if (this.opts.fd) options.push('fd=' + this.opts.fd)
    if (this.opts.userId) options.push('user_id=' + this.opts.userId) // one item: user_id=N
    if (this.opts.fsname) options.push('fsname=' + this.opts.fsname)
    if (this.opts.subtype) options.push('subtype=' + this.opts.subtype)
    if (this.opts.kernelCache) options.push('kernel_cache')
    if (this.opts.autoCache) options.push('auto_cache')
    if (this.opts.umask) options.push('umask=' + this.opts.umask)
    if (this.opts.uid) options.push('uid=' + this.opts.uid)
    if (this.opts.gid) options.push('gid=' + this.opts.gid)
    if (this.opts.entryTimeout) options.push('entry_timeout=' + this.opts.entryTimeout)
    if (this.opts.attrTimeout) options.push('attr_timeout=' + this.opts.attrTimeout)
    if (this.opts.acAttrTimeout) options.push('ac_attr_timeout=' + this.opts.acAttrTimeout)
    if (this.opts.noforget) options.push('noforget')
    if (this.opts.remember) options.push('remember=' + this.opts.remember)
    if (this.opts.modules) options.push('modules=' + this.opts.modules)
    // options missing from 2.2.6 + raw passthrough (e.g. options: ['big_writes', 'max_write=131072'])
    if (this.opts.bigWrites) options.push('big_writes')
    if (this.opts.maxWrite) options.push('max_write=' + this.opts.maxWrite)
    if (this.opts.useIno) options.push('use_ino')
    if (this.opts.options) options.push(...[].concat(this.opts.options))

    if (this.opts.displayFolder && IS_OSX) { // only works on osx
      options.push('volname=' + path.basename(this.opts.name || this.mnt))
      if (HAS_FOLDER_ICON) options.push('volicon=' + OSX_FOLDER_ICON)
    }

    return options.length ? '-o' + options.join(',') : ''
  }

  _malloc (size) {
    const buf = Buffer.alloc(size)
    this._threads.add(buf)
    return buf
  }

  _makeHandlerArray () {
    const self = this
    const handlers = new Array(OpcodesAndDefaults.size)

    for (const [name, { op, defaults }] of OpcodesAndDefaults) {
      const nativeSignal = binding[`fuse_native_signal_${name}`]
      if (!nativeSignal) continue

      handlers[op] = makeHandler(name, op, defaults, nativeSignal)
    }

    return handlers

    function makeHandler (name, op, defaults, nativeSignal) {
      let to = self.timeout
      if (typeof to === 'object' && to) {
        const defaultTimeout = to.default || DEFAULT_TIMEOUT
        to = to[name]
        if (!to && to !== false) to = defaultTimeout
      }

      return function (nativeHandler, opCode, ...args) {
        const sig = signal.bind(null, nativeHandler)
        // sig.carry(path, stat) hands the attributes after an operation to the
        // getattr libfuse makes next in the same request (answered in C, no trip to JS)
        sig.carry = carry.bind(null, nativeHandler)
        const input = [...args]
        const boundSignal = to ? autoTimeout(sig, input) : sig
        const funcName = `_op_${name}`
        if (!self[funcName] || !self._implemented.has(op)) return boundSignal(-1, ...defaults)
        return self[funcName].apply(self, [boundSignal, ...args])
      }

      function carry (nativeHandler, path, stat) {
        if (stat) binding.fuse_native_carry_stat(nativeHandler, path, getStatArray(stat))
      }

      function signal (nativeHandler, err, ...args) {
        // the binding only accepts numbers (anything else throws "Expected number" asynchronously:
        // a crash, the request left blocked): cb(null) and cb(undefined) mean 0, a Node error its negative errno.
        if (typeof err !== 'number') err = err == null ? 0 : (typeof err.errno === 'number' ? err.errno : Fuse.EIO)
        var arr = [nativeHandler, err, ...args]

        if (defaults) {
          while (arr.length > 2 && arr[arr.length - 1] === undefined) arr.pop()
          if (arr.length === 2) arr = arr.concat(defaults)
        }

        return process.nextTick(nativeSignal, ...arr)
      }

      function autoTimeout (cb, input) {
        let called = false
        const timeout = setTimeout(timeoutWrap, to, TIMEOUT_ERRNO)
        return timeoutWrap

        function timeoutWrap (err, ...args) {
          if (called) return
          called = true

          clearTimeout(timeout)

          if (err === TIMEOUT_ERRNO) {
            switch (name) {
              case 'write':
              case 'read':
                return cb(TIMEOUT_ERRNO, 0, input[2].buffer)
              case 'setxattr':
                return cb(TIMEOUT_ERRNO, input[2].buffer)
              case 'getxattr':
                return cb(TIMEOUT_ERRNO, input[2].buffer)
              case 'listxattr':
                return cb(TIMEOUT_ERRNO, input[1].buffer)
            }
          }

          cb(err, ...args)
        }
      }
    }
  }

  // Static methods

  static unmount (mnt, cb) {
    mnt = JSON.stringify(mnt)
    const cmd = IS_OSX ? `diskutil unmount force ${mnt}` : `fusermount -uz ${mnt}`
    exec(cmd, err => {
      // root does not need fusermount (absent without the fuse/fuse3 package)
      if (err && !IS_OSX && process.getuid && process.getuid() === 0) return exec(`umount -l ${mnt}`, cb)
      if (err) return cb(err)
      return cb(null)
    })
  }

  // called from C once fuse_loop_mt has returned (our unmount or an external one)
  _onexit () {
    if (this.exited) return
    this.exited = true
    RETAINED.add(this._thread) // native handles live in these buffers: never let them be collected
    for (const buf of this._threads) RETAINED.add(buf)
    if (this.ops && this.ops.destroy) this.ops.destroy(() => {})
    this.emit('unmount')
  }

  // Debugging methods

  // Lifecycle methods

  _open (cb) {
    const self = this

    if (this._force) {
      return fs.stat(path.join(this.mnt, 'test'), (err, st) => {
        if (err && (err.errno === ENOTCONN || err.errno === Fuse.ENXIO)) return Fuse.unmount(this.mnt, open)
        return open()
      })
    }
    return open()

    function open () {
      // If there was an unmount error, continue attempting to mount (this is the best we can do)
      self._thread = Buffer.alloc(binding.sizeof_fuse_thread_t)
      self._openCallback = cb

      const opts = self._fuseOptions()
      const implemented = self._getImplementedArray()

      return fs.stat(self.mnt, (err, stat) => {
        if (err && err.errno !== -2) return cb(err)
        if (err) {
          if (!self._mkdir) return cb(new Error('Mountpoint does not exist'))
          return fs.mkdir(self.mnt, { recursive: true }, err => {
            if (err) return cb(err)
            fs.stat(self.mnt, (err, stat) => {
              if (err) return cb(err)
              return onexists(stat)
            })
          })
        }
        if (!stat.isDirectory()) return cb(new Error('Mountpoint is not a directory'))
        return onexists(stat)
      })

      function onexists (stat) {
        fs.stat(path.join(self.mnt, '..'), (_, parent) => {
          if (parent && parent.dev !== stat.dev) return cb(new Error('Mountpoint in use'))
          try {
            // TODO: asyncify
            binding.fuse_native_mount(self.mnt, opts, self._thread, self, self._malloc, self._handlers, implemented, self._onexit, { // tscryptfs's options, by name
              rejectCapability: !!self.opts.rejectCapability,
              attrCache: !!self.opts.attrCache,
              attrCacheAtomicHandlers: !!self.opts.attrCacheAtomicHandlers,
              attrCacheCarried: !!self.opts.attrCacheCarried,
              singleNameAttrTimeout: !!self.opts.singleNameAttrTimeout,
              posixAcl: !!self.opts.posixAcl,
              readdirPlus: !!self.opts.readdirPlus,
              keptListings: !!self.opts.keptListings,
              keptListingCopies: !!self.opts.keptListingCopies, // see kept_copy_fill
              killPriv: !!self.opts.killPriv,
              spinAnswerMicros: spinMicros(self.opts.spin, 'answer'),
              spinLoopMicros: spinMicros(self.opts.spin, 'loop'),
              spinGate: !!(self.opts.spin && self.opts.spin.gate), // poll only while a core is free (see spin_gate_open)
              spinNative: !!(self.opts.spin && self.opts.spin.native), // requests answered in C keep the loop polling (fuse_native_note_request)
              // opts.releaseLater: RELEASE answered at once, ops.release(path, fd, cb) called later (see fuse-native.c)
              releaseLater: self.opts.releaseLater && self.ops.release ? (path, fd) => self.ops.release(path, fd, () => {}) : false
            })
          } catch (err) {
            return cb(err)
          }
        })
      }
    }
  }

  _close (cb) {
    const self = this

    if (this.exited) return nativeUnmount() // already unmounted from outside
    Fuse.unmount(this.mnt, err => {
      if (err) {
        err.unmountFailure = true
        return cb(err)
      }
      nativeUnmount()
    })

    function nativeUnmount () {
      try {
        binding.fuse_native_unmount(self.mnt, self._thread)
      } catch (err) {
        return cb(err)
      }
      return cb(null)
    }
  }

  // Handlers

  _op_init (signal) {
    if (this._openCallback) {
      process.nextTick(this._openCallback, null)
      this._openCallback = null
    }
    if (!this.ops.init) {
      signal(0)
      return
    }
    this.ops.init(err => {
      return signal(err)
    })
  }

  _op_error (signal) {
    if (!this.ops.error) {
      signal(0)
      return
    }
    this.ops.error(err => {
      return signal(err)
    })
  }

  _op_statfs (signal, path) {
    this.ops.statfs(path, (err, statfs) => {
      if (err) return signal(err)
      const arr = getStatfsArray(statfs)
      return signal(0, arr)
    })
  }

  _op_getattr (signal, path) {
    if (!this.ops.getattr) {
      if (path !== '/') {
        signal(Fuse.EPERM)
      } else {
        signal(0, rootDirWords())
      }
      return
    }

    this.ops.getattr(path, (err, stat) => {
      if (err) return signal(err, getStatArray())
      return signal(0, getStatArray(stat))
    })
  }

  _op_fgetattr (signal, path, fd) {
    if (!this.ops.fgetattr) {
      if (path !== '/') {
        signal(Fuse.EPERM)
      } else {
        signal(0, rootDirWords())
      }
      return
    }
    this.ops.fgetattr(path, fd, (err, stat) => { // with the handle: an open file's own attributes
      if (err) return signal(err)
      return signal(0, getStatArray(stat))
    })
  }

  _op_access (signal, path, mode) {
    this.ops.access(path, mode, err => {
      return signal(err)
    })
  }

  _op_open (signal, path, flags) {
    this.ops.open(path, flags, (err, fd) => {
      return signal(err, fd)
    })
  }

  _op_opendir (signal, path, fh, flags) { // C passes (path, fh, flags)
    this.ops.opendir(path, flags, (err, fd) => {
      return signal(err, fd)
    })
  }

  _op_create (signal, path, mode, flags, uid, gid, pid) {
    const done = (err, fd, stat) => { // optional attributes for the fgetattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err, fd)
    }
    // handlers declared as (path, mode, flags, caller, cb) also get the caller, as (path, mode, flags, cb) the open flags
    if (this.ops.create.length >= 5) return this.ops.create(path, mode, flags, { uid, gid, pid }, done)
    if (this.ops.create.length >= 4) return this.ops.create(path, mode, flags, done)
    this.ops.create(path, mode, done)
  }

  // atime/mtime are ms since epoch (fractional: sub-ms precision), null = leave unchanged (UTIME_OMIT)
  _op_utimens (signal, path, atime, mtime) {
    this.ops.utimens(path, atime, mtime, (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    })
  }

  _op_release (signal, path, fd) {
    this.ops.release(path, fd, err => {
      return signal(err)
    })
  }

  _op_releasedir (signal, path, fd) {
    this.ops.releasedir(path, fd, err => {
      return signal(err)
    })
  }

  _op_read (signal, path, fd, buf, len, offsetLow, offsetHigh) {
    this.ops.read(path, fd, buf, len, getDoubleArg(offsetLow, offsetHigh), (err, bytesRead) => {
      return signal(err, bytesRead || 0, buf.buffer)
    })
  }

  _op_write (signal, path, fd, buf, len, offsetLow, offsetHigh, killSuidgid) {
    const done = (err, bytesWritten) => {
      return signal(err, bytesWritten || 0, buf.buffer)
    }
    // handlers declared with 7 parameters learn whether the write must drop set-id bits (killPriv)
    if (this.ops.write.length >= 7) return this.ops.write(path, fd, buf, len, getDoubleArg(offsetLow, offsetHigh), killSuidgid, done)
    this.ops.write(path, fd, buf, len, getDoubleArg(offsetLow, offsetHigh), done)
  }

  _op_readdir (signal, path) {
    // cb(0, names, stats, flags, gen[, cipherDir, diskNames]) with
    // `stats` a Uint32Array of 22 words per entry (getStatArray's layout)
    // goes to the binding as it is, and fills the attribute cache there (see
    // readdir_packed in fuse-native.c), with each entry's cipher path when
    // the listed directory's (a string) and the names on disk are given, and
    // with the directory's own 22 words (dirStats) the kernel may keep it
    this.ops.readdir(path, (err, names, stats, flags, gen, cipherDir, diskNames, dirStats) => {
      if (err) return signal(err)
      if (stats instanceof Uint32Array) {
        const cpaths = typeof cipherDir === 'string' && Array.isArray(diskNames)
        const dir = cpaths && dirStats instanceof Uint32Array ? dirStats : null
        return signal(0, names, stats, flags || new Uint8Array(names.length), gen || 0, cpaths ? cipherDir : null, cpaths ? diskNames : null, dir)
      }
      if (stats) stats = stats.map(getStatArray)
      return signal(0, names, stats || [])
    })
  }

  _op_setxattr (signal, path, name, value, position, flags) {
    this.ops.setxattr(path, name, value, position, flags, err => {
      return signal(err, value.buffer)
    })
  }

  _op_getxattr (signal, path, name, valueBuf, position) {
    this.ops.getxattr(path, name, position, (err, value) => {
      if (!err) {
        if (!value) return signal(IS_OSX ? -93 : -61, valueBuf.buffer)
        if (valueBuf.length && value.length > valueBuf.length) return signal(Fuse.ERANGE, valueBuf.buffer)
        value.copy(valueBuf)
        return signal(value.length, valueBuf.buffer)
      }
      return signal(err, valueBuf.buffer)
    })
  }

  _op_listxattr (signal, path, listBuf) {
    this.ops.listxattr(path, (err, list) => {
      if (list && !err) {
        if (!listBuf.length) {
          let size = 0
          for (const name of list) size += Buffer.byteLength(name) + 1
          size += 128 // fuse yells if we do not signal room for some mac stuff also
          return signal(size, listBuf.buffer)
        }

        let need = 0
        for (const name of list) need += Buffer.byteLength(name) + 1
        if (need > listBuf.length) return signal(Fuse.ERANGE, listBuf.buffer) // too small a buffer: ERANGE, as the kernel asks

        let ptr = 0
        for (const name of list) {
          listBuf.write(name, ptr)
          ptr += Buffer.byteLength(name)
          listBuf[ptr++] = 0
        }

        return signal(ptr, listBuf.buffer)
      }
      return signal(err, listBuf.buffer)
    })
  }

  _op_removexattr (signal, path, name) {
    this.ops.removexattr(path, name, err => {
      return signal(err)
    })
  }

  _op_flush (signal, path, fd) {
    this.ops.flush(path, fd, err => {
      return signal(err)
    })
  }

  _op_fsync (signal, path, datasync, fd) {
    this.ops.fsync(path, datasync, fd, err => {
      return signal(err)
    })
  }

  _op_fsyncdir (signal, path, datasync, fd) {
    this.ops.fsyncdir(path, datasync, fd, err => {
      return signal(err)
    })
  }

  _op_truncate (signal, path, sizeLow, sizeHigh, killSuidgid) {
    const size = getDoubleArg(sizeLow, sizeHigh)
    const done = (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    }
    // handlers declared with 4 parameters learn whether the truncate must drop set-id bits (killPriv)
    if (this.ops.truncate.length >= 4) return this.ops.truncate(path, size, killSuidgid, done)
    this.ops.truncate(path, size, done)
  }

  _op_ftruncate (signal, path, fd, sizeLow, sizeHigh, killSuidgid) {
    const size = getDoubleArg(sizeLow, sizeHigh)
    const done = (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    }
    // handlers declared with 5 parameters learn whether the truncate must drop set-id bits (killPriv)
    if (this.ops.ftruncate.length >= 5) return this.ops.ftruncate(path, fd, size, killSuidgid, done)
    this.ops.ftruncate(path, fd, size, done)
  }

  _op_readlink (signal, path) {
    this.ops.readlink(path, (err, linkname) => {
      return signal(err, linkname)
    })
  }

  _op_chown (signal, path, uid, gid) {
    this.ops.chown(path, uid, gid, (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    })
  }

  _op_chmod (signal, path, mode) {
    this.ops.chmod(path, mode, (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    })
  }

  _op_mknod (signal, path, mode, dev, uid, gid, pid) {
    const done = (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    }
    // handlers declared as (path, mode, dev, caller, cb) get the caller
    if (this.ops.mknod.length >= 5) return this.ops.mknod(path, mode, dev, { uid, gid, pid }, done)
    this.ops.mknod(path, mode, dev, done)
  }

  _op_unlink (signal, path) {
    this.ops.unlink(path, err => {
      return signal(err)
    })
  }

  _op_rename (signal, src, dest, flags, uid, gid, pid, hiddenFh) { // renameat2's flags (0 for rename(2)), the caller, a handle of a file being hidden (-1: none)
    this.ops.rename(src, dest, flags, { uid, gid, pid, hiddenFh }, err => {
      return signal(err)
    })
  }

  _op_link (signal, src, dest) {
    this.ops.link(src, dest, (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(dest, stat)
      return signal(err)
    })
  }

  _op_symlink (signal, src, dest, uid, gid, pid) {
    const done = (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(dest, stat)
      return signal(err)
    }
    // handlers declared as (src, dest, caller, cb) get the caller
    if (this.ops.symlink.length >= 4) return this.ops.symlink(src, dest, { uid, gid, pid }, done)
    this.ops.symlink(src, dest, done)
  }

  _op_mkdir (signal, path, mode, uid, gid, pid) {
    const done = (err, stat) => { // optional attributes for the getattr that follows
      if (!err && signal.carry) signal.carry(path, stat)
      return signal(err)
    }
    // handlers declared as (path, mode, caller, cb) get the caller
    if (this.ops.mkdir.length >= 4) return this.ops.mkdir(path, mode, { uid, gid, pid }, done)
    this.ops.mkdir(path, mode, done)
  }

  // lock(path, fh, set, { type, start, len, pid }, owner, cb(err, conflicting lock for a get)); owner: the
  // kernel's lock owner as a decimal string
  _op_lock (signal, path, fh, set, type, start, len, ownerLow, ownerHigh, pid) {
    const owner = ((BigInt(ownerHigh) << 32n) | BigInt(ownerLow)).toString()
    this.ops.lock(path, fh, set, { type, start, len, pid }, owner, (err, found) => {
      const answer = new Float64Array(4)
      if (!err && found) {
        answer[0] = found.type
        answer[1] = found.start
        answer[2] = found.len
        answer[3] = found.pid
      }
      return signal(err, answer)
    })
  }

  _op_flock (signal, path, fh, op) {
    this.ops.flock(path, fh, op, err => signal(err))
  }

  _op_fallocate (signal, path, mode, offset, length, fh) {
    this.ops.fallocate(path, mode, offset, length, fh, err => signal(err))
  }

  _op_rmdir (signal, path) {
    this.ops.rmdir(path, err => {
      return signal(err)
    })
  }

  // Public API

  mount (cb) {
    return this.open(cb)
  }

  // attribute cache (attrCache option). attrGen() before reading a
  // listing; readdir's cb(0, names, stats, flags, gen) stores the listed
  // entries' attributes only if no change happened in between.
  attrGen () {
    return this._thread ? binding.fuse_native_attr_gen(this._thread) : 0
  }

  // empties the attribute cache and the kept listings and gives their
  // memory back (dropCaches in fuse-native.c); the bytes given back
  dropCaches () {
    return this._thread ? binding.fuse_native_drop_caches(this._thread) : 0
  }

  // the native fast path (see setFastPath in fuse-native.c): `hook` is an
  // external from its owner, or null. Only while mounted; true when set.
  setFastPath (hook) {
    if (!this._thread) return false
    binding.fuse_native_set_fast_path(this._thread, hook || null)
    return true
  }

  // spinning libfuse threads call hook->assist (see setAssistHook in
  // fuse-native.c): `hook` is an external from its owner, or null. Only while
  // mounted; true when set.
  setAssistHook (hook) {
    if (!this._thread) return false
    binding.fuse_native_set_assist_hook(this._thread, hook || null)
    return true
  }

  unmount (cb) {
    return this.close(cb)
  }

  errno (code) {
    return (code && Fuse[code.toUpperCase()]) || -1
  }
}

Fuse.EPERM = -1
Fuse.ENOENT = -2
Fuse.ESRCH = -3
Fuse.EINTR = -4
Fuse.EIO = -5
Fuse.ENXIO = -6
Fuse.E2BIG = -7
Fuse.ENOEXEC = -8
Fuse.EBADF = -9
Fuse.ECHILD = -10
Fuse.EAGAIN = -11
Fuse.ENOMEM = -12
Fuse.EACCES = -13
Fuse.EFAULT = -14
Fuse.ENOTBLK = -15
Fuse.EBUSY = -16
Fuse.EEXIST = -17
Fuse.EXDEV = -18
Fuse.ENODEV = -19
Fuse.ENOTDIR = -20
Fuse.EISDIR = -21
Fuse.EINVAL = -22
Fuse.ENFILE = -23
Fuse.EMFILE = -24
Fuse.ENOTTY = -25
Fuse.ETXTBSY = -26
Fuse.EFBIG = -27
Fuse.ENOSPC = -28
Fuse.ESPIPE = -29
Fuse.EROFS = -30
Fuse.EMLINK = -31
Fuse.EPIPE = -32
Fuse.EDOM = -33
Fuse.ERANGE = -34
Fuse.EDEADLK = -35
Fuse.ENAMETOOLONG = -36
Fuse.ENOLCK = -37
Fuse.ENOSYS = -38
Fuse.ENOTEMPTY = -39
Fuse.ELOOP = -40
Fuse.EWOULDBLOCK = -11
Fuse.ENOMSG = -42
Fuse.EIDRM = -43
Fuse.ECHRNG = -44
Fuse.EL2NSYNC = -45
Fuse.EL3HLT = -46
Fuse.EL3RST = -47
Fuse.ELNRNG = -48
Fuse.EUNATCH = -49
Fuse.ENOCSI = -50
Fuse.EL2HLT = -51
Fuse.EBADE = -52
Fuse.EBADR = -53
Fuse.EXFULL = -54
Fuse.ENOANO = -55
Fuse.EBADRQC = -56
Fuse.EBADSLT = -57
Fuse.EDEADLOCK = -35
Fuse.EBFONT = -59
Fuse.ENOSTR = -60
Fuse.ENODATA = -61
Fuse.ETIME = -62
Fuse.ENOSR = -63
Fuse.ENONET = -64
Fuse.ENOPKG = -65
Fuse.EREMOTE = -66
Fuse.ENOLINK = -67
Fuse.EADV = -68
Fuse.ESRMNT = -69
Fuse.ECOMM = -70
Fuse.EPROTO = -71
Fuse.EMULTIHOP = -72
Fuse.EDOTDOT = -73
Fuse.EBADMSG = -74
Fuse.EOVERFLOW = -75
Fuse.ENOTUNIQ = -76
Fuse.EBADFD = -77
Fuse.EREMCHG = -78
Fuse.ELIBACC = -79
Fuse.ELIBBAD = -80
Fuse.ELIBSCN = -81
Fuse.ELIBMAX = -82
Fuse.ELIBEXEC = -83
Fuse.EILSEQ = -84
Fuse.ERESTART = -85
Fuse.ESTRPIPE = -86
Fuse.EUSERS = -87
Fuse.ENOTSOCK = -88
Fuse.EDESTADDRREQ = -89
Fuse.EMSGSIZE = -90
Fuse.EPROTOTYPE = -91
Fuse.ENOPROTOOPT = -92
Fuse.EPROTONOSUPPORT = -93
Fuse.ESOCKTNOSUPPORT = -94
Fuse.EOPNOTSUPP = -95
Fuse.EPFNOSUPPORT = -96
Fuse.EAFNOSUPPORT = -97
Fuse.EADDRINUSE = -98
Fuse.EADDRNOTAVAIL = -99
Fuse.ENETDOWN = -100
Fuse.ENETUNREACH = -101
Fuse.ENETRESET = -102
Fuse.ECONNABORTED = -103
Fuse.ECONNRESET = -104
Fuse.ENOBUFS = -105
Fuse.EISCONN = -106
Fuse.ENOTCONN = -107
Fuse.ESHUTDOWN = -108
Fuse.ETOOMANYREFS = -109
Fuse.ETIMEDOUT = -110
Fuse.ECONNREFUSED = -111
Fuse.EHOSTDOWN = -112
Fuse.EHOSTUNREACH = -113
Fuse.EALREADY = -114
Fuse.EINPROGRESS = -115
Fuse.ESTALE = -116
Fuse.EUCLEAN = -117
Fuse.ENOTNAM = -118
Fuse.ENAVAIL = -119
Fuse.EISNAM = -120
Fuse.EREMOTEIO = -121
Fuse.EDQUOT = -122
Fuse.ENOMEDIUM = -123
Fuse.EMEDIUMTYPE = -124

// Forward configuration functions through the exported class.
Fuse.beforeMount = beforeMount
Fuse.beforeUnmount = beforeUnmount
Fuse.configure = configure
Fuse.unconfigure = unconfigure
Fuse.isConfigured = isConfigured

// EventEmitter methods on Fuse (nanoresource is not an emitter)
for (const k of Object.getOwnPropertyNames(EventEmitter.prototype)) {
  if (k !== 'constructor' && !Fuse.prototype[k]) Fuse.prototype[k] = EventEmitter.prototype[k]
}
const RETAINED = new Set()

// the libfuse this binding runs with (fuse_version(): 29 for 2.9.x)
Fuse.libfuseVersion = function () {
  return binding.fuse_native_libfuse_version()
}

// the sha256 of the C sources the loaded binary was built from (checked
// against this directory's sources above, when it loaded)
Fuse.sourceHash = function () {
  return binding.fork_source_sha256
}

module.exports = Fuse

// opts.spin = { answer, loop } in microseconds, gate and native flags (see fuse_native_hand_over
// in fuse-native.c); absent or false = no spinning
function spinMicros (spin, key) {
  const v = spin && spin[key]
  return Number.isInteger(v) && v > 0 ? Math.min(v, 1000000) : 0
}

// block and inode counts as two words each (low, high): see populate_statvfs
function getStatfsArray (statfs) {
  const ints = new Uint32Array(17)
  const get = (k) => (statfs && statfs[k]) || 0
  const put64 = (i, v) => {
    ints[i] = v % 4294967296
    ints[i + 1] = Math.floor(v / 4294967296)
  }

  ints[0] = get('bsize')
  ints[1] = get('frsize')
  put64(2, get('blocks'))
  put64(4, get('bfree'))
  put64(6, get('bavail'))
  put64(8, get('files'))
  put64(10, get('ffree'))
  put64(12, get('favail'))
  ints[14] = get('fsid')
  ints[15] = get('flag')
  ints[16] = get('namemax')

  return ints
}

function getDoubleArg (a, b) {
  return a + b * 4294967296
}

// the root directory when there is no getattr: mode 040755, size 4096
function rootDirWords () {
  const w = new Uint32Array(22)
  w[0] = 0o40755
  w[3] = 4096
  return w
}

// attributes travel as tscryptfs's 22 words (stat_words.h,
// src/util/stat-words.ts): handlers answer with such a Uint32Array; no
// second packing of the layout lives here. A missing value is all zero.
function getStatArray (stat) {
  if (stat === undefined) return new Uint32Array(22)
  if (!(stat instanceof Uint32Array) || stat.length < 22) throw new TypeError('fuse-native (tscryptfs patch): attributes must be a Uint32Array of 22 words')
  return stat
}
