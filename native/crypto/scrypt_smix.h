/*
 * scrypt's memory-hard step, SMix (RFC 7914 §5), for the password-to-key
 * derivation of src/config/scrypt.ts, which does the PBKDF2 steps around it
 * and holds the rule; node:crypto's scrypt gives the same key without this
 * (test/unit/scrypt-native.test.ts compares them).
 */
#ifndef TSCRYPTFS_SCRYPT_SMIX_H
#define TSCRYPTFS_SCRYPT_SMIX_H

#include <node_api.h>

/* Adds scryptSmix(block, N, r) -> Promise<Uint8Array> to `exports`; 0 on failure. */
int scrypt_smix_register(napi_env env, napi_value exports);

#endif
