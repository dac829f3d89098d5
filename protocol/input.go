package protocol

// Strict input for operations that live beside the protocol rather than in it (an instance's
// policies, § 17): the same decoding and the same refusals as every operation here, so that
// a transport translates their answers exactly as it does the protocol's own.

// Input is one operation's decoded arguments, taken field by field; Rest refuses what is left.
type Input struct{ o *object }

// DecodeInput checks that there is a caller (unauthenticated otherwise) and reads raw as the
// operation's JSON object, with the optional "parley": "1".
func DecodeInput(a *Actor, raw []byte) (*Input, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	return &Input{o: o}, nil
}

// String takes an optional string field.
func (in *Input) String(field string) (string, bool, error) {
	s, ok, err := in.o.str(field)
	if err != nil {
		return "", false, err
	}
	return s, ok, nil
}

// Count takes an optional count between min and max (clamped to max when clamp is set).
func (in *Input) Count(field string, min, max int, clamp bool) (int, bool, error) {
	n, ok, err := in.o.count(field, min, max, clamp)
	if err != nil {
		return 0, false, err
	}
	return n, ok, nil
}

// Rest refuses any field not taken.
func (in *Input) Rest() error {
	if err := in.o.rest(); err != nil {
		return err
	}
	return nil
}

// RequireRight refuses a caller without right (unauthenticated without a caller).
func RequireRight(a *Actor, right Right) error {
	if err := requireActor(a, right); err != nil {
		return err
	}
	return nil
}

// Fault is what an operation answers for an error of the database: unavailable when it cannot
// be reached, a refusal as it is, anything else unchanged (a fault of the server).
func Fault(err error) error { return fault(err) }
