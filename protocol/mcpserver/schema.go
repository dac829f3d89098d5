package mcpserver

import "fmt"

// JSON Schemas for the tools, built as plain maps: they are published, never used to
// validate. Input is decided by the operation's own strict decoder, so that an unknown or
// missing field is answered as invalid_body (§ 10), and the schemas only tell a client what
// that decoder accepts. They stay terse on purpose: every byte is in each client's context,
// and the manifest carries the details.

type schema = map[string]any

// object is a closed object: additionalProperties false, as § 10 asks.
func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(props) == 0 {
		delete(s, "properties")
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(description string) schema { return described(schema{"type": "string"}, description) }

// described adds a description when there is one to say.
func described(s schema, description string) schema {
	if description != "" {
		s["description"] = description
	}
	return s
}

// integer has no maximum: the operations clamp a count above its limit (§ 8) rather than
// refuse it, and a schema must not forbid what the server accepts.
func integer(description string, min int) schema {
	return described(schema{"type": "integer", "minimum": min}, description)
}

func countNote(max int) string { return fmt.Sprintf("max %d, clamped", max) }

func enum(description string, values []string) schema {
	return described(schema{"type": "string", "enum": values}, description)
}

// anyObject is a JSON object of any shape, for a list whose items a description names.
var anyObject = schema{"type": "object"}
