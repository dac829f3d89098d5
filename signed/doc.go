// Package signed is the cryptography of Parley's signed profile (PROTOCOL.md § 14): did:key
// identifiers for Ed25519 keys, the check that refuses weak public keys, and W3C Data
// Integrity proofs of the eddsa-jcs-2022 cryptosuite — made with a key (a stance's author's,
// or the realm key) and checked over any JSON document, Parley's or not. It also keeps the
// check of the version 1 signatures that stances stored before § 14 carry (legacy.go).
//
// It knows nothing of storage or of the protocol's rules, so that the server,
// parley verify-export and any third party check the same bytes.
package signed
