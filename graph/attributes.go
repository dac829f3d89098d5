package graph

import (
	"encoding/json"
	"strconv"
	"time"
)

// nodeAttribute is one attribute of a node as the exports write it: its GraphML key id, its
// name (GraphML's attr.name and DOT's attribute), its GraphML type, and how a node's value is
// found ("" leaves it out for that node). GraphML and DOT both write every attribute of this
// one table, so that neither format carries less than the other.
type nodeAttribute struct {
	id, name, typ string
	of            func(*Node) string
}

var nodeAttributes = []nodeAttribute{
	{"n_type", "type", "string", func(n *Node) string { return n.Type }},
	{"n_thread", "thread", "string", func(n *Node) string { return n.Thread }},
	{"n_statement", "statement", "string", func(n *Node) string { return n.Statement }},
	{"n_state", "state", "string", func(n *Node) string { return n.State }},
	{"n_certainty", "certainty", "string", func(n *Node) string { return n.Certainty }},
	{"n_expired", "expired", "boolean", func(n *Node) string {
		if n.Expired == nil {
			return ""
		}
		return strconv.FormatBool(*n.Expired)
	}},
	{"n_grounded", "grounded", "string", func(n *Node) string { return string(n.Grounded) }},
	{"n_identity", "identity", "string", func(n *Node) string {
		if n.AssertedBy != "" {
			return n.AssertedBy
		}
		return n.By
	}},
	{"n_kind", "kind", "string", func(n *Node) string { return n.Kind }},
	{"n_text", "text", "string", func(n *Node) string { return n.Text }},
	{"n_evidence", "evidence", "string", func(n *Node) string {
		if len(n.Evidence) == 0 {
			return ""
		}
		b, _ := json.Marshal(n.Evidence)
		return string(b)
	}},
	{"n_time", "time", "string", func(n *Node) string { return n.At.UTC().Format(time.RFC3339Nano) }},
	{"n_signature", "legacy_signature", "string", func(n *Node) string {
		if n.Signature == nil {
			return ""
		}
		b, _ := json.Marshal(n.Signature)
		return string(b)
	}},
	{"n_document", "document", "string", func(n *Node) string { return string(n.Document) }},
	{"n_model", "provenance_model", "string", (*Node).ProvenanceModel},
	{"n_client", "provenance_client", "string", (*Node).ProvenanceClient},
	{"n_origin_realm", "origin_realm", "string", (*Node).OriginRealm},
	{"n_origin_claim", "origin_claim", "string", (*Node).OriginClaim},
	{"n_origin_thread", "origin_thread", "string", (*Node).OriginThread},
}
