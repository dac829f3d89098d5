package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits are the values of PROTOCOL.md § 8 in force on this instance. The manifest shows them
// and the operations enforce exactly them.
type Limits struct {
	BodyMaxChars            int `json:"body_max_chars"`
	ExtensionMaxChars       int `json:"extension_max_chars"`
	ProvenanceFieldMaxChars int `json:"provenance_field_max_chars"`
	RequestMaxBytes         int `json:"request_max_bytes"`
	ThreadMaxMessages       int `json:"thread_max_messages"`
	ThreadMaxDepth          int `json:"thread_max_depth"`
	WritesPerMinute         int `json:"writes_per_minute"`
	InboxMaxItems           int `json:"inbox_max_items"`
	InboxDefaultItems       int `json:"inbox_default_items"`
	ListMaxItems            int `json:"list_max_items"`
	EvidenceMaxItems        int `json:"evidence_max_items"`
	EvidenceRefMaxChars     int `json:"evidence_ref_max_chars"`
	VerifyQuorum            int `json:"verify_quorum"`
	ArtifactMaxBytes        int `json:"artifact_max_bytes"`
	// The bytes of stored artifacts: of those each identity stored first, and of all. An
	// artifact is stored for good, so these bound what the store can ever hold.
	ArtifactBytesPerIdentity int `json:"artifact_bytes_per_identity"`
	ArtifactBytesTotal       int `json:"artifact_bytes_total"`
	ThreadMaxClaims          int `json:"thread_max_claims"`
	ClaimMaxStances          int `json:"claim_max_stances"`
	InboxMaxWaitSeconds      int `json:"inbox_max_wait_seconds"`
	// Long polls waiting at once, per identity and on the whole instance: each waiter is a
	// held request, and one identity must not take every place.
	InboxWaitsPerIdentity int `json:"inbox_waits_per_identity"`
	InboxWaitsMax         int `json:"inbox_waits_max"`
	// Failed authentications one client address may make per minute before every token it
	// sends is refused unread until the minute has passed: guessing tokens stays slow.
	FailedAuthsPerMinute int `json:"failed_auths_per_minute"`
	// IdempotencyKeyHours is how long a write's idempotency key is kept at least (§ 15).
	IdempotencyKeyHours int `json:"idempotency_key_hours"`
	// ImportMaxBytes bounds what an import reads (§ 14): another realm's export, read as it
	// arrives and refused past this many bytes.
	ImportMaxBytes int `json:"import_max_bytes"`
	// § 19: connections open at once, in all and from one client address; more are refused
	// as they are accepted. Each open connection holds a goroutine and its read and write
	// buffers whatever it sends.
	MaxConnections           int `json:"max_connections"`
	MaxConnectionsPerAddress int `json:"max_connections_per_address"`
	// MinReadBytesPerSecond is the slowest a client may take an answer (§ 19): one that falls
	// more than 10 s behind this rate is cut off, so that it holds the answer's buffers and
	// work no longer than a reader keeping up would.
	MinReadBytesPerSecond int `json:"min_read_bytes_per_second"`
}

// DefaultLimits are the reference values of PROTOCOL.md § 8.
func DefaultLimits() Limits {
	return Limits{
		BodyMaxChars:            500,
		ExtensionMaxChars:       64,
		ProvenanceFieldMaxChars: 200,
		RequestMaxBytes:         16384,
		ThreadMaxMessages:       1000,
		ThreadMaxDepth:          64,
		WritesPerMinute:         120,
		InboxMaxItems:           100,
		InboxDefaultItems:       50,
		ListMaxItems:            100,
		EvidenceMaxItems:        16,
		EvidenceRefMaxChars:     2048,
		VerifyQuorum:            1,
		ArtifactMaxBytes:        1048576,
		// 64 artifacts of the largest size per identity, and 1 GiB in all: room for the logs
		// and reproducers evidence needs, while the database that holds the bytes stays
		// quick to back up.
		ArtifactBytesPerIdentity: 64 << 20,
		ArtifactBytesTotal:       1 << 30,
		ThreadMaxClaims:          200,
		ClaimMaxStances:          100,
		InboxMaxWaitSeconds:      30,
		InboxWaitsPerIdentity:    8,
		InboxWaitsMax:            1000,
		FailedAuthsPerMinute:     30,
		IdempotencyKeyHours:      24,
		ImportMaxBytes:           64 << 20,
		MaxConnections:           4096,
		MaxConnectionsPerAddress: 64,
		MinReadBytesPerSecond:    16384,
	}
}

// limitFields names each limit as the manifest (and PARLEY_LIMIT_<NAME>) spells it.
func (l *Limits) fields() map[string]*int {
	return map[string]*int{
		"body_max_chars":              &l.BodyMaxChars,
		"extension_max_chars":         &l.ExtensionMaxChars,
		"provenance_field_max_chars":  &l.ProvenanceFieldMaxChars,
		"request_max_bytes":           &l.RequestMaxBytes,
		"thread_max_messages":         &l.ThreadMaxMessages,
		"thread_max_depth":            &l.ThreadMaxDepth,
		"writes_per_minute":           &l.WritesPerMinute,
		"inbox_max_items":             &l.InboxMaxItems,
		"inbox_default_items":         &l.InboxDefaultItems,
		"list_max_items":              &l.ListMaxItems,
		"evidence_max_items":          &l.EvidenceMaxItems,
		"evidence_ref_max_chars":      &l.EvidenceRefMaxChars,
		"verify_quorum":               &l.VerifyQuorum,
		"artifact_max_bytes":          &l.ArtifactMaxBytes,
		"artifact_bytes_per_identity": &l.ArtifactBytesPerIdentity,
		"artifact_bytes_total":        &l.ArtifactBytesTotal,
		"thread_max_claims":           &l.ThreadMaxClaims,
		"claim_max_stances":           &l.ClaimMaxStances,
		"inbox_max_wait_seconds":      &l.InboxMaxWaitSeconds,
		"inbox_waits_per_identity":    &l.InboxWaitsPerIdentity,
		"inbox_waits_max":             &l.InboxWaitsMax,
		"failed_auths_per_minute":     &l.FailedAuthsPerMinute,
		"idempotency_key_hours":       &l.IdempotencyKeyHours,
		"import_max_bytes":            &l.ImportMaxBytes,
		"max_connections":             &l.MaxConnections,
		"max_connections_per_address": &l.MaxConnectionsPerAddress,
		"min_read_bytes_per_second":   &l.MinReadBytesPerSecond,
	}
}

// LimitNames lists the configurable limits by name, in no particular order.
func LimitNames() []string {
	var l Limits
	names := make([]string, 0, 16)
	for name := range l.fields() {
		names = append(names, name)
	}
	return names
}

// Set changes one limit by its manifest name (case-insensitive): "writes_per_minute", "100".
func (l *Limits) Set(name, value string) error {
	field, ok := l.fields()[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("unknown limit %q", name)
	}
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 1 {
		return fmt.Errorf("limit %s must be a whole number of at least 1, not %q", strings.ToLower(name), value)
	}
	*field = n
	return nil
}

// Validate checks that the limits make sense together.
func (l Limits) Validate() error {
	for name, v := range l.fields() {
		if *v < 1 {
			return fmt.Errorf("limit %s must be at least 1", name)
		}
	}
	if l.InboxDefaultItems > l.InboxMaxItems {
		return fmt.Errorf("limit inbox_default_items (%d) exceeds inbox_max_items (%d)", l.InboxDefaultItems, l.InboxMaxItems)
	}
	if l.MaxConnectionsPerAddress > l.MaxConnections {
		return fmt.Errorf("limit max_connections_per_address (%d) exceeds max_connections (%d)", l.MaxConnectionsPerAddress, l.MaxConnections)
	}
	return nil
}
