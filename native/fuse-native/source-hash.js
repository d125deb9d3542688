// The sha256 of the C sources of this binding (fuse-native.c and the
// headers beside it), in a fixed order. binding.gyp compiles it into the
// binary; index.js compares the two when it loads, so a binary built from
// other sources is refused instead of run. Run as a script it prints it.
'use strict'
const crypto = require('crypto')
const fs = require('fs')
const path = require('path')

const SOURCES = ['fuse-native.c', 'fuse_hooks.h', 'stat_words.h', 'semaphore.h']

function sourceHash () {
  const h = crypto.createHash('sha256')
  for (const name of SOURCES) {
    const text = fs.readFileSync(path.join(__dirname, name))
    h.update(name + '\0' + text.length + '\0')
    h.update(text)
  }
  return h.digest('hex')
}

module.exports = { sourceHash, SOURCES }
if (require.main === module) process.stdout.write(sourceHash())
