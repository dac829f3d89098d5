package mcpserver_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/protocol/mcpserver"
)

// § 19: every tool declares its admission class where it is listed, as every HTTP route
// does; a tool without one is refused when the handler is built.
func TestEveryToolDeclaresItsClass(t *testing.T) {
	svc := protocol.New(nil, protocol.Options{})
	h := mcpserver.New(svc, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	classes := mcpserver.ToolClasses(h)
	if len(classes) < 20 {
		t.Fatalf("only %d tools", len(classes))
	}
	for name, class := range classes {
		if !class.Declared() {
			t.Errorf("tool %s declares no admission class", name)
		}
	}
	for name, want := range map[string]admission.Class{"inbox": admission.Listen, "send": admission.Write, "read_thread": admission.Read} {
		if classes[name] != want {
			t.Errorf("tool %s is admitted as %s, want %s", name, classes[name], want)
		}
	}

	defer func() {
		if recover() == nil {
			t.Error("a tool without a class was taken")
		}
	}()
	mcpserver.New(svc, mcpserver.Options{Logger: slog.New(slog.DiscardHandler), Tools: []mcpserver.Tool{{
		Name: "classless", Input: map[string]any{"type": "object"},
		Run: func(context.Context, *protocol.Actor, []byte) (any, error) { return nil, nil },
	}}})
}
