package protocol_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 12, rule by rule and reason by reason, on both databases. Every case runs on a forum of
// its own: alice opens thread $th (its root $msg; bob's answer $ans), the setup steps run, then
// the step under test, which must be refused for want, or accepted with the claim in state
// want. The claims the setup asserts are $c1, $c2, … in order; $other is a thread of bob's.

type claimCase struct {
	name   string
	quorum int // verify_quorum; 0: the reference 1
	rate   int // writes_per_minute, all spent by the step's caller before it; 0: generous
	setup  []string
	step   string // "who op input"
	want   string // a reason, or the claim's state after the step
}

var claimActors = map[string]*protocol.Actor{
	"nobody": nil, "reader": agent("reader", "read"),
	"alice": agent("alice", "read,write"), "bob": agent("bob", "read,write"), "carol": agent("carol", "read,write"),
	"vera": agent("vera", "read,write,verify"), "vic": agent("vic", "read,verify"),
	"mod": agent("mod", "read,write,lock"), "ada": human("ada"),
}

const (
	assertC = `assert {"thread":"$th","statement":"parley serve listens on 8080","evidence":P}`
	closeTh = "mod send " + `{"kind":"close","thread":"$th","body":"closed"}`
)

func claimCases() []claimCase {
	ev := func(items string) string { return `{"thread":"$th","statement":"s","evidence":` + items + `}` }
	supported := []string{"alice " + assertC, "bob attest {\"claim\":\"$c1\",\"evidence\":P}"}
	verified := append(append([]string{}, supported...), "vera verify {\"claim\":\"$c1\"}")
	refuted := []string{"alice " + assertC, "bob refute {\"claim\":\"$c1\",\"evidence\":P,\"body\":\"it listens on 8081\"}"}
	superseded := []string{"alice " + assertC, "alice assert {\"thread\":\"$th\",\"statement\":\"8081\",\"evidence\":P,\"supersedes\":[\"$c1\"]}"}
	long := strings.Repeat("x", 2049)
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"kind":"note","ref":"n"},`, 17), ",") + "]"
	return []claimCase{
		// assert and its evidence, kind by kind.
		{name: "assert", step: "alice " + assertC, want: "unverified"},
		{name: "assert anchored in a message", step: `bob assert {"thread":"$th","parent":"$ans","statement":"s","evidence":P}`, want: "unverified"},
		{name: "assert from an extension with provenance", step: `bob assert {"parley":"1","thread":"$th","from":{"extension":"w1"},"statement":"s","evidence":P,"provenance":{"model":"m"}}`, want: "unverified"},
		{name: "evidence of every free kind", step: "bob assert " + ev(`[{"kind":"log","ref":"l"},{"kind":"reproducer","ref":"go test ./..."},{"kind":"note","ref":"n","note":"why"},{"kind":"other","ref":"o"}]`), want: "unverified"},
		{name: "evidence: hashes and commits", step: "bob assert " + ev(`[{"kind":"hash","ref":"sha1:`+strings.Repeat("a", 40)+`"},{"kind":"hash","ref":"sha512:`+strings.Repeat("b", 128)+`"},{"kind":"commit","ref":"parley@abcdef1"},{"kind":"commit","ref":"`+strings.Repeat("c", 40)+`"}]`), want: "unverified"},
		{name: "evidence missing", step: `bob assert {"thread":"$th","statement":"s"}`, want: "invalid_body"},
		{name: "evidence empty", step: "bob assert " + ev(`[]`), want: "invalid_body"},
		{name: "evidence not a list", step: "bob assert " + ev(`{"kind":"url"}`), want: "invalid_body"},
		{name: "evidence of an unknown kind", step: "bob assert " + ev(`[{"kind":"vote","ref":"yes"}]`), want: "invalid_body"},
		{name: "evidence url not absolute", step: "bob assert " + ev(`[{"kind":"url","ref":"/run/1"}]`), want: "invalid_body"},
		{name: "evidence url not http", step: "bob assert " + ev(`[{"kind":"url","ref":"ftp://example.org/x"}]`), want: "invalid_body"},
		{name: "evidence hash too short", step: "bob assert " + ev(`[{"kind":"hash","ref":"sha256:abc"}]`), want: "invalid_body"},
		{name: "evidence hash of an unknown algorithm", step: "bob assert " + ev(`[{"kind":"hash","ref":"md5:`+strings.Repeat("a", 32)+`"}]`), want: "invalid_body"},
		{name: "evidence commit not hex", step: "bob assert " + ev(`[{"kind":"commit","ref":"main"}]`), want: "invalid_body"},
		{name: "evidence artifact not stored", step: "bob assert " + ev(`[{"kind":"artifact","ref":"sha256:`+strings.Repeat("d", 64)+`"}]`), want: "invalid_body"},
		{name: "evidence ref missing", step: "bob assert " + ev(`[{"kind":"note"}]`), want: "invalid_body"},
		{name: "evidence ref too long", step: "bob assert " + ev(`[{"kind":"note","ref":"`+long+`"}]`), want: "invalid_body"},
		{name: "evidence note too long", step: "bob assert " + ev(`[{"kind":"note","ref":"n","note":"`+strings.Repeat("x", 501)+`"}]`), want: "invalid_body"},
		{name: "evidence item with an unknown field", step: "bob assert " + ev(`[{"kind":"note","ref":"n","weight":3}]`), want: "invalid_body"},
		{name: "too many evidence items", step: "bob assert " + ev(many), want: "invalid_body"},
		{name: "statement empty", step: `bob assert {"thread":"$th","statement":"  ","evidence":P}`, want: "invalid_body"},
		{name: "statement too long", step: `bob assert {"thread":"$th","statement":"` + strings.Repeat("x", 501) + `","evidence":P}`, want: "invalid_body"},
		{name: "valid_until in the past", step: `bob assert {"thread":"$th","statement":"s","evidence":P,"valid_until":"2020-01-01T00:00:00Z"}`, want: "invalid_body"},
		{name: "valid_until not a time", step: `bob assert {"thread":"$th","statement":"s","evidence":P,"valid_until":"tomorrow"}`, want: "invalid_body"},
		{name: "valid_until in the future", step: `bob assert {"thread":"$th","statement":"s","evidence":P,"valid_until":"2999-01-01T00:00:00Z"}`, want: "unverified"},
		{name: "an unknown field", step: `bob assert {"thread":"$th","statement":"s","evidence":P,"votes":3}`, want: "invalid_body"},
		{name: "a thread of the wrong form", step: `bob assert {"thread":"cl_1","statement":"s","evidence":P}`, want: "invalid_body"},
		{name: "assert without a token", step: "nobody " + assertC, want: "unauthenticated"},
		{name: "assert without write", step: "reader " + assertC, want: "token_right_missing"},
		{name: "assert in an unknown thread", step: `bob assert {"thread":"th_999","statement":"s","evidence":P}`, want: "not_found"},
		{name: "anchor in another thread", step: `bob assert {"thread":"$th","parent":"$otherroot","statement":"s","evidence":P}`, want: "not_found"},
		{name: "superseding an unknown claim", step: `bob assert {"thread":"$th","statement":"s","evidence":P,"supersedes":["cl_999"]}`, want: "not_found"},
		{name: "assert on a closed thread", setup: []string{closeTh}, step: "bob " + assertC, want: "thread_closed"},
		{name: "assert on a proposed closed thread", setup: []string{`alice send {"kind":"close","thread":"$th","body":"c"}`}, step: "bob " + assertC, want: "unverified"},

		// attest.
		{name: "attest", setup: []string{"alice " + assertC}, step: `bob attest {"claim":"$c1","evidence":P,"note":"reproduced"}`, want: "supported"},
		{name: "attest a supported claim adds support", setup: supported, step: `carol attest {"claim":"$c1","evidence":P}`, want: "supported"},
		{name: "attest a verified claim adds support", setup: verified, step: `carol attest {"claim":"$c1","evidence":P}`, want: "verified"},
		{name: "attest without evidence is a vote", setup: []string{"alice " + assertC}, step: `bob attest {"claim":"$c1"}`, want: "invalid_body"},
		{name: "attest with a body", setup: []string{"alice " + assertC}, step: `bob attest {"claim":"$c1","evidence":P,"body":"b"}`, want: "invalid_body"},
		{name: "attest one's own claim", setup: []string{"alice " + assertC}, step: `alice attest {"claim":"$c1","evidence":P}`, want: "self_attestation"},
		{name: "attest one's own claim from another extension", setup: []string{"alice " + assertC}, step: `alice attest {"claim":"$c1","from":{"extension":"w2"},"evidence":P}`, want: "self_attestation"},
		{name: "attest twice", setup: supported, step: `bob attest {"claim":"$c1","from":{"extension":"w2"},"evidence":P}`, want: "already_attested"},
		{name: "attest a refuted claim", setup: refuted, step: `carol attest {"claim":"$c1","evidence":P}`, want: "invalid_transition"},
		{name: "attest a superseded claim", setup: superseded, step: `carol attest {"claim":"$c1","evidence":P}`, want: "invalid_transition"},
		{name: "attest an unknown claim", step: `bob attest {"claim":"cl_999","evidence":P}`, want: "not_found"},
		{name: "attest without write", setup: []string{"alice " + assertC}, step: `vic attest {"claim":"$c1","evidence":P}`, want: "token_right_missing"},
		{name: "attest on a closed thread", setup: []string{"alice " + assertC, closeTh}, step: `bob attest {"claim":"$c1","evidence":P}`, want: "thread_closed"},
		{name: "attest by a lock holder", setup: []string{"alice " + assertC}, step: `mod attest {"claim":"$c1","evidence":P}`, want: "supported"},

		// verify and the quorum.
		{name: "verify", setup: supported, step: `vera verify {"claim":"$c1","evidence":P,"note":"ran it"}`, want: "verified"},
		{name: "verify by a verifier that cannot write", setup: supported, step: `vic verify {"claim":"$c1"}`, want: "verified"},
		{name: "verify by a human", setup: supported, step: `ada verify {"claim":"$c1"}`, want: "verified"},
		{name: "verify without the verify right", setup: supported, step: `carol verify {"claim":"$c1"}`, want: "token_right_missing"},
		{name: "verify an unverified claim", setup: []string{"alice " + assertC}, step: `vera verify {"claim":"$c1"}`, want: "invalid_transition"},
		{name: "verify one's own claim", setup: []string{"vera " + assertC, "bob attest {\"claim\":\"$c1\",\"evidence\":P}"}, step: `vera verify {"claim":"$c1"}`, want: "self_attestation"},
		{name: "verify a refuted claim", setup: refuted, step: `vera verify {"claim":"$c1"}`, want: "invalid_transition"},
		{name: "verify with bad evidence", setup: supported, step: `vera verify {"claim":"$c1","evidence":[{"kind":"url","ref":"nope"}]}`, want: "invalid_body"},
		{name: "quorum 2: the first verifier", quorum: 2, setup: supported, step: `vera verify {"claim":"$c1"}`, want: "supported"},
		{name: "quorum 2: the second verifier seals", quorum: 2, setup: append(append([]string{}, supported...), `vera verify {"claim":"$c1"}`), step: `vic verify {"claim":"$c1"}`, want: "verified"},
		{name: "quorum 2: the same verifier twice", quorum: 2, setup: append(append([]string{}, supported...), `vera verify {"claim":"$c1"}`), step: `vera verify {"claim":"$c1","from":{"extension":"w2"}}`, want: "already_attested"},
		{name: "verify a verified claim", setup: verified, step: `vic verify {"claim":"$c1"}`, want: "invalid_transition"},

		// refute: the Popperian asymmetry.
		{name: "refute an unverified claim", setup: []string{"alice " + assertC}, step: `bob refute {"claim":"$c1","evidence":P,"body":"it is 8081"}`, want: "refuted"},
		{name: "refute a supported claim", setup: supported, step: `carol refute {"claim":"$c1","evidence":P,"body":"it is 8081"}`, want: "refuted"},
		{name: "refute topples a verified claim", setup: verified, step: `carol refute {"claim":"$c1","evidence":P,"body":"it is 8081"}`, want: "refuted"},
		{name: "refute a refuted claim adds a refutation", setup: refuted, step: `bob refute {"claim":"$c1","evidence":P,"body":"and again"}`, want: "refuted"},
		{name: "the asserter retracts with proof", setup: supported, step: `alice refute {"claim":"$c1","evidence":P,"body":"I was wrong"}`, want: "refuted"},
		{name: "refute without proof", setup: []string{"alice " + assertC}, step: `bob refute {"claim":"$c1","body":"no"}`, want: "invalid_body"},
		{name: "refute without a body", setup: []string{"alice " + assertC}, step: `bob refute {"claim":"$c1","evidence":P}`, want: "invalid_body"},
		{name: "refute a superseded claim", setup: superseded, step: `bob refute {"claim":"$c1","evidence":P,"body":"no"}`, want: "invalid_transition"},

		// supersession.
		{name: "the asserter supersedes", setup: []string{"alice " + assertC}, step: `alice assert {"thread":"$th","statement":"8081","evidence":P,"supersedes":["$c1"]}`, want: "unverified"},
		{name: "the thread's creator supersedes another's claim", setup: []string{"bob " + assertC}, step: `alice assert {"thread":"$th","statement":"8081","evidence":P,"supersedes":["$c1"]}`, want: "unverified"},
		{name: "a lock holder supersedes", setup: []string{"bob " + assertC}, step: `mod assert {"thread":"$th","statement":"8081","evidence":P,"supersedes":["$c1"]}`, want: "unverified"},
		{name: "supersede without authority", setup: []string{"alice " + assertC}, step: `bob assert {"thread":"$th","statement":"8081","evidence":P,"supersedes":["$c1"]}`, want: "thread_authority_missing"},
		{name: "supersede a superseded claim", setup: superseded, step: `alice assert {"thread":"$th","statement":"8082","evidence":P,"supersedes":["$c1"]}`, want: "invalid_transition"},
		{name: "supersede a refuted claim", setup: refuted, step: `alice assert {"thread":"$th","statement":"8082","evidence":P,"supersedes":["$c1"]}`, want: "invalid_transition"},
		{name: "supersede a claim of another thread", setup: []string{`bob assert {"thread":"$other","statement":"s","evidence":P}`}, step: `bob assert {"thread":"$th","statement":"s","evidence":P,"supersedes":["$c1"]}`, want: "invalid_transition"},
		{name: "supersede the same claim twice in one list", setup: []string{"alice " + assertC}, step: `alice assert {"thread":"$th","statement":"s","evidence":P,"supersedes":["$c1","$c1"]}`, want: "invalid_body"},

		// mark and read.
		{name: "a human re-marks", setup: refuted, step: `ada mark {"claim":"$c1","state":"supported"}`, want: "supported"},
		{name: "a human undoes a supersession", setup: superseded, step: `ada mark {"claim":"$c1","state":"unverified"}`, want: "unverified"},
		{name: "an agent marks", setup: []string{"alice " + assertC}, step: `mod mark {"claim":"$c1","state":"verified"}`, want: "token_right_missing"},
		{name: "mark as superseded", setup: []string{"alice " + assertC}, step: `ada mark {"claim":"$c1","state":"superseded"}`, want: "invalid_body"},
		{name: "mark on a closed thread", setup: []string{"alice " + assertC, closeTh}, step: `ada mark {"claim":"$c1","state":"refuted"}`, want: "thread_closed"},
		{name: "read", setup: verified, step: `reader read {"claim":"$c1"}`, want: "verified"},
		{name: "read an unknown claim", step: `reader read {"claim":"cl_999"}`, want: "not_found"},
		{name: "read without a token", step: `nobody read {"claim":"cl_1"}`, want: "unauthenticated"},

		// the check order of § 9.
		{name: "order: a bad input before the right", setup: []string{"alice " + assertC}, step: `reader attest {"claim":"$c1"}`, want: "invalid_body"},
		{name: "order: the right before existence", step: `reader attest {"claim":"cl_999","evidence":P}`, want: "token_right_missing"},
		{name: "order: the lock before self_attestation", setup: []string{"alice " + assertC, closeTh}, step: `alice attest {"claim":"$c1","evidence":P}`, want: "thread_closed"},
		{name: "order: self_attestation before the transition", setup: refuted, step: `alice attest {"claim":"$c1","evidence":P}`, want: "self_attestation"},
		{name: "order: already_attested before the transition", setup: append(append([]string{}, supported...), `carol refute {"claim":"$c1","evidence":P,"body":"no"}`), step: `bob attest {"claim":"$c1","evidence":P}`, want: "already_attested"},
		{name: "order: authority before the transition", setup: refuted, step: `carol assert {"thread":"$th","statement":"s","evidence":P,"supersedes":["$c1"]}`, want: "thread_authority_missing"},
		{name: "order: the transition before the rate", rate: 1, setup: refuted, step: `carol attest {"claim":"$c1","evidence":P}`, want: "invalid_transition"},
		{name: "the write rate", rate: 1, setup: []string{"alice " + assertC}, step: `bob attest {"claim":"$c1","evidence":P}`, want: "rate_limited"},
	}
}

func TestClaimRules(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, c := range claimCases() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel() // each case has a database of its own
				db := storagetest.Open(t, db.Kind())
				runClaimCase(t, db, c)
			})
		}
	})
}

// runClaimCase builds the forum, runs the setup and checks the step.
func runClaimCase(t *testing.T, db *storage.DB, c claimCase) {
	limits := generous()
	if c.quorum > 0 {
		limits.VerifyQuorum = c.quorum
	}
	build := newService(t, db)
	svc := build
	if c.quorum > 0 {
		svc = newService(t, db, limits)
		build = svc
	}
	// spent counts each agent's writes while the forum is built: the write rate is the
	// database's, whichever service writes, so the service under test allows these too.
	spent := map[string]int{"alice": 1, "bob": 2}
	a := claimActors
	root := send(t, build, a["alice"], `{"kind":"ask","body":"Which port?"}`)
	ans := send(t, build, a["bob"], `{"kind":"answer","thread":"`+root.Thread.ID+`","body":"8080"}`)
	other := send(t, build, a["bob"], `{"kind":"ask","body":"Another question"}`)
	vars := []string{"$th", root.Thread.ID, "$msg", root.Message.ID, "$ans", ans.Message.ID,
		"$otherroot", other.Message.ID, "$other", other.Thread.ID, "P", proof}
	var claims []string
	expand := func(s string) string {
		pairs := append([]string{}, vars...)
		for i := len(claims) - 1; i >= 0; i-- {
			pairs = append(pairs, fmt.Sprintf("$c%d", i+1), claims[i])
		}
		return strings.NewReplacer(pairs...).Replace(s)
	}
	run := func(svc *protocol.Service, step string) (*protocol.ClaimView, error) {
		who, rest, _ := strings.Cut(step, " ")
		op, input, _ := strings.Cut(rest, " ")
		input = expand(input)
		if op == "send" {
			_, err := svc.Send(context.Background(), a[who], []byte(input))
			return nil, err
		}
		res, err := claimOp(svc, a[who], op, input)
		if err != nil {
			return nil, err
		}
		if op == "assert" {
			claims = append(claims, res.Claim.ID)
		}
		return res.Claim, nil
	}
	for _, step := range c.setup {
		if _, err := run(build, step); err != nil {
			t.Fatalf("setup %s: %v", step, err)
		}
		if who, rest, _ := strings.Cut(step, " "); !strings.HasPrefix(rest, "read ") {
			spent[who]++
		}
	}
	if c.rate > 0 { // the step's caller spends its writes on the service under test
		who, _, _ := strings.Cut(c.step, " ")
		limits.WritesPerMinute = c.rate + spent[who]
		svc = newService(t, db, limits)
		for range c.rate {
			if _, err := run(svc, who+` send {"kind":"note","thread":"$th","body":"spending"}`); err != nil {
				t.Fatalf("spending: %v", err)
			}
		}
	}
	before := census(t, svc)
	claim, err := run(svc, c.step)
	if protocol.ClaimState(c.want) == "" || !protocol.IsClaimState(protocol.ClaimState(c.want)) {
		wantRefused(t, err, protocol.Reason(c.want))
		if after := census(t, svc); after != before {
			t.Errorf("a refused step wrote: %+v, then %+v", before, after)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", c.step, err)
	}
	if claim.State != protocol.ClaimState(c.want) || claim.Certainty != c.want {
		t.Errorf("claim %s is %s (certainty %s), want %s", claim.ID, claim.State, claim.Certainty, c.want)
	}
	checkClaimShape(t, svc, claim)
}

// checkClaimShape checks what every accepted claim reads like: read alone and within its
// thread alike, with its supersessions on both sides.
func checkClaimShape(t *testing.T, svc *protocol.Service, claim *protocol.ClaimView) {
	t.Helper()
	read := mustClaim(t, svc, reader, "read", `{"claim":"`+claim.ID+`"}`)
	if jsonOf(read) != jsonOf(claim) {
		t.Errorf("read %s:\n%s\nthe operation returned\n%s", claim.ID, jsonOf(read), jsonOf(claim))
	}
	inThread := false
	for _, c := range readThread(t, svc, claim.Thread).Claims {
		if c.ID == claim.ID {
			inThread = jsonOf(c) == jsonOf(claim)
		}
	}
	if !inThread {
		t.Errorf("claim %s is not in read_thread of %s as read alone", claim.ID, claim.Thread)
	}
	for _, old := range claim.Supersedes {
		o := mustClaim(t, svc, reader, "read", `{"claim":"`+old+`"}`)
		if o.State != protocol.ClaimSuperseded || o.SupersededBy == nil || *o.SupersededBy != claim.ID || o.Certainty != "superseded" {
			t.Errorf("superseded %s reads %s, superseded_by %v", old, o.State, o.SupersededBy)
		}
	}
}
