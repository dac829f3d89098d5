package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// operation is one operation of the protocol layer: the caller (nil without a token) and the
// tool's arguments as raw JSON, exactly what the HTTP binding passes from its body.
type operation func(ctx context.Context, a *protocol.Actor, args []byte) (any, error)

func op[T any](f func(context.Context, *protocol.Actor, []byte) (T, error)) operation {
	return func(ctx context.Context, a *protocol.Actor, args []byte) (any, error) { return f(ctx, a, args) }
}

// tool is one row of § 10's table of tools.
type tool struct {
	name        string
	description string
	input       schema
	readOnly    bool
	waits       bool // may wait for news (the inbox's long poll)
	// class is the call's admission class (§ 19, protocol/admission): its slot is taken
	// before the call runs (run), Read or Write here; Listen takes none.
	class admission.Class
	// checkSize is the first check of § 9 on the arguments; nil means request_max_bytes
	// (artifact_put takes an artifact's base64 instead).
	checkSize func(n int) error
	run       operation
}

// tools is § 10's table, plus mark (§ 5 names it an operation, HTTP has its route). The
// descriptions say what each tool is for and point to the manifest for the rules, so that
// tools/list stays small.
func (h *Handler) tools() []tool {
	s, l := h.svc, h.svc.Limits()
	thread := str("")
	since := schema{"type": "string"} // a returned cursor; the descriptions say to pass it back
	room := schema{"type": "string"}  // rm_<n> or a name (the manifest's profile rooms)
	return append([]tool{{
		name:        "get_manifest",
		description: "The rules (kinds, states, transitions, limits, reasons) and who you are. Read it first.",
		input:       object(nil),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.GetManifest),
	}, {
		name: "send",
		description: "Send one message; an ask without thread opens one. " +
			"State acts need authority (creator, lock, human); " +
			"no reply to your own message (self_reply). " +
			"Refusals: isError {reason, message, status}. " +
			"Retry with the same idempotency_key: written once.",
		input: object(schema{
			"kind":   enum("", kindNames()),
			"thread": str("omit for an ask that opens one"),
			"parent": str("msg_<n>; default per kind"),
			"body":   schema{"type": "string", "minLength": 1, "maxLength": l.BodyMaxChars},
			"from": object(schema{
				"extension": str(""),
			}),
			"provenance": object(schema{"model": str(""), "client": str("")}),
			"room":       room,
		}, "kind", "body"),
		class: admission.Write,
		run:   op(s.Send),
	}, {
		name:        "read_thread",
		description: "A thread: state, whose turn (awaiting), messages as a tree, claims. Pass next_cursor as cursor.",
		input:       object(schema{"thread": thread, "cursor": since}, "thread"),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.ReadThread),
	}, {
		name:        "list_threads",
		description: "Threads, newest first. While more, pass cursor back.",
		input: object(schema{
			"state":  enum("", stateNames()),
			"order":  enum("", []string{protocol.OrderActivity, protocol.OrderAttention}),
			"cursor": since,
			"limit":  integer(countNote(l.ListMaxItems), 1),
			"room":   room,
		}),
		readOnly: true,
		class:    admission.Read,
		run:      op(s.ListThreads),
	}, {
		name:        "read_events",
		description: "A thread's events, oldest first. Pass cursor back as since.",
		input:       object(schema{"thread": thread, "since": since}, "thread"),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.ReadEvents),
	}, {
		name: "inbox",
		description: "Threads awaiting you, with the message to reply to. Pass cursor back as since; " +
			"wait_seconds long-polls.",
		input: object(schema{
			"since":        since,
			"extension":    str("only this sub-agent's turns"),
			"limit":        integer(countNote(l.InboxMaxItems), 1),
			"wait_seconds": integer(countNote(l.InboxMaxWaitSeconds), 0),
			"room":         room,
		}),
		readOnly: true,
		waits:    true,
		class:    admission.Listen,
		run:      op(s.Inbox),
	}, {
		name:        "confirm",
		description: "Confirm a thread's proposed state (lock or human).",
		input:       object(schema{"thread": thread}, "thread"),
		class:       admission.Write,
		run:         op(s.Confirm),
	}, {
		name:        "mark",
		description: "Re-mark a thread with any state, confirmed. Humans only.",
		input:       object(schema{"thread": thread, "state": enum("", stateNames())}, "thread", "state"),
		class:       admission.Write,
		run:         op(s.Mark),
	}, {
		name:        "message_hide",
		description: "Hide a message from agents (lock or human).",
		// public: the agents read the reason too (§ 18); the name says it, tools/list is tight.
		input: object(schema{"message": str(""), "reason": str(""), "public": schema{"type": "boolean"}}, "message", "reason"),
		class: admission.Write,
		run:   op(s.Hide),
	}, {
		name:        "message_unhide",
		description: "Unhide a message for agents (lock or human).",
		input:       object(schema{"message": str("")}, "message"),
		class:       admission.Write,
		run:         op(s.Unhide),
	}, {
		name:        "list_rooms",
		description: "The rooms you reach, with thread counts.",
		input:       object(nil),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.ListRooms),
	}, {
		name:        "thread_move",
		description: "Move a thread into another room; humans only.",
		input:       object(schema{"thread": thread, "room": room}, "thread", "room"),
		class:       admission.Write,
		run:         op(s.MoveThread),
	}}, append(h.claimTools(), h.evidenceTools()...)...)
}

// mcpTool is the tool as tools/list announces it.
func (t tool) mcpTool() *mcp.Tool {
	no := false
	ann := &mcp.ToolAnnotations{ReadOnlyHint: t.readOnly, OpenWorldHint: &no}
	if !t.readOnly {
		ann.DestructiveHint = &no // messages and events are appended, never overwritten
	}
	input := copied(t.input)
	description := t.description
	if !t.readOnly {
		input = withKey(input)
		description += retryNote(description)
	}
	// No output schema: every result is one JSON object (§ 10), and a schema that said only
	// that cost 33 bytes a tool of every client's context (TestToolsListIsSmall).
	return &mcp.Tool{Name: t.name, Description: description, InputSchema: input, Annotations: ann}
}

func kindNames() []string {
	names := make([]string, 0, len(protocol.Kinds))
	for _, k := range protocol.Kinds {
		names = append(names, string(k.Kind))
	}
	return names
}

func stateNames() []string {
	names := []string{}
	for _, s := range protocol.AllStates() {
		names = append(names, string(s))
	}
	return names
}

// copied is a copy of an input schema with its own properties, for withKey to add to. The
// optional "parley": "1" that every operation's input takes (§ 2, § 12) is not announced:
// a client never needs to send it, and tools/list is in every client's context.
func copied(input schema) schema {
	props, _ := input["properties"].(schema)
	with := schema{}
	for k, v := range props {
		with[k] = v
	}
	out := schema{}
	for k, v := range input {
		out[k] = v
	}
	out["properties"] = with
	return out
}

// withKey adds the idempotency key that every write's input takes (§ 15).
func withKey(input schema) schema {
	input["properties"].(schema)[protocol.IdempotencyKeyArgument] = idempotencyKey
	return input
}

// idempotencyKey is the schema of the argument idempotency_key, kept to its type: it is on
// every write tool, and each one's description says how to retry with it (retryNote).
var idempotencyKey = schema{"type": "string"}

// retryNote is what a write tool's description adds to say how to retry (§ 15): send says it
// in full, once; the other write tools in a few bytes, as tools/list is in every client's
// context.
func retryNote(description string) string {
	if strings.Contains(description, protocol.IdempotencyKeyArgument) {
		return ""
	}
	return " Retry: same " + protocol.IdempotencyKeyArgument + "."
}
