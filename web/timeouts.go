package web

import "time"

// Timeouts bound how long the server waits on a client; the zero value of a field means its
// default (docs/reliability.md says what each protects against).
type Timeouts struct {
	// Read bounds reading one request, headers and body: a client that sends slowly or not
	// at all is cut off.
	Read time.Duration
	// Write bounds writing one answer, from when it is ready: a client that does not read
	// its answers (pipelining and never reading) is cut off instead of holding them in
	// memory. A long poll's wait comes before its answer is ready and does not count.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next request.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts of the HTTP server unless told otherwise.
var DefaultTimeouts = Timeouts{Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}

func (t Timeouts) withDefaults() Timeouts {
	if t.Read <= 0 {
		t.Read = DefaultTimeouts.Read
	}
	if t.Write <= 0 {
		t.Write = DefaultTimeouts.Write
	}
	if t.Idle <= 0 {
		t.Idle = DefaultTimeouts.Idle
	}
	return t
}
