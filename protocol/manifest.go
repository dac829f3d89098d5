package protocol

// § 8: the manifest — everything needed to speak without documentation.

// Manifest is the self-description of this instance.
type Manifest struct {
	Parley      string           `json:"parley"`
	Server      ServerInfo       `json:"server"`
	Realm       string           `json:"realm"`
	RealmKey    string           `json:"realm_key,omitempty"`
	Limits      Limits           `json:"limits"`
	Envelope    EnvelopeInfo     `json:"envelope"`
	Kinds       []KindInfo       `json:"kinds"`
	States      []State          `json:"states"`
	SideStates  []State          `json:"side_states"`
	Transitions []TransitionInfo `json:"transitions"`
	Rules       []string         `json:"rules"`
	Rights      []Right          `json:"rights"`
	Reasons     []ReasonInfo     `json:"reasons"`
	CheckOrder  []string         `json:"check_order"`
	Profiles    []ProfileInfo    `json:"profiles"`
	// Policies are the instance's own policies (§ 17), apart from the profiles: no rule of the
	// protocol depends on them.
	Policies   []PolicyInfo `json:"policies"`
	Transports Transports   `json:"transports"`
	You        *You         `json:"you,omitempty"`
}

// ServerInfo names the software.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// EnvelopeInfo describes the fields of an envelope (§ 2).
type EnvelopeInfo struct {
	Fields      map[string]string `json:"fields"`
	ServerSet   []string          `json:"server_set"`
	IDForms     map[string]string `json:"id_forms"`
	Extension   string            `json:"extension_pattern"`
	HandleRegex string            `json:"handle_pattern"`
}

// ProfileInfo names an optional profile this instance implements.
type ProfileInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	About   string `json:"about"`
	// Parameters say how the profile is used and which limits rule it (§ 13's profiles).
	Parameters map[string]string `json:"parameters,omitempty"`
	// Dialectic is the description of the dialectic profile (§ 12); nil for the others.
	*Dialectic
}

// PolicyInfo names one policy of this instance and the version in force (§ 17).
type PolicyInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Transports are where the two bindings live.
type Transports struct {
	MCP  string `json:"mcp"`
	HTTP string `json:"http"`
}

// You is the caller, present when the request carries a valid token.
type You struct {
	Identity string   `json:"identity"`
	Rights   []string `json:"rights"`
	Label    *string  `json:"label"`
	Human    bool     `json:"human"`
	// Rooms are the rooms a scoped token reaches (§ 16); absent for one that reaches every
	// room.
	Rooms []string `json:"rooms,omitempty"`
}

// profiles lists the optional profiles that are implemented; each adds itself here.
var profiles []ProfileInfo

// Manifest describes this instance, and the caller when a is not nil.
func (s *Service) Manifest(a *Actor) *Manifest {
	m := &Manifest{
		Parley:   "1",
		Server:   ServerInfo{Name: "parley", Version: s.version},
		Realm:    s.realm,
		RealmKey: s.realmKeyDID(),
		Limits:   s.limits,
		Envelope: EnvelopeInfo{
			Fields: map[string]string{
				"parley":     `optional; the string "1"`,
				"kind":       "required; one of the nine kinds",
				"thread":     "th_<n>, <n> or a string of digits; required except for an ask that opens a thread; without it the thread is the parent's",
				"parent":     "msg_<n>, <n> or a string of digits; must belong to the thread; default: see kinds[].default_parent",
				"from":       "optional object with only extension (identity is set by the server and ignored)",
				"body":       "required; 1 to limits.body_max_chars code points, not only white space",
				"provenance": "optional object with optional strings model and client, each at most limits.provenance_field_max_chars",
			},
			ServerSet:   []string{"id", "from.identity", "author_kind", "created_at", "awaiting"},
			IDForms:     map[string]string{"thread": "th_<n>", "message": "msg_<n>", "event": "ev_<n>", "claim": "cl_<n>"},
			Extension:   `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, or "" for the default extension`,
			HandleRegex: `^[a-z0-9][a-z0-9._-]{0,63}$`,
		},
		Kinds:       Kinds,
		States:      MainStates,
		SideStates:  SideStates,
		Transitions: Transitions(),
		Rules: []string{
			"There is always exactly one open move: a message's awaiting names whose turn it is, and the thread's awaiting is its last message's (a note copies it).",
			"Forward only: open -> answered -> decided -> closed, at most two steps at once; an act on its own state is accepted and changes nothing.",
			"Side states (deferred, obsolete, rejected) are end points: only reopen by a lock holder or a human leaves them; ask, answer and note are accepted there and change no state.",
			"A confirmed closed thread accepts nothing but reopen (thread_closed); a proposed closed does not lock.",
			"A state set by a model without lock is a proposal (state_origin llm, state_confirmed_at null); a lock holder's or a human's is confirmed; confirm (lock or human) confirms a proposal; mark (humans only) re-marks with any state.",
			"Authority over a thread: its creator (the identity, any extension), any lock holder, any human. Reopening a side state needs lock or a human.",
			"Loop protection: the same identity and extension may not ask, answer or note on a message it wrote itself (self_reply); another extension may.",
			"A human's decide, close, defer, reject, obsolete and reopen apply from any state; humans are not rate-limited and not subject to self_reply.",
		},
		Rights:     AllRights,
		Reasons:    Reasons,
		CheckOrder: []string{"payload_too_large", "unauthenticated", "invalid_body", "token_right_missing", "not_found", "thread_closed", "thread_authority_missing", "self_reply", "invalid_transition", "limit_exceeded", "rate_limited"},
		Profiles:   append([]ProfileInfo{}, profiles...),
		Policies:   append([]PolicyInfo{}, s.policies...),
		Transports: Transports{MCP: "/mcp", HTTP: "/v1"},
	}
	if a != nil {
		you := &You{Identity: a.Identity, Rights: a.Rights.List(), Human: a.Human}
		if a.Rights.Has(RightLock) && !a.Human {
			label := a.ModerationLabel()
			you.Label = &label
		}
		m.You = you
	}
	return m
}
