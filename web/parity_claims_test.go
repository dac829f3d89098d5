package web_test

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// The parity cases of the dialectic profile (§ 12): every claim operation, accepted, and
// every refusal it gives. In each forum Alice has asked $th; the prepared claims are cl_1,
// cl_2, … in the order they are asserted.
func claimParityCases() []parityCase {
	const proof = `[{"kind":"url","ref":"https://example.org/run/1"}]`
	asserted := func(f *forum, th, _ string) {
		f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"parley listens on 8080","evidence":`+proof+`}`), http.StatusCreated)
	}
	supported := func(f *forum, th, msg string) {
		asserted(f, th, msg)
		f.must(f.post("/v1/claims/cl_1/attest", f.bob, `{"evidence":`+proof+`}`), http.StatusOK)
	}
	verifiedAndRefuted := func(f *forum, th, msg string) {
		supported(f, th, msg)
		f.must(f.post("/v1/claims/cl_1/verify", f.human, `{"note":"ran it"}`), http.StatusOK)
		f.must(f.post("/v1/claims/cl_1/refute", f.mod, `{"evidence":`+proof+`,"body":"8081 since 1.2"}`), http.StatusOK)
		f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"8081","evidence":`+proof+`}`), http.StatusCreated)
		f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"8081 since 1.2","evidence":`+proof+`,"supersedes":["cl_2"]}`), http.StatusCreated)
	}
	closed := func(f *forum, th, msg string) {
		asserted(f, th, msg)
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
		f.send(f.mod, `{"kind":"close","thread":"`+th+`","body":"Settled."}`)
	}
	return []parityCase{
		{name: "claim: assert", as: "alice", tool: "claim_assert", args: `{"parley":"1","thread":"$th","parent":"$msg","from":{"extension":"w1"},"statement":"8080","evidence":` + proof + `,"valid_until":"2999-01-01T00:00:00Z"}`, want: "ok"},
		{name: "claim: attest", as: "bob", prepare: asserted, tool: "claim_attest", args: `{"claim":"cl_1","evidence":` + proof + `,"note":"reproduced"}`, want: "ok"},
		{name: "claim: refute", as: "bob", prepare: supported, tool: "claim_refute", args: `{"claim":"cl_1","evidence":` + proof + `,"body":"8081"}`, want: "ok"},
		{name: "claim: verify", as: "human", prepare: supported, tool: "claim_verify", args: `{"claim":"1"}`, want: "ok"},
		{name: "claim: read", as: "reader", prepare: verifiedAndRefuted, tool: "claim_read", args: `{"claim":"cl_1"}`, want: "ok"},
		{name: "claim: a thread's graph", as: "reader", prepare: verifiedAndRefuted, tool: "claim_graph", args: `{"thread":"$th"}`, want: "ok"},
		{name: "claim: the forum's graph", as: "reader", prepare: verifiedAndRefuted, tool: "claim_graph", args: `{}`, want: "ok"},
		{name: "claim: the graph as GraphML", as: "reader", prepare: verifiedAndRefuted, tool: "claim_graph", args: `{"format":"graphml"}`, want: "ok"},
		{name: "claim: the graph as DOT", as: "reader", prepare: verifiedAndRefuted, tool: "claim_graph", args: `{"thread":"$th","format":"dot"}`, want: "ok"},
		{name: "claim: the graph as AIF", as: "reader", prepare: verifiedAndRefuted, tool: "claim_graph", args: `{"format":"aif"}`, want: "ok"},

		{name: "claim: bad evidence", as: "alice", tool: "claim_assert", args: `{"thread":"$th","statement":"s","evidence":[{"kind":"url","ref":"not a url"}]}`, want: "invalid_body"},
		{name: "claim: a graph format unknown", as: "reader", tool: "claim_graph", args: `{"format":"svg"}`, want: "invalid_body"},
		{name: "claim: a graph cursor the server never gave", as: "reader", tool: "claim_graph", args: `{"thread":"$th","cursor":"x"}`, want: "invalid_body"},
		{name: "claim: read without a token", tool: "claim_read", args: `{"claim":"cl_1"}`, want: "unauthenticated"},
		{name: "claim: verify without the verify right", as: "mod", prepare: supported, tool: "claim_verify", args: `{"claim":"cl_1"}`, want: "token_right_missing"},
		{name: "claim: an unknown claim", as: "bob", tool: "claim_attest", args: `{"claim":"cl_99","evidence":` + proof + `}`, want: "not_found"},
		{name: "claim: on a closed thread", as: "bob", prepare: closed, tool: "claim_refute", args: `{"claim":"cl_1","evidence":` + proof + `,"body":"no"}`, want: "thread_closed"},
		{name: "claim: superseding without authority", as: "bob", prepare: asserted, tool: "claim_assert", args: `{"thread":"$th","statement":"8081","evidence":` + proof + `,"supersedes":["cl_1"]}`, want: "thread_authority_missing"},
		{name: "claim: attesting one's own", as: "alice", prepare: asserted, tool: "claim_attest", args: `{"claim":"cl_1","evidence":` + proof + `}`, want: "self_attestation"},
		{name: "claim: attesting twice", as: "bob", prepare: supported, tool: "claim_attest", args: `{"claim":"cl_1","evidence":` + proof + `}`, want: "already_attested"},
		{name: "claim: verifying what is unverified", as: "human", prepare: asserted, tool: "claim_verify", args: `{"claim":"cl_1"}`, want: "invalid_transition"},
		{name: "claim: an over-long request", as: "bob", tool: "claim_assert", args: `{"thread":"$th","evidence":` + proof + `,"statement":"` + strings.Repeat("x", protocol.DefaultLimits().RequestMaxBytes) + `"}`, want: "payload_too_large"},
		// Alice's ask spent her one write of the minute.
		{name: "claim: too many writes", as: "alice", limits: func(l *protocol.Limits) { l.WritesPerMinute = 1 },
			tool: "claim_assert", args: `{"thread":"$th","statement":"8080","evidence":` + proof + `}`, want: "rate_limited"},
	}
}

// graphFormat is the format a claim_graph case asks for ("" for other tools).
func graphFormat(c parityCase) string {
	if c.tool != "claim_graph" {
		return ""
	}
	var args struct{ Format string }
	_ = json.Unmarshal([]byte(c.args), &args)
	if args.Format == "" {
		return "json"
	}
	return args.Format
}
