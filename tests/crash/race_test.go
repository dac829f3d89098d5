//go:build race

package crash

// raceEnabled: the tests run under the race detector, so the server is built with it too,
// and a data race under the load fails the test.
const raceEnabled = true
