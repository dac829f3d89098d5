package security

// The rules of PROTOCOL.md, written down here a second time as tables, so that the matrix
// checks the server against the text and not against itself: nothing in this file calls the
// protocol package. Each table names the section it copies.

// reasonStatus is § 9's table: the HTTP status of every reason.
var reasonStatus = map[string]int{
	"invalid_body": 400, "unauthenticated": 401, "token_right_missing": 403,
	"thread_authority_missing": 403, "not_found": 404, "payload_too_large": 413,
	"self_reply": 409, "thread_closed": 409, "invalid_transition": 409, "self_attestation": 409,
	"already_attested": 409, "limit_exceeded": 409, "idempotency_conflict": 422, "rate_limited": 429, "unavailable": 503,
}

// caller is one kind of actor of the matrix (§ 1, § 6, § 12).
type caller struct {
	name  string
	token string // "none", "malformed", "revoked" or "valid"
	// rights of the token (§ 1); a human holds every right.
	read, write, lock, verify, human bool
	// creator: the identity that opened the case's thread (and asserted its claim), speaking
	// through another extension than the one it opened it with.
	creator bool
	// elsewhere: the token is scoped to another room than the case's thread's (§ 16): every
	// thread of the matrix is then not found, exactly as one that does not exist.
	elsewhere bool
	// inRoom: the token is scoped to the room of the case's thread (general).
	inRoom bool
}

var callers = []caller{
	{name: "no token", token: "none"},
	{name: "malformed token", token: "malformed"},
	{name: "revoked token", token: "revoked"},
	{name: "read-only", token: "valid", read: true},
	{name: "writer", token: "valid", read: true, write: true},
	{name: "creator, other extension", token: "valid", read: true, write: true, creator: true},
	{name: "lock holder", token: "valid", read: true, write: true, lock: true},
	{name: "verifier", token: "valid", read: true, write: true, verify: true},
	{name: "human", token: "valid", read: true, write: true, lock: true, verify: true, human: true},
	{name: "scoped to another room", token: "valid", read: true, write: true, lock: true, verify: true, elsewhere: true},
	{name: "lock holder scoped to its room", token: "valid", read: true, write: true, lock: true, inRoom: true},
}

// threadState is one row of the matrix's states (§ 4, § 5): the thread's state, whether it is
// a proposal (set by a model without lock) or confirmed, and whether the thread exists.
type threadState struct {
	name     string
	state    string // "" for a thread that does not exist
	proposed bool
}

var threadStates = []threadState{
	{name: "open", state: "open"},
	{name: "answered (proposed)", state: "answered", proposed: true},
	{name: "decided (proposed)", state: "decided", proposed: true},
	{name: "closed (proposed)", state: "closed", proposed: true},
	{name: "closed (confirmed)", state: "closed"},
	{name: "deferred (proposed)", state: "deferred", proposed: true},
	{name: "obsolete (confirmed)", state: "obsolete"},
	{name: "rejected (confirmed by a human)", state: "rejected"},
	{name: "unknown thread", state: ""},
}

func (s threadState) exists() bool { return s.state != "" }

// locked is § 4's "closed is locked": a confirmed closed accepts nothing but reopen.
func (s threadState) locked() bool { return s.state == "closed" && !s.proposed }

func (s threadState) side() bool {
	return s.state == "deferred" || s.state == "obsolete" || s.state == "rejected"
}

// transitions is § 4's full table: the result of a kind in a state for an actor that passed
// the authority check. "stay" keeps the state, "invalid" is invalid_transition, "side" is the
// kind's own side state. A confirmed closed is thread_closed before this table is asked.
var transitions = map[string]map[string]string{
	//           ask/note        answer              decide              close               defer/reject/obsolete  reopen
	"open":     row("stay", "answered", "decided", "invalid", "side", "invalid"),
	"answered": row("stay", "stay", "decided", "closed", "side", "invalid"),
	"decided":  row("stay", "stay", "stay", "closed", "side", "invalid"),
	"closed":   row("stay", "stay", "invalid", "stay", "invalid", "open"),
	"deferred": row("stay", "stay", "invalid", "invalid", "invalid", "open"),
	"obsolete": row("stay", "stay", "invalid", "invalid", "invalid", "open"),
	"rejected": row("stay", "stay", "invalid", "invalid", "invalid", "open"),
}

func row(askNote, answer, decide, close, sideKinds, reopen string) map[string]string {
	return map[string]string{"ask": askNote, "note": askNote, "answer": answer, "decide": decide,
		"close": close, "defer": sideKinds, "reject": sideKinds, "obsolete": sideKinds, "reopen": reopen}
}

// target is the state a kind marks (§ 3).
var target = map[string]string{"decide": "decided", "close": "closed", "defer": "deferred",
	"reject": "rejected", "obsolete": "obsolete", "reopen": "open"}

// needsAuthority are the kinds of § 6 that need thread authority.
var needsAuthority = map[string]bool{"decide": true, "close": true, "defer": true, "reject": true,
	"obsolete": true, "reopen": true}

// The rights an operation needs (§ 1, § 5, § 8, § 12, § 13).
const (
	public     = "public"        // the manifest: no token needed
	needRead   = "read"          //
	needWrite  = "write"         //
	needLock   = "lock or human" // confirm
	needHuman  = "human"         // mark, a claim's mark
	needVerify = "verify or human"
	needAdmin  = "human administrator" // rooms (§ 16); the matrix's human is one
)

func (c caller) has(need string) bool {
	switch need {
	case public, needRead:
		return c.read || c.human
	case needWrite:
		return c.write || c.human
	case needLock:
		return c.lock || c.human
	case needHuman, needAdmin:
		return c.human
	case needVerify:
		return c.verify || c.human
	}
	panic("unknown need " + need)
}

// expect is the outcome § 9's order of checks gives for op called by c on a thread in st:
// "ok" (with the thread's or claim's state after it, when the operation sets one) or the
// reason of the first check that fails. Request size and envelope pass: every input of the
// matrix is well formed.
func expect(op operation, c caller, st threadState) (outcome, after string) {
	// 1. authentication: no token passes only where none is needed; a bad one never.
	if c.token != "valid" {
		if op.needs == public && c.token == "none" {
			return "ok", ""
		}
		return "unauthenticated", ""
	}
	// 2. the token's right.
	if !c.has(op.needs) {
		return "token_right_missing", ""
	}
	if !op.onThread {
		return "ok", ""
	}
	// 3. existence: a thread of another room does not exist for a scoped token (§ 16).
	if !st.exists() || c.elsewhere {
		return "not_found", ""
	}
	// § 18: hiding and unhiding moderate a message, not the thread. A confirmed closed thread
	// does not stop them (a leaked secret must be withdrawn wherever it stands), and they ask
	// no thread authority beyond the lock right within the token's rooms (§ 16, the existence
	// check above). Hiding a hidden message or unhiding a visible one is invalid_transition.
	if op.moderation != "" {
		if (op.moderation == "hide") != (op.message == "visible") {
			return "invalid_transition", ""
		}
		if op.moderation == "hide" {
			return "ok", "hidden"
		}
		return "ok", "visible"
	}
	if !op.writes {
		return "ok", ""
	}
	// 4. a confirmed closed thread takes nothing but reopen (§ 4), claims included (§ 12).
	if st.locked() && op.kind != "reopen" {
		return "thread_closed", ""
	}
	// 5. authority (§ 6): the creator, a lock holder, a human; a side state is reopened by
	// moderation only.
	if needsAuthority[op.kind] {
		allowed := c.creator || c.lock || c.human
		if op.kind == "reopen" && st.side() {
			allowed = c.lock || c.human
		}
		if !allowed {
			return "thread_authority_missing", ""
		}
	}
	// 6. the operation's own rule.
	switch {
	case op.kind != "":
		return transition(op.kind, st, c.human)
	case op.name == "confirm":
		if !st.proposed { // § 5: confirming what is confirmed
			return "invalid_transition", ""
		}
		return "ok", st.state
	case op.name == "mark":
		return "ok", markAs
	case op.name == "claim_attest":
		if c.creator { // the claim was asserted by the creator's identity
			return "self_attestation", ""
		}
		return "ok", "supported"
	case op.name == "claim_refute":
		return "ok", "refuted"
	case op.name == "claim_verify":
		return "ok", "verified" // the claim is supported; verify_quorum is 1
	case op.name == "claim mark":
		return "ok", claimMarkAs
	case op.name == "claim_assert":
		return "ok", "unverified"
	}
	return "ok", ""
}

// transition applies § 4's table, and § 6.4 for a human: a human's state acts apply from any
// state (a confirmed closed was refused before).
func transition(kind string, st threadState, human bool) (string, string) {
	if human && needsAuthority[kind] {
		return "ok", target[kind]
	}
	switch r := transitions[st.state][kind]; r {
	case "stay":
		return "ok", st.state
	case "invalid":
		return "invalid_transition", ""
	case "side":
		return "ok", target[kind]
	default:
		return "ok", r
	}
}
