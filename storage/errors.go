package storage

import "errors"

// Sentinel errors: the only driver-independent facts callers may test for with errors.Is.
// Every driver error is translated into one of these (or passed on unchanged) at the storage
// boundary, so no package above storage ever inspects a driver error.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrAlreadyExists: a unique constraint refused the write.
	ErrAlreadyExists = errors.New("storage: already exists")
	// ErrUnavailable: the database cannot be reached right now; retrying later may succeed.
	ErrUnavailable = errors.New("storage: database unavailable")
	// ErrRevoked: the token exists but was revoked. Callers answer it exactly as ErrNotFound
	// (a client learns nothing from the difference); it exists so that logs can tell a
	// revoked token still in use from a made-up one.
	ErrRevoked = errors.New("storage: token revoked")
)
