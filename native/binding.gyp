{
  "targets": [
    {
      "target_name": "tscryptfs_aegis",
      "sources": [
        "src/aegis.c"
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
        "src/batch_aead.c",
        "src/aead_block.c",
        "src/shared_job.c",
        "src/napi_args.c",
        "src/reader.c",
        "src/writer.c",
        "src/unlinker.c",
        "src/dir_fds.c",
        "src/name_cipher.c",
        "src/lookup.c",
        "src/opener.c"
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
        "fuse-native"
      ]
    },
    {
      "target_name": "tscryptfs_sys",
      "sources": [
        "src/sys.c",
        "src/sys_at.c",
        "src/sys_memory.cc",
        "src/napi_args.c"
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
        "fuse-native"
      ]
    }
  ]
}
