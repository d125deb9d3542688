{
  "targets": [
    {
      "target_name": "tscryptfs_aegis",
      "sources": [
        "crypto/aegis.c"
      ],
      "cflags": [
        "-O3",
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-fno-strict-aliasing"
      ],
      "cflags!": [
        "-O2",
        "-O0"
      ],
      "xcode_settings": {
        "GCC_OPTIMIZATION_LEVEL": "3",
        "OTHER_CFLAGS": [
          "-std=c99",
          "-Wall",
          "-Wextra"
        ]
      },
      "defines": [
        "NAPI_VERSION=8"
      ]
    },
    {
      "target_name": "tscryptfs_batch",
      "sources": [
        "crypto/batch_aead.c",
        "crypto/aead_block.c",
        "crypto/shared_job.c",
        "crypto/scrypt_smix.c",
        "common/napi_args.c"
      ],
      "cflags": [
        "-O2",
        "-std=gnu99",
        "-Wall",
        "-Wextra"
      ],
      "defines": [
        "NAPI_VERSION=8"
      ],
      "include_dirs": [
        "common",
        "crypto",
        "fuse-native"
      ]
    },
    {
      "target_name": "tscryptfs_fastpath",
      "sources": [
        "fastpath/addon.c",
        "fastpath/read.c",
        "fastpath/write.c",
        "fastpath/lookup.c",
        "fastpath/open.c",
        "fastpath/remove.c",
        "fastpath/list.c",
        "fastpath/rename.c",
        "fastpath/content.c",
        "fastpath/handles.c",
        "fastpath/fences.c",
        "fastpath/dirs.c",
        "fastpath/walk.c",
        "fastpath/removed.c",
        "fastpath/held.c",
        "crypto/aead_block.c",
        "crypto/name_cipher.c",
        "common/napi_args.c"
      ],
      "cflags": [
        "-O2",
        "-std=gnu99",
        "-Wall",
        "-Wextra"
      ],
      "defines": [
        "NAPI_VERSION=8"
      ],
      "include_dirs": [
        "common",
        "crypto",
        "fuse-native"
      ]
    },
    {
      "target_name": "tscryptfs_sys",
      "sources": [
        "sys/sys.c",
        "sys/at_calls.c",
        "sys/memory.cc",
        "common/napi_args.c"
      ],
      "cflags": [
        "-O2",
        "-Wall",
        "-Wextra"
      ],
      "defines": [
        "NAPI_VERSION=8"
      ],
      "cflags_c": [
        "-std=gnu99"
      ],
      "include_dirs": [
        "common",
        "fuse-native"
      ]
    }
  ]
}
