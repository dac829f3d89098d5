package graph

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/goccy/go-graphviz"
)

// A drawing process is this program, started again with drawingProcessEnv set: it reads one
// graph in DOT from its standard input, writes it drawn as SVG to its standard output, and
// exits. The switch is made when this package is initialised, before anything else of the
// program runs, so that every program that draws — parley itself, its tests — can be a
// drawing process without a word in its main function.
const (
	drawingProcessEnv = "PARLEY_DRAWING_PROCESS"
	drawingProcessSVG = "svg-1" // the only kind of drawing, and the version of this exchange
)

// What a drawing process may read and write: the DOT of the largest graph the pages draw is
// well under a megabyte, its SVG a few.
const (
	maxDOTBytes = 16 << 20
	maxSVGBytes = 64 << 20
	maxErrBytes = 4 << 10
)

// drawingProcessMemory is the Go memory limit (GOMEMLIMIT) a drawing process runs under: the
// memory one drawing may hold (the admission gate's Drawing class is sized for 256 MiB). A
// soft limit: the process collects its garbage (the WebAssembly memory's old copies as it
// grows) sooner, it is not killed.
const drawingProcessMemory = 192 << 20

func init() {
	if os.Getenv(drawingProcessEnv) != drawingProcessSVG {
		return
	}
	os.Exit(serveDrawing(os.Stdin, os.Stdout, os.Stderr))
}

// serveDrawing is a drawing process's whole life: DOT in, SVG out, the exit status.
func serveDrawing(in io.Reader, out, errs io.Writer) int {
	dot, err := io.ReadAll(io.LimitReader(in, maxDOTBytes+1))
	if err == nil && len(dot) > maxDOTBytes {
		err = fmt.Errorf("the DOT is larger than %d bytes", maxDOTBytes)
	}
	if err == nil {
		w := bufio.NewWriter(out)
		if err = drawHere(dot, w); err == nil {
			err = w.Flush()
		}
	}
	if err != nil {
		fmt.Fprintln(errs, err)
		return 1
	}
	return 0
}

// drawHere draws dot as SVG with this process's Graphviz.
func drawHere(dot []byte, w io.Writer) error {
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return fmt.Errorf("graphviz cannot start: %w", err)
	}
	defer gv.Close()
	parsed, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("graphviz cannot read the DOT of the graph: %w", err)
	}
	defer parsed.Close()
	if err := gv.Render(ctx, parsed, graphviz.SVG, w); err != nil {
		return fmt.Errorf("graphviz cannot lay the graph out: %w", err)
	}
	return nil
}

// draw draws dot as SVG in a drawing process of its own, killed when ctx ends (the error is
// then ErrAbandoned). peak is the most memory the process held, in bytes (0 where the
// system does not say).
func (r *Renderer) draw(ctx context.Context, dot []byte) (svg []byte, peak int64, err error) {
	if ctx.Err() != nil {
		return nil, 0, abandoned(ctx)
	}
	self, err := thisProgram()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(),
		drawingProcessEnv+"="+drawingProcessSVG,
		"GOMEMLIMIT="+strconv.Itoa(drawingProcessMemory),
		"GOMAXPROCS=1", // Graphviz draws on one thread
	)
	cmd.Stdin = bytes.NewReader(dot)
	stdout := &boundedBuffer{max: maxSVGBytes}
	stderr := &boundedBuffer{max: maxErrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second // the pipes of a killed process are not waited for longer
	withDrawingProcessAttributes(cmd)
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return nil, 0, abandoned(ctx)
		}
		return nil, 0, fmt.Errorf("the drawing process cannot start: %w", err)
	}
	if r.Started != nil {
		r.Started(cmd.Process)
	}
	err = cmd.Wait()
	peak = peakMemory(cmd.ProcessState)
	switch {
	case ctx.Err() != nil:
		return nil, peak, abandoned(ctx)
	case stdout.over:
		return nil, peak, fmt.Errorf("the drawing is larger than %d bytes", maxSVGBytes)
	case err != nil:
		return nil, peak, fmt.Errorf("the drawing process failed (%v): %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), peak, nil
}

// boundedBuffer keeps at most max bytes of what is written to it, and says when more came.
type boundedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return 0, errors.New("too much output")
	}
	return b.Buffer.Write(p)
}
