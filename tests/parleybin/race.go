//go:build race

package parleybin

// raceEnabled: the tests run under the race detector, so the command is built with it too.
const raceEnabled = true
