//go:build !race

package graph

// maxDrawingPeak is the most memory the drawing of the largest graph the pages draw may hold:
// measured at about 60 MiB (TestLargestDrawingIsBounded logs it), bounded well under the
// 256 MiB the admission gate's Drawing class is sized for.
const maxDrawingPeak = 128 << 20
