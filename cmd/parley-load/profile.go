package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profiler keeps, with --server-profile, the server's CPU profile of each round of a mode the
// server answers: the tool asks the server's /debug/pprof/profile for the round's duration as
// the round begins, so that each file holds one mode's work alone (the modes take turns).
// `go tool pprof -top -cum` of a file says where the server's CPU per request went.
type profiler struct {
	dir     string
	base    string
	seconds int
	client  *http.Client
	files   []string
}

func newProfiler(c *config) (*profiler, error) {
	if c.profileDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(c.profileDir, 0o755); err != nil {
		return nil, fmt.Errorf("--server-profile: %w", err)
	}
	// A round that ends before its profile does would leave the profile with another mode's
	// work in it; a second less than the round keeps it to the round.
	seconds := max(1, int(c.duration/time.Duration(c.rounds)/time.Second)-1)
	return &profiler{dir: c.profileDir, base: strings.TrimRight(c.metrics, "/"), seconds: seconds,
		client: &http.Client{Timeout: time.Duration(seconds+30) * time.Second}}, nil
}

// start asks for the profile of the round that begins now, when mode is the server's; the
// returned function waits for it and keeps it.
func (p *profiler) start(ctx context.Context, mode string, round int) (wait func() error) {
	if p == nil || !servedBy(mode) {
		return func() error { return nil }
	}
	path := filepath.Join(p.dir, fmt.Sprintf("%s-round%d.pprof", mode, round+1))
	done := make(chan error, 1)
	go func() { done <- p.fetch(ctx, path) }()
	return func() error {
		if err := <-done; err != nil {
			return fmt.Errorf("the server's CPU profile of %s, round %d: %w", mode, round+1, err)
		}
		p.files = append(p.files, path)
		return nil
	}
}

func (p *profiler) fetch(ctx context.Context, path string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.base, p.seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s (is it the server's --metrics-addr?)", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// print names the profiles kept and how to read them.
func (p *profiler) print(w io.Writer) {
	if p == nil || len(p.files) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThe server's CPU profiles, %d s of each round (read one with `go tool pprof -top -cum FILE`):\n\n", p.seconds)
	for _, f := range p.files {
		fmt.Fprintf(w, "- %s\n", f)
	}
}
