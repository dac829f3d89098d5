package web

import (
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// netHTTP gives the handler the listener's address in its context, carries status, headers
// and body back, and ends the handler's context when the server shuts down.
func TestNetHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, ended := make(chan struct{}), make(chan struct{})
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.All("/plain", netHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if local == nil || local.String() != ln.Addr().String() {
			t.Errorf("local address in the context: %v, want %s", local, ln.Addr())
		}
		w.Header().Set("X-Seen", r.Method+" "+r.Host)
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	})))
	app.Get("/wait", netHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // without the shutdown reaching it, this would wait for ever
		close(ended)
	})))
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Post(base+"/plain", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(body) != "short and stout" || resp.Header.Get("X-Seen") != "POST "+ln.Addr().String() {
		t.Errorf("answer: %d %v %q", resp.StatusCode, resp.Header, body)
	}

	go func() {
		if resp, err := http.Get(base + "/wait"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	<-ended
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
