{
  "targets": [{
    "target_name": "fuse",
    "include_dirs": [
      "<!(node -e \"require('napi-macros')\")",
      "<!(node -e \"require('fuse-shared-library/include')\")"
    ],
    "libraries": [
      "<!(node -e \"require('fuse-shared-library/lib')\")"
    ],
    "sources": [
      "fuse-native.c"
    ],
    "defines": [
      "FORK_SOURCE_SHA256=\"<!(node source-hash.js)\""
    ],
    "cflags": [
      "-g",
      "-O3",
      "-Wall",
      "-Wextra"
    ]
  }, {
    "target_name": "postinstall",
    "type": "none",
    "dependencies": ["fuse"],
    "copies": [{
      "destination": "build/Release",
      "files": [ "<!(node -e \"require('fuse-shared-library/lib')\")" ]
    }]
  }]
}
