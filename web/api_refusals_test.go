package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// refusal is one request the API must refuse, prepared on a fresh forum in which Alice has
// opened thread th.
type refusal struct {
	name    string
	limits  func(*protocol.Limits) // nil: the reference limits
	prepare func(f *forum, th string) request
	reason  protocol.Reason
}

// runRefusals runs each case on both databases, each on a forum of its own, and checks the
// answer: the reason's status, § 9's object with that status, JSON.
func runRefusals(t *testing.T, cases []refusal) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					limits := protocol.DefaultLimits()
					if c.limits != nil {
						c.limits(&limits)
					}
					f := newForum(t, storagetest.Open(t, kind), limits)
					th, _ := f.ask(f.alice, "Which port does the server use?")
					req := c.prepare(f, th)
					got := f.do(req)
					wantRefusal(t, got, c.reason)
					if c.reason == protocol.ReasonRateLimited {
						wantRetryAfter(t, got)
					}
				})
			}
		})
	}
}

func wantRefusal(t *testing.T, got *reply, reason protocol.Reason) {
	t.Helper()
	status := reason.Status()
	if got.status != status || got.reason() != string(reason) {
		t.Fatalf("= %d %s, want %d %s", got.status, got.body, status, reason)
	}
	if got.json["status"] != float64(status) || got.at("message") == "" || !jsonContent(got) {
		t.Errorf("the refusal is not § 9's object in JSON: %v %s", got.header, got.body)
	}
	if _, has := got.json["retry_after"]; has != (reason == protocol.ReasonRateLimited) {
		t.Errorf("retry_after belongs to rate_limited alone: %s", got.body)
	}
	if (reason == protocol.ReasonUnauthenticated) != (got.header.Get("WWW-Authenticate") != "") {
		t.Errorf("WWW-Authenticate belongs to 401 alone: %v", got.header)
	}
}

// wantRetryAfter: a 429 says when to retry, in the body and in Retry-After, the same.
func wantRetryAfter(t *testing.T, got *reply) {
	t.Helper()
	header, err := strconv.Atoi(got.header.Get("Retry-After"))
	if err != nil || header < 1 || header > 60 {
		t.Fatalf("Retry-After = %q, want whole seconds within the minute", got.header.Get("Retry-After"))
	}
	if got.json["retry_after"] != float64(header) {
		t.Errorf("retry_after = %v, Retry-After = %d: they differ", got.json["retry_after"], header)
	}
}

// Every reason of § 9 that the core produces today, over HTTP. (self_attestation and
// already_attested belong to the claims of § 12.)
func TestAPIRefusals(t *testing.T) {
	post := func(token, env string) request {
		return request{method: http.MethodPost, target: "/v1/messages", token: token, body: env}
	}
	runRefusals(t, []refusal{
		{name: "invalid_body", reason: protocol.ReasonInvalidBody, prepare: func(f *forum, th string) request {
			return post(f.alice, `{"kind":"shout","thread":"`+th+`","body":"Hey"}`)
		}},
		{name: "unauthenticated", reason: protocol.ReasonUnauthenticated, prepare: func(f *forum, th string) request {
			return request{method: http.MethodGet, target: "/v1/inbox"}
		}},
		{name: "token_right_missing", reason: protocol.ReasonTokenRightMissing, prepare: func(f *forum, th string) request {
			return post(f.reader, `{"kind":"note","thread":"`+th+`","body":"I only read."}`)
		}},
		{name: "thread_authority_missing", reason: protocol.ReasonThreadAuthorityMissing, prepare: func(f *forum, th string) request {
			return post(f.bob, `{"kind":"decide","thread":"`+th+`","body":"8080."}`)
		}},
		{name: "not_found", reason: protocol.ReasonNotFound, prepare: func(f *forum, th string) request {
			return request{method: http.MethodGet, target: "/v1/threads/th_999999", token: f.alice}
		}},
		{name: "payload_too_large", reason: protocol.ReasonPayloadTooLarge, prepare: func(f *forum, th string) request {
			return post(f.alice, `{"kind":"note","thread":"`+th+`","body":"`+strings.Repeat("x", 16385)+`"}`)
		}},
		{name: "self_reply", reason: protocol.ReasonSelfReply, prepare: func(f *forum, th string) request {
			return post(f.alice, `{"kind":"answer","thread":"`+th+`","body":"I answer myself."}`)
		}},
		{name: "thread_closed", reason: protocol.ReasonThreadClosed, prepare: func(f *forum, th string) request {
			f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
			f.send(f.mod, `{"kind":"close","thread":"`+th+`","body":"Settled."}`)
			return post(f.bob, `{"kind":"note","thread":"`+th+`","body":"One more thing."}`)
		}},
		{name: "invalid_transition", reason: protocol.ReasonInvalidTransition, prepare: func(f *forum, th string) request {
			return post(f.alice, `{"kind":"close","thread":"`+th+`","body":"Three steps at once."}`)
		}},
		{name: "limit_exceeded", reason: protocol.ReasonLimitExceeded,
			limits: func(l *protocol.Limits) { l.ThreadMaxMessages = 2 },
			prepare: func(f *forum, th string) request {
				f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
				return post(f.bob, `{"kind":"note","thread":"`+th+`","body":"A third message."}`)
			}},
		{name: "rate_limited", reason: protocol.ReasonRateLimited,
			limits: func(l *protocol.Limits) { l.WritesPerMinute = 2 },
			prepare: func(f *forum, th string) request {
				f.ask(f.alice, "A second question.")
				return post(f.alice, `{"kind":"ask","body":"A third write within the minute."}`)
			}},
		{name: "unavailable", reason: protocol.ReasonUnavailable, prepare: func(f *forum, th string) request {
			if f.db.Kind() != storage.Postgres {
				f.t.Skip("an embedded SQLite file cannot be taken away from a running process; TestAPIUnavailable has the outage on Postgres")
			}
			takeDown(f.t, f.db)
			return request{method: http.MethodGet, target: "/v1/threads/" + th, token: f.alice}
		}},
	})
}

// The checks run in the order of § 9, and the first that fails answers.
func TestAPICheckOrder(t *testing.T) {
	post := func(token, env string) request {
		return request{method: http.MethodPost, target: "/v1/messages", token: token, body: env}
	}
	big := strings.Repeat("x", 16385)
	runRefusals(t, []refusal{
		{name: "too large before no token", reason: protocol.ReasonPayloadTooLarge, prepare: func(f *forum, th string) request {
			return post("", `{"kind":"shout","body":"`+big+`"}`)
		}},
		{name: "too large before an unknown token", reason: protocol.ReasonPayloadTooLarge, prepare: func(f *forum, th string) request {
			return post("parley_unknown", `{"kind":"note","thread":"`+th+`","body":"`+big+`"}`)
		}},
		{name: "no token before a bad body", reason: protocol.ReasonUnauthenticated, prepare: func(f *forum, th string) request {
			return post("", `{"kind":"shout","body":""}`)
		}},
		{name: "no token before a body that is not JSON", reason: protocol.ReasonUnauthenticated, prepare: func(f *forum, th string) request {
			r := post("", `kind=ask&body=hello`)
			r.header = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
			return r
		}},
		{name: "unknown token before a bad body", reason: protocol.ReasonUnauthenticated, prepare: func(f *forum, th string) request {
			return post("parley_unknown", `{"kind":"shout"}`)
		}},
		{name: "no token before a thread that differs from the path", reason: protocol.ReasonUnauthenticated, prepare: func(f *forum, th string) request {
			return request{method: http.MethodPost, target: "/v1/threads/" + th + "/confirm", body: `{"thread":"th_999999"}`}
		}},
		{name: "bad body before the missing right", reason: protocol.ReasonInvalidBody, prepare: func(f *forum, th string) request {
			return post(f.reader, `{"kind":"note","thread":"`+th+`","body":"   "}`)
		}},
		{name: "body not declared JSON before the missing right", reason: protocol.ReasonInvalidBody, prepare: func(f *forum, th string) request {
			r := post(f.reader, `{"kind":"note","thread":"`+th+`","body":"x"}`)
			r.header = map[string]string{"Content-Type": "text/plain"}
			return r
		}},
		{name: "thread that differs from the path before the missing right", reason: protocol.ReasonInvalidBody, prepare: func(f *forum, th string) request {
			return request{method: http.MethodPost, target: "/v1/threads/" + th + "/confirm", token: f.reader, body: `{"thread":"th_999999"}`}
		}},
		{name: "missing right before an unknown thread", reason: protocol.ReasonTokenRightMissing, prepare: func(f *forum, th string) request {
			return post(f.reader, `{"kind":"note","thread":"th_999999","body":"Hello?"}`)
		}},
		{name: "confirm without lock before an unknown thread", reason: protocol.ReasonTokenRightMissing, prepare: func(f *forum, th string) request {
			return request{method: http.MethodPost, target: "/v1/threads/999999/confirm", token: f.alice}
		}},
		{name: "unknown thread before authority", reason: protocol.ReasonNotFound, prepare: func(f *forum, th string) request {
			return post(f.bob, `{"kind":"decide","thread":"th_999999","body":"Mine now."}`)
		}},
		{name: "closed before authority", reason: protocol.ReasonThreadClosed, prepare: func(f *forum, th string) request {
			f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
			f.send(f.mod, `{"kind":"close","thread":"`+th+`","body":"Settled."}`)
			return post(f.bob, `{"kind":"decide","thread":"`+th+`","body":"Overruled."}`)
		}},
		{name: "authority before the transition", reason: protocol.ReasonThreadAuthorityMissing, prepare: func(f *forum, th string) request {
			return post(f.bob, `{"kind":"close","thread":"`+th+`","body":"Three steps, and not mine."}`)
		}},
		{name: "transition before the thread size", reason: protocol.ReasonInvalidTransition,
			limits: func(l *protocol.Limits) { l.ThreadMaxMessages = 1 },
			prepare: func(f *forum, th string) request {
				return post(f.alice, `{"kind":"close","thread":"`+th+`","body":"Three steps."}`)
			}},
		{name: "thread size before the write rate", reason: protocol.ReasonLimitExceeded,
			limits: func(l *protocol.Limits) { l.ThreadMaxMessages, l.WritesPerMinute = 2, 2 },
			prepare: func(f *forum, th string) request {
				f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
				f.ask(f.bob, "Bob's second write.")
				return post(f.bob, `{"kind":"note","thread":"`+th+`","body":"A third message, a third write."}`)
			}},
	})
}
