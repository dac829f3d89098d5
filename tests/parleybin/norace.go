//go:build !race

package parleybin

const raceEnabled = false
