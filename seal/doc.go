// Package seal keeps the originals of redacted values sealed (AES-256-GCM)
// under a hierarchy of keys, so that erasing them is destroying a key, never
// rewriting a record.
//
// # The key hierarchy
//
//	KEK                       the key-encryption key: a file (mode 0600) or
//	 │                        an environment variable (FileKEK, EnvKEK), or
//	 │                        any KEK implementation (a KMS); never stored
//	 ├── period DEK           one per (tenant, period), random, stored wrapped
//	 │    │                   by the KEK; a period is a UTC month by default
//	 │    │                   (Granularity: day, month or year)
//	 │    ├── session key     one per (tenant, period, session), random,
//	 │    │                   stored wrapped by its period's DEK
//	 │    │    └── values     each sealed under its session key
//	 │    └── session key …
//	 └── period DEK …
//
// Keys are persisted wrapped, through a KeyStore (put, get, destroy, list);
// the KEK never leaves its holder. A sealed value is an envelope (Envelope)
// naming its tenant, period, session and session key id, with a nonce and
// the ciphertext; the envelope's header and the caller's additional data
// (the record and field the value belongs to) are the GCM additional data,
// so a value moved to another tenant, session or record does not open.
//
// # What destruction means
//
// Destroying a key drops its wrapped bytes from the store and keeps a
// tombstone (its reference and id), so opening a value sealed under it
// reports ErrErased rather than an unknown key:
//
//   - Sealer.ForgetSession destroys one session's keys (in every period):
//     that session's values are unrecoverable, every other one opens.
//   - Sealer.DestroyPeriod (and ExpirePeriods, for retention) destroys a
//     tenant's period DEK and the session keys it wraps: every value sealed
//     in that period is unrecoverable, with or without the KEK, in every
//     copy of the records — backups and replicas included, once the key
//     store's own copies of the destroyed keys are gone.
//
// The records themselves — the redacted form and the sealed bytes — are
// never rewritten, so a hash chain over them still verifies.
//
// # Rotation
//
// Rotate unwraps every live DEK with the old KEK and wraps it with the new
// one; session keys and sealed values are untouched. A Sealer caches
// unwrapped keys (DefaultKeyCache entries for DefaultKeyTTL), so a warm
// Seal costs one AES-GCM operation. Open also reads the session key's row
// from the store each time, so a key destroyed by another process opens
// nothing from the moment it is destroyed; Seal may still seal under it,
// from its cache, for at most the TTL — values that are then unrecoverable
// at once, as the session's are.
package seal
