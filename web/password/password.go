// Package password hashes and checks the passwords of Parley's human accounts with argon2id,
// kept as a PHC-style string: $argon2id$v=19$m=65536,t=2,p=1$<salt>$<hash>.
//
// The parameters travel inside every encoded hash, so they can be raised later without
// making the hashes already stored unreadable.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// The cost of a new hash: the second recommended option of RFC 9106 § 4 (64 MiB) with two
// passes instead of three; measured at about 95 ms and 64 MiB per hash on one server core
// (BenchmarkVerify), which a login can afford and an offline guesser cannot.
const (
	memoryKiB = 64 * 1024
	passes    = 2
	lanes     = 1
	saltBytes = 16
	keyBytes  = 32
)

// Bounds on the parameters Verify accepts, so that a damaged or planted hash cannot make one
// login take minutes or gigabytes.
const (
	maxMemoryKiB = 1024 * 1024
	maxPasses    = 16
	maxLanes     = 16
)

// MinLength and MaxBytes bound a new password. Verify applies no bound, so that a changed
// rule never locks anybody out.
const (
	MinLength = 8
	MaxBytes  = 1024
)

// ErrTooShort and ErrTooLong are what Check says of a password outside its bounds.
var (
	ErrTooShort = errors.New("the password is too short")
	ErrTooLong  = errors.New("the password is too long")
)

// ErrMalformed means an encoded hash is not one this package wrote.
var ErrMalformed = errors.New("password: malformed hash")

// Check says whether pw may become a password: the one rule for the command line and the
// pages alike.
func Check(pw string) error {
	switch {
	case !utf8.ValidString(pw):
		return errors.New("the password is not valid UTF-8")
	case utf8.RuneCountInString(pw) < MinLength:
		return fmt.Errorf("%w: it needs at least %d characters", ErrTooShort, MinLength)
	case len(pw) > MaxBytes:
		return fmt.Errorf("%w: it may have at most %d bytes", ErrTooLong, MaxBytes)
	}
	return nil
}

// Hash checks pw and encodes its argon2id hash with a fresh random salt.
func Hash(pw string) (string, error) {
	if err := Check(pw); err != nil {
		return "", err
	}
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	p := params{memory: memoryKiB, passes: passes, lanes: lanes}
	return encode(p, salt, idKey(pw, salt, p, keyBytes)), nil
}

// Verify reports whether pw is the password encoded. The comparison takes the same time
// wherever the hashes differ. An error means encoded is malformed, never a wrong password.
func Verify(encoded, pw string) (bool, error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := idKey(pw, salt, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

type params struct {
	memory uint32
	passes uint32
	lanes  uint8
}

func idKey(pw string, salt []byte, p params, size uint32) []byte {
	return returningMemory(p.memory, func() []byte {
		return argon2.IDKey([]byte(pw), salt, p.passes, p.memory, p.lanes, size)
	})
}

var b64 = base64.RawStdEncoding

func encode(p params, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$%s$%s$%s",
		argon2.Version, encodeParams(p), b64.EncodeToString(salt), b64.EncodeToString(key))
}

func decode(encoded string) (p params, salt, key []byte, err error) {
	fields := strings.Split(encoded, "$")
	// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, hash
	if len(fields) != 6 || fields[0] != "" || fields[1] != "argon2id" {
		return p, nil, nil, ErrMalformed
	}
	if fields[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, fmt.Errorf("%w: unsupported version %q", ErrMalformed, fields[2])
	}
	if _, err := fmt.Sscanf(fields[3], "m=%d,t=%d,p=%d", &p.memory, &p.passes, &p.lanes); err != nil ||
		encodeParams(p) != fields[3] {
		return p, nil, nil, fmt.Errorf("%w: parameters %q", ErrMalformed, fields[3])
	}
	if p.memory < 8*uint32(p.lanes) || p.memory > maxMemoryKiB || p.passes < 1 || p.passes > maxPasses ||
		p.lanes < 1 || p.lanes > maxLanes {
		return p, nil, nil, fmt.Errorf("%w: parameters %q out of bounds", ErrMalformed, fields[3])
	}
	if salt, err = b64.DecodeString(fields[4]); err != nil || len(salt) < 8 {
		return p, nil, nil, fmt.Errorf("%w: salt", ErrMalformed)
	}
	if key, err = b64.DecodeString(fields[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, fmt.Errorf("%w: hash", ErrMalformed)
	}
	return p, salt, key, nil
}

// encodeParams is the canonical parameter field; decode compares against it so that only
// the exact form Hash writes is accepted (no signs, no leading zeros, nothing trailing).
func encodeParams(p params) string {
	return fmt.Sprintf("m=%d,t=%d,p=%d", p.memory, p.passes, p.lanes)
}
