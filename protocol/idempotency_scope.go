package protocol

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// § 19 "Replays keep their scope": a replay answers only a caller who could make the same
// request now. A key belongs to an identity, but an identity speaks through several tokens —
// one that writes, one that only reads, one scoped to some rooms — and a replay must not let
// a narrower one through a door a wider one opened (a read token of alice's scoped to room
// alpha resending alice's keyed ask in room beta). So each key keeps what its writer could do
// (its caller: rights and the rooms its token is scoped to), and Idempotently gives the first
// answer only when
//
//   - the request ran through every check to its key (errKeyTaken): this caller could make it
//     now; or
//   - it was refused for what the first write changed (self_reply, thread_closed,
//     invalid_transition, a rate …), not for who the caller is, and the caller holds every
//     right and reaches every room its writer did.
//
// Otherwise the request is answered as a new one: with its own refusal.

// humanCaller is the caller of a human's write: every right, every room.
const humanCaller = "human"

// callerOf is what a may do, as a key keeps it: "human", or its rights and the rooms its token
// is scoped to ("*" for every room), "read,write;*" or "read,write;2,5".
func callerOf(a *Actor) string {
	if a.Human {
		return humanCaller
	}
	rooms := "*"
	if a.Scoped() {
		ids := slices.Sorted(slices.Values(a.Rooms))
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.FormatInt(id, 10)
		}
		rooms = strings.Join(parts, ",")
	}
	return a.Rights.String() + ";" + rooms
}

// covers reports whether a may do everything that the key's writer, caller, could: every
// right it held, in every room it reached. A key without a caller (written before callers
// were kept) is covered by nobody.
func covers(a *Actor, caller string) bool {
	if caller == humanCaller {
		return a.Human
	}
	rights, rooms, ok := strings.Cut(caller, ";")
	if !ok {
		return false
	}
	for _, r := range strings.Split(rights, ",") {
		if r != "" && !a.Can(Right(r)) {
			return false
		}
	}
	if !a.Scoped() {
		return true
	}
	if rooms == "*" {
		return false
	}
	for _, r := range strings.Split(rooms, ",") {
		id, err := strconv.ParseInt(r, 10, 64)
		if err != nil || !slices.Contains(a.Rooms, id) {
			return false
		}
	}
	return true
}

// refusedForWho reports whether err refuses the caller for who it is or what it reaches — no
// token, a right it lacks, no authority over the thread, a thread or room outside its rooms
// (not_found, § 16) — rather than for what the first write changed.
func refusedForWho(err error) bool {
	e, ok := AsError(err)
	if !ok {
		return false
	}
	switch e.Reason {
	case ReasonUnauthenticated, ReasonTokenRightMissing, ReasonThreadAuthorityMissing, ReasonNotFound:
		return true
	}
	return false
}

// mayReplay reports whether a, whose request under the key ended in err, is given the first
// answer, which a writer of caller wrote.
func mayReplay(a *Actor, caller string, err error) bool {
	if errors.Is(err, errKeyTaken) {
		return true
	}
	return !refusedForWho(err) && covers(a, caller)
}
