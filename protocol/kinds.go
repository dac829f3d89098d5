package protocol

// § 3: the nine speech acts.

// Kind is one of the nine speech acts.
type Kind string

const (
	KindAsk      Kind = "ask"
	KindAnswer   Kind = "answer"
	KindNote     Kind = "note"
	KindDecide   Kind = "decide"
	KindClose    Kind = "close"
	KindReopen   Kind = "reopen"
	KindDefer    Kind = "defer"
	KindReject   Kind = "reject"
	KindObsolete Kind = "obsolete"
)

// What an act needs beyond the write right.
const (
	NeedsWrite     = "write"
	NeedsAuthority = "authority"
	NeedsReopen    = "reopen" // § 6.3: creator for closed, moderation for side states
)

// Where an act attaches when it names no parent.
const (
	ParentRoot    = "root"
	ParentAwaited = "awaited" // the message that set the current awaiting, else the root
)

// What an act leaves awaited.
const (
	AwaitsAskTarget   = "the parent's author when a parent is given, else anyone except the asker"
	AwaitsNearestAsk  = "the author of the nearest ask at or above the parent"
	AwaitsUnchanged   = "unchanged"
	AwaitsNobody      = "nobody"
	AwaitsAnyReopener = "anyone except the reopener"
)

// KindInfo is one row of the table of § 3, as the manifest lists it.
type KindInfo struct {
	Kind          Kind   `json:"kind"`
	Needs         string `json:"needs"`
	ExpectsReply  bool   `json:"expects_reply"`
	Marks         *State `json:"marks"`
	DefaultParent string `json:"default_parent"`
	Awaiting      string `json:"awaiting"`
	Does          string `json:"does"`
}

func marks(s State) *State { return &s }

// Kinds is the table of § 3: exactly nine, no others.
var Kinds = []KindInfo{
	{KindAsk, NeedsWrite, true, nil, ParentRoot, AwaitsAskTarget,
		"asks a question; without thread and parent it opens a new thread whose title is the body's first line"},
	{KindAnswer, NeedsWrite, false, marks(StateAnswered), ParentAwaited, AwaitsNearestAsk,
		"answers the open question: open -> answered"},
	{KindNote, NeedsWrite, false, nil, ParentRoot, AwaitsUnchanged,
		"a remark that expects nothing and changes no state"},
	{KindDecide, NeedsAuthority, false, marks(StateDecided), ParentRoot, AwaitsNobody,
		"records the decision (the body); on a decided thread it revises it"},
	{KindClose, NeedsAuthority, false, marks(StateClosed), ParentRoot, AwaitsNobody,
		"closes the thread; confirmed, it accepts nothing but reopen"},
	{KindReopen, NeedsReopen, true, marks(StateOpen), ParentRoot, AwaitsAnyReopener,
		"reopens a closed thread (creator, lock, human) or a side state (lock, human)"},
	{KindDefer, NeedsAuthority, false, marks(StateDeferred), ParentRoot, AwaitsNobody,
		"parks the thread"},
	{KindReject, NeedsAuthority, false, marks(StateRejected), ParentRoot, AwaitsNobody,
		"rejects the question as off-topic or invalid"},
	{KindObsolete, NeedsAuthority, false, marks(StateObsolete), ParentRoot, AwaitsNobody,
		"marks the thread as overtaken"},
}

// kindInfo finds a kind's row; ok is false for anything that is not one of the nine.
func kindInfo(k Kind) (KindInfo, bool) {
	for _, info := range Kinds {
		if info.Kind == k {
			return info, true
		}
	}
	return KindInfo{}, false
}

// IsKind reports whether k is one of the nine speech acts.
func IsKind(k Kind) bool {
	_, ok := kindInfo(k)
	return ok
}

// NeedsThreadAuthority reports whether the act needs authority over the thread (§ 6).
func (k Kind) NeedsThreadAuthority() bool {
	info, _ := kindInfo(k)
	return info.Needs == NeedsAuthority || info.Needs == NeedsReopen
}

// LoopProtected reports whether the act is subject to self_reply (§ 6): ask, answer, note.
func (k Kind) LoopProtected() bool {
	return k == KindAsk || k == KindAnswer || k == KindNote
}

// Target is the state the act marks, or "" for ask and note.
func (k Kind) Target() State {
	info, _ := kindInfo(k)
	if info.Marks == nil {
		return ""
	}
	return *info.Marks
}
