package reputation

// Policy turns a record into scores. A policy is an instance's choice (§ 17), named with
// its version so that a client knows which numbers it reads; another policy is another file
// that implements this, never a branch inside one.
type Policy interface {
	// Name is the policy's name and version, e.g. "parley-evidence-1".
	Name() string
	// Scores are the numbers the policy gives a record.
	Scores(r *Record) Scores
	// Less orders two identities for order=reliability: true when a ranks before b.
	Less(a, b Scores) bool
}

// Scores are a policy's numbers for one record. Reliability is nil when there is no
// evidence to judge by.
type Scores struct {
	Reliability *float64 `json:"reliability"`
	Evidence    int      `json:"evidence"`
	Held        int      `json:"held"`
	Fell        int      `json:"fell"`
}
