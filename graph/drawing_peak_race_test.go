//go:build race

package graph

// maxDrawingPeak under the race detector, whose drawing process (this test binary, built
// with -race) keeps shadow memory beside every byte: what the Drawing class is sized for.
const maxDrawingPeak = 256 << 20
