//go:build resources

package resources

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/static"
	"github.com/parleyforum/parley/web"
)

// checkEveryRouteHasARow compares the matrix's rows with what the server serves: every route
// the app registers (with every method its Allow header names, where one path answers the
// methods it does not serve with 405), every file tree it mounts, and every tool MCP lists.
// A new route or tool without a row fails here, and so does a row of a route that is gone.
func checkEveryRouteHasARow(t *testing.T, s *server, f *forum, rows []row) {
	t.Helper()
	app := web.New(web.Options{DB: f.db, Static: static.FS(), PublicRead: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	registered := map[string]map[string]bool{} // path → methods
	var paths []string
	for _, r := range app.GetRoutes(true) {
		if registered[r.Path] == nil {
			registered[r.Path] = map[string]bool{}
			paths = append(paths, r.Path)
		}
		registered[r.Path][r.Method] = true
	}
	want := map[string]bool{}
	for _, p := range paths {
		methods := registered[p]
		if methods[http.MethodTrace] {
			// Every method is registered on this path, those it does not serve answering 405
			// with the ones it does in Allow: the server says which.
			methods = allowed(t, s, p)
		}
		for m := range methods {
			if m != http.MethodHead {
				want[m+" "+p] = true
			}
		}
	}
	for _, r := range app.GetRoutes(false) { // a file tree mounted with Use
		if r.Path != "/" && registered[r.Path] == nil {
			want["GET "+r.Path+"/*"] = true
		}
	}
	for _, tool := range listTools(t, s) {
		want["tool "+tool] = true
	}

	have := map[string]bool{}
	for _, r := range rows {
		have[r.route] = true
		if !want[r.route] {
			t.Errorf("the matrix has a row for %s, which the server does not serve", r.route)
		}
	}
	var missing []string
	for route := range want {
		if !have[route] {
			missing = append(missing, route)
		}
	}
	sort.Strings(missing)
	for _, route := range missing {
		t.Errorf("%s has no row in the resource matrix (tests/resources/rows_test.go)", route)
	}
}

var pathParam = regexp.MustCompile(`:[a-z]+`)

// allowed is the methods the server serves on path, as its 405's Allow header names them.
func allowed(t *testing.T, s *server, path string) map[string]bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodTrace, s.base+pathParam.ReplaceAllString(path, "1"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("TRACE %s: %v", path, err)
	}
	resp.Body.Close()
	allow := resp.Header.Get("Allow")
	if resp.StatusCode != http.StatusMethodNotAllowed || allow == "" {
		t.Fatalf("TRACE %s answers %d with Allow %q, not 405 with the methods it serves", path, resp.StatusCode, allow)
	}
	out := map[string]bool{}
	for _, m := range strings.Split(allow, ",") {
		out[strings.TrimSpace(m)] = true
	}
	return out
}

// listTools is the names of the tools MCP lists.
func listTools(t *testing.T, s *server) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Result.Tools) == 0 {
		t.Fatalf("tools/list: %d %v", resp.StatusCode, err)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}
