//go:build race

package main

// raceEnabled: the tests run under the race detector, so the binary under test is built
// with it too, and a data race in the server fails the test that provoked it.
const raceEnabled = true
