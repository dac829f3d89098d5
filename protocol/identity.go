package protocol

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// § 1: identities, tokens, rights.

// Right is one thing a token lets its holder do.
type Right string

const (
	RightRead   Right = "read"
	RightWrite  Right = "write"
	RightLock   Right = "lock"
	RightVerify Right = "verify"
)

// AllRights in the order the manifest lists them.
var AllRights = []Right{RightRead, RightWrite, RightLock, RightVerify}

// DefaultAgentRights are given to an agent token when none are named.
var DefaultAgentRights = Rights{RightRead: true, RightWrite: true}

// HumanRealm is the realm of every human identity: human:<name>.
const HumanRealm = "human"

// DefaultRealm is the reference realm of agents.
const DefaultRealm = "ainotes"

var (
	handlePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	extensionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// ValidHandle reports whether h may be an agent handle, a human name or a realm.
func ValidHandle(h string) bool { return handlePattern.MatchString(h) }

// ValidExtension reports whether e has the form of a non-default extension.
func ValidExtension(e string) bool { return extensionPattern.MatchString(e) }

// AgentIdentity is <realm>:<handle>.
func AgentIdentity(realm, handle string) string { return realm + ":" + handle }

// HumanIdentity is human:<name>.
func HumanIdentity(name string) string { return HumanRealm + ":" + name }

// IsHumanIdentity reports whether identity names a human.
func IsHumanIdentity(identity string) bool { return strings.HasPrefix(identity, HumanRealm+":") }

// Rights is a set of rights.
type Rights map[Right]bool

// ParseRights reads a comma-separated list such as "read,write,lock".
func ParseRights(list string) (Rights, error) {
	r := Rights{}
	for _, part := range strings.Split(list, ",") {
		name := Right(strings.TrimSpace(part))
		if name == "" {
			continue
		}
		known := false
		for _, k := range AllRights {
			known = known || k == name
		}
		if !known {
			return nil, fmt.Errorf("unknown right %q (rights are read, write, lock, verify)", name)
		}
		r[name] = true
	}
	if len(r) == 0 {
		return nil, fmt.Errorf("no rights given (rights are read, write, lock, verify)")
	}
	return r, nil
}

// Has reports whether the set holds right.
func (r Rights) Has(right Right) bool { return r[right] }

// List returns the rights in manifest order.
func (r Rights) List() []string {
	out := []string{}
	for _, k := range AllRights {
		if r[k] {
			out = append(out, string(k))
		}
	}
	return out
}

// String is the stored form: "read,write".
func (r Rights) String() string { return strings.Join(r.List(), ",") }

// AllRightsSet is every right: what a human holds.
func AllRightsSet() Rights {
	r := Rights{}
	for _, k := range AllRights {
		r[k] = true
	}
	return r
}

// tokenPrefix makes a Parley secret recognisable (for secret scanners and for people).
const tokenPrefix = "parley_"

// NewTokenSecret makes a fresh secret with 256 bits of randomness.
func NewTokenSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashTokenSecret is what is stored of a secret: its SHA-256, hex. A secret has 256 bits of
// randomness, so a fast hash is enough; a slow one would only slow every request.
func HashTokenSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SameHash compares two stored hashes in constant time.
func SameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// MaxLabelChars bounds a moderation label, which is shown beside every state a lock holder
// sets ("KI · <label>").
const MaxLabelChars = 64

// CheckLabel validates a moderation label: 1 to MaxLabelChars printable characters, no white
// space at either end.
func CheckLabel(label string) error {
	if strings.TrimSpace(label) != label || label == "" {
		return fmt.Errorf("the label %q is empty or starts or ends with a space", label)
	}
	if utf8.RuneCountInString(label) > MaxLabelChars {
		return fmt.Errorf("the label has more than %d characters", MaxLabelChars)
	}
	for _, r := range label {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("the label %q has a character that cannot be shown", label)
		}
	}
	return nil
}

// Actor is who performs an operation: set by the server from a token or a browser session,
// never declared by the client.
type Actor struct {
	Identity string
	Human    bool
	Rights   Rights
	// Label is the moderation label of a lock holder (default: the handle).
	Label   string
	TokenID int64
	// Session marks a human signed in to the pages (not a token): the only reader of a hidden
	// message's body (§ 18).
	Session bool
	// Rooms are the rooms a scoped token is scoped to (§ 16); nil reaches every room. See
	// ScopeOf.
	Rooms []int64
	// reached is every room a scoped token reaches, read with the token (storage's
	// Token.Reached); nil when not read, and ScopeOf's queries then find them themselves.
	reached []int64
	// Operator is the operator at the command line (OperatorActor), never a network caller.
	Operator bool
}

// Can reports whether the actor holds right. A human holds every right.
func (a *Actor) Can(right Right) bool { return a != nil && (a.Human || a.Rights.Has(right)) }

// Moderator reports whether the actor's states are confirmed: a lock holder or a human.
func (a *Actor) Moderator() bool { return a != nil && (a.Human || a.Rights.Has(RightLock)) }

// AuthorKind is "human" or "llm".
func (a *Actor) AuthorKind() string {
	if a.Human {
		return "human"
	}
	return "llm"
}

// LockLabelPrefix starts the event label of a lock holder (§ 7), as stored; the pages show it
// in the reader's language ("AI · " in English).
const LockLabelPrefix = "KI · "

// DisplayLabel is the event label of § 7: the identity, "KI · <label>" for a lock holder, and
// human:<name> for a human.
func (a *Actor) DisplayLabel() string {
	switch {
	case a.Human:
		return a.Identity
	case a.Rights.Has(RightLock):
		return LockLabelPrefix + a.ModerationLabel()
	default:
		return a.Identity
	}
}

// ModerationLabel is the token's label, or the handle when none was set.
func (a *Actor) ModerationLabel() string {
	if a.Label != "" {
		return a.Label
	}
	if _, handle, ok := strings.Cut(a.Identity, ":"); ok {
		return handle
	}
	return a.Identity
}

// SortedRights helps tests and listings print rights stably.
func SortedRights(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return out
}
