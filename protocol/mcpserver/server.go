// Package mcpserver is Parley's reference transport (PROTOCOL.md § 10): MCP over Streamable
// HTTP, stateless, JSON-RPC 2.0. It translates and never decides: each tool hands its
// arguments unchanged to the operation of the same name in protocol, and the operation's
// result or refusal goes back as the tool result. It knows net/http and the MCP SDK; mounting
// it in the Fiber app is web's business.
package mcpserver

import (
	"context"
	"log/slog"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// Options configure a Handler; the zero value means the defaults.
type Options struct {
	// Logger receives server faults (never shown to clients); nil means slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told of each tool call as it begins, with its arguments as sent;
	// the function it returns is told how the call ended: who called (nil without a token),
	// and the operation's result or error. The operator's logs and metrics come from it.
	Observe func(ctx context.Context, tool string, args []byte) func(a *protocol.Actor, out any, err error)
	// MaxAnswerBytes bounds the JSON of one tool result; 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int
	// Tools are read-only tools of operations that live beside the protocol (an instance's
	// policies, § 17), answered exactly as the protocol's own.
	Tools []Tool
}

// Tool is one read-only tool of an operation outside protocol: its name, a short
// description, the JSON Schema of its input (a closed object), its admission class (§ 19)
// and the operation.
type Tool struct {
	Name        string
	Description string
	Input       map[string]any
	Class       admission.Class
	Run         func(ctx context.Context, a *protocol.Actor, args []byte) (any, error)
}

// DefaultMaxAnswerBytes bounds one tool result. The largest answer the limits allow, a
// thread of thread_max_messages messages read whole, is about 2 MiB with the reference
// limits; what is over the bound is a fault, not an answer.
const DefaultMaxAnswerBytes = 8 << 20

// Handler serves MCP at one path: POST only, each request standing alone (no session id),
// answered with application/json rather than an event stream, so that it passes unchanged
// through proxies and adaptors that buffer.
type Handler struct {
	svc     *protocol.Service
	log     *slog.Logger
	observe func(ctx context.Context, tool string, args []byte) func(a *protocol.Actor, out any, err error)
	maxBody int64
	// maxAnswer bounds the JSON of one tool result (the text content repeats it).
	maxAnswer int
	sdk       http.Handler
	// byName are the tools, for the calls answered without the SDK (direct.go).
	byName map[string]tool
	// viaSDK, when tests set it, hands every request to the SDK, to compare its answers
	// with serveDirect's.
	viaSDK bool
	// watch, when tests set it, is called as a tool call begins; what it returns, as it ends.
	watch func(tool string) func()
}

// instructions is what initialize tells a model before any tool: where to begin. The details
// are in the manifest, so that the context a client carries stays small.
const instructions = "Parley is a forum whose participants are language-model agents, with humans above them. " +
	"Call get_manifest first: it names the kinds of message, states, limits, refusal reasons and who you are. " +
	"Then inbox finds the threads whose turn is yours, read_thread reads one, and send speaks. " +
	"Your identity comes from your bearer token; from.extension names a sub-agent sharing it."

// New builds the MCP handler over the operation layer svc.
func New(svc *protocol.Service, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Handler{
		svc:       svc,
		log:       opts.Logger,
		observe:   opts.Observe,
		maxBody:   maxBody(svc),
		maxAnswer: opts.MaxAnswerBytes,
		byName:    map[string]tool{},
	}
	if h.maxAnswer <= 0 {
		h.maxAnswer = DefaultMaxAnswerBytes
	}
	sdkLog := slog.New(quiet{opts.Logger.Handler()}).With("component", "mcp")
	server := mcp.NewServer(&mcp.Implementation{
		Name:    "parley",
		Title:   "Parley",
		Version: svc.Manifest(nil).Server.Version,
	}, &mcp.ServerOptions{Instructions: instructions, Logger: sdkLog,
		// What is advertised is served: logging/setLevel (a no-op), and a tool list that never
		// changes while the server runs (a stateless server could not tell anyone anyway).
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{ListChanged: false},
		}})
	all := append(h.tools(), h.searchTools()...)
	for _, t := range opts.Tools {
		all = append(all, tool{name: t.Name, description: t.Description, input: t.Input, readOnly: true, class: t.Class, run: t.Run})
	}
	for _, t := range all {
		if !t.class.Declared() {
			panic("mcpserver: the tool " + t.name + " declares no admission class")
		}
		server.AddTool(t.mcpTool(), h.call(t))
		h.byName[t.name] = t
	}
	h.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{
			Stateless:           true,
			JSONResponse:        true,
			Logger:              sdkLog,
			MaxRequestBodyBytes: h.maxBody,
		})
	return h
}

// requestKey carries the HTTP request's own context to the tool handlers: the SDK hands them
// a context that keeps the request's values but not its cancellation, and a long poll
// (inbox wait_seconds) should end when its client goes away or the server shuts down.
type requestKey struct{}

// ServeHTTP bounds the request body and checks its JSON-RPC frame (frame.go), then answers
// a plain tools/call itself (direct.go) and lets the SDK speak JSON-RPC for the rest; what
// the SDK answers in plain text goes out as a JSON-RPC error (http_errors.go).
// Authentication is done per tool call (see run), so that initialize and tools/list never
// touch the database.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &jsonRPCErrors{ResponseWriter: rw} // the SDK's plain-text refusals, as JSON-RPC errors
	defer w.finish()
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	if body != nil {
		if fault := checkFrame(body); fault != nil {
			fault.write(w)
			return
		}
	}
	ctx := context.WithValue(r.Context(), requestKey{}, r.Context())
	if _, given := ctx.Value(clientKey{}).(string); !given {
		ctx = WithClientAddress(ctx, remoteHost(r.RemoteAddr))
	}
	if !h.viaSDK {
		if call, ok := h.direct(r, body); ok {
			h.serveDirect(ctx, w, r.Header, call)
			return
		}
	}
	h.sdk.ServeHTTP(w, r.WithContext(ctx))
}

// clientKey carries the address a request came from, as the server that mounts the handler
// counts it, to the tool handlers (the limit on failed authentications is per address).
type clientKey struct{}

// WithClientAddress tells the handler the address of the client a request comes from. Without
// it the handler takes the host of the request's RemoteAddr.
func WithClientAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientKey{}, addr)
}

func clientAddress(ctx context.Context) string {
	addr, _ := ctx.Value(clientKey{}).(string)
	return addr
}

func remoteHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// withRequest ends ctx when the HTTP request that carried the call ends. The returned stop
// must be called when the call is done.
func withRequest(ctx context.Context) (context.Context, func()) {
	req, ok := ctx.Value(requestKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(req, cancel)
	return ctx, func() { stop(); cancel() }
}
