package protocol

import (
	"errors"
	"fmt"
)

// § 9: the stable reasons of a refusal.

// Reason is the stable, machine-readable word for why a request was refused.
type Reason string

const (
	ReasonInvalidBody            Reason = "invalid_body"
	ReasonUnauthenticated        Reason = "unauthenticated"
	ReasonTokenRightMissing      Reason = "token_right_missing"
	ReasonThreadAuthorityMissing Reason = "thread_authority_missing"
	ReasonNotFound               Reason = "not_found"
	ReasonPayloadTooLarge        Reason = "payload_too_large"
	ReasonSelfReply              Reason = "self_reply"
	ReasonThreadClosed           Reason = "thread_closed"
	ReasonInvalidTransition      Reason = "invalid_transition"
	ReasonSelfAttestation        Reason = "self_attestation"
	ReasonAlreadyAttested        Reason = "already_attested"
	ReasonLimitExceeded          Reason = "limit_exceeded"
	ReasonIdempotencyConflict    Reason = "idempotency_conflict"
	ReasonRateLimited            Reason = "rate_limited"
	ReasonUnavailable            Reason = "unavailable"
)

// ReasonInfo is one row of the table of § 9, as the manifest lists it.
type ReasonInfo struct {
	Reason  Reason `json:"reason"`
	Status  int    `json:"status"`
	Meaning string `json:"meaning"`
}

// Reasons is the table of § 9 in its order.
var Reasons = []ReasonInfo{
	{ReasonInvalidBody, 400, "the request is malformed: an unknown or missing field, a wrong id form, a bad cursor or bad evidence; the message names the field"},
	{ReasonUnauthenticated, 401, "the bearer token is missing, unknown or revoked"},
	{ReasonTokenRightMissing, 403, "the token lacks the right (read, write, lock, verify) the operation needs, or the operation is for humans only"},
	{ReasonThreadAuthorityMissing, 403, "decide, close, defer, reject, obsolete and reopen need authority over the thread: its creator, a lock holder or a human"},
	{ReasonNotFound, 404, "the thread, message, claim or artifact named does not exist"},
	{ReasonPayloadTooLarge, 413, "the request is larger than request_max_bytes (artifacts: artifact_max_bytes), or a new artifact does not fit artifact_bytes_per_identity or artifact_bytes_total"},
	{ReasonSelfReply, 409, "an ask, answer or note may not reply to a message of the same identity and extension"},
	{ReasonThreadClosed, 409, "the thread is closed and confirmed: only reopen is accepted"},
	{ReasonInvalidTransition, 409, "the act is not a transition the state machine allows from the current state"},
	{ReasonSelfAttestation, 409, "an asserter may not attest or verify its own claim"},
	{ReasonAlreadyAttested, 409, "this identity has already attested or verified the claim"},
	{ReasonLimitExceeded, 409, "the thread has reached thread_max_messages or thread_max_claims, the claim claim_max_stances, or the reply would exceed thread_max_depth"},
	{ReasonIdempotencyConflict, 422, "the idempotency key was used before with another operation or another input; nothing was written (a retry sends the same input under the same key)"},
	{ReasonRateLimited, 429, "more than writes_per_minute accepted writes in the last minute, more long polls waiting at once than inbox_waits_per_identity or inbox_waits_max, more heavy tasks (exports, drawings, imports, password checks) at once than this caller's two, or more than failed_auths_per_minute failed authentications from this address; retry after retry_after seconds"},
	{ReasonUnavailable, 503, "the database cannot be reached or did not answer within the request deadline, or every place for this kind of work is taken (PROTOCOL.md § 19); retry after Retry-After seconds"},
}

// Status is the HTTP status that goes with a reason.
func (r Reason) Status() int {
	for _, info := range Reasons {
		if info.Reason == r {
			return info.Status
		}
	}
	return 500
}

// Error is a refusal: a decision of the protocol, carried unchanged to the wire by every
// transport (HTTP body, MCP structuredContent).
type Error struct {
	Reason     Reason `json:"reason"`
	Message    string `json:"message"`
	Status     int    `json:"status"`
	RetryAfter int    `json:"retry_after,omitempty"`
	// RetryHint is the Retry-After of a 503 that knows better than UnavailableRetryAfter
	// when to come back (a refusal for want of a slot, § 19); § 9 puts retry_after in the
	// object for 429 alone, so it travels in the header only.
	RetryHint int `json:"-"`
	// Detail names what exactly is refused, for the pages, which say it in the reader's
	// language (their text "refusal.<Detail>", its fields filled from DetailArgs, pairs of a
	// name and a value); "" when they have no words of their own for it. Never on the wire:
	// § 9's answer is the reason, the message and the status.
	Detail     string `json:"-"`
	DetailArgs []any  `json:"-"`
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.Message }

// Detailed names the refusal's detail and the values its words show (pairs of a name and a
// value), and answers the refusal.
func (e *Error) Detailed(detail string, args ...any) *Error {
	e.Detail, e.DetailArgs = detail, args
	return e
}

// Refuse builds a refusal with a formatted message.
func Refuse(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...), Status: reason.Status()}
}

// AsError finds the refusal in err. Any error that is not a refusal is a fault of the server;
// transports answer it as such without leaking its text.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
