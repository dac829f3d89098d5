package protocol

// § 6: who may do what in a thread.

// ThreadFacts are what the rules need to know of a thread.
type ThreadFacts struct {
	State   State
	Locked  bool   // closed and confirmed
	Creator string // identity (the line) that opened the thread
}

// CheckAuthority answers thread_authority_missing when the actor may not perform kind.
// ask, answer and note need no authority.
func CheckAuthority(a *Actor, t ThreadFacts, kind Kind) *Error {
	if !kind.NeedsThreadAuthority() || a.Human || a.Rights.Has(RightLock) {
		return nil
	}
	if kind == KindReopen && t.State.IsSide() {
		return Refuse(ReasonThreadAuthorityMissing, "reopening a %s thread is moderation: it needs the lock right or a human", t.State)
	}
	if t.Creator == a.Identity {
		return nil
	}
	return Refuse(ReasonThreadAuthorityMissing, "%s needs authority over the thread: its creator %s, a lock holder or a human", kind, t.Creator)
}

// CheckSelfReply is the loop protection of § 6: the same identity and extension may not ask,
// answer or note on a message it wrote itself. Humans are exempt.
func CheckSelfReply(a *Actor, extension string, kind Kind, parentIdentity, parentExtension string) *Error {
	if a.Human || !kind.LoopProtected() {
		return nil
	}
	if parentIdentity == a.Identity && parentExtension == extension {
		return Refuse(ReasonSelfReply, "%s would reply to a message of the same identity and extension (%s, %q); another extension or another identity may", kind, a.Identity, extension)
	}
	return nil
}

// Marking is how a state set by an actor counts (§ 5).
type Marking struct {
	Origin    string // OriginUser or OriginLLM
	Confirmed bool   // a human's or a lock holder's state is confirmed at once
}

// MarkingOf tells how the actor's states count.
func MarkingOf(a *Actor) Marking {
	switch {
	case a.Human:
		return Marking{Origin: OriginUser, Confirmed: true}
	case a.Rights.Has(RightLock):
		return Marking{Origin: OriginLLM, Confirmed: true}
	default:
		return Marking{Origin: OriginLLM, Confirmed: false}
	}
}
